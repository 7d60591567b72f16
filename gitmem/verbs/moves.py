"""`gitmem mv` and `gitmem mv-topic`: an entry to another topic file, a topic file to a new name.

An Id is the entry's identity (links, other machines and old commits name the entry by it), so
both keep every Id and every field as it is, also when the entry lands in another layer of its
scope: the Id then still names the layer it was given in, and its number stays taken there.
Each is one commit, under the store lock.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from gitmem.errors import ConflictError, InvalidInputError, NotFoundError
from gitmem.format import layers as L
from gitmem.format.entry import TopicFile
from gitmem.format.markdown import conflict_marker_lines
from gitmem.format.renames import follow_rename
from gitmem.store.paths import topic_slug
from gitmem.store.store import Store
from gitmem.verbs.base import load_or_new_topic
from gitmem.verbs.blocks import open_held, save_held


@dataclass(frozen=True)
class MoveResult:
    """What a move did: the Ids it moved, from where to where, and the commit."""

    ids: list[str]
    source: str
    target: str
    commit: str | None

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def _topic_layer(layer: str) -> str:
    spec = L.layer_spec(layer)
    if spec.shape != "topics":
        raise InvalidInputError(f"layer {layer!r} has no topic files (it is one file): "
                                "entries move between topic files only")
    return layer


def move_entry(store: Store, entry_id: str, topic: str, layer: str | None = None) -> MoveResult:
    """Move one entry to topic file `topic` (created when missing) of `layer`, default its own
    layer, in the entry's scope; the Id and every field stay as they are."""
    slug = topic_slug(topic)
    with store.writing("mv") as txn:
        found = store.locate(entry_id)
        where = L.classify_path(found.path)
        key = where.scope
        target_layer = _topic_layer(layer or where.layer)
        L.check_layer_scope(target_layer, key)
        relpath = L.topic_path(key, target_layer, slug)
        if relpath == found.path:
            raise InvalidInputError(f"{entry_id} is already in {relpath}; nothing was written")
        source = open_held(store, found.path)
        if source is None:
            raise NotFoundError(f"no entry with Id {entry_id}")
        index = source.document.find(entry_id)
        if index is None:
            raise NotFoundError(f"no entry with Id {entry_id}")
        entry = source.document.entries[index]
        source.refuse_if_held(entry, "mv")
        target = open_held(store, relpath)
        if target is None:
            document = load_or_new_topic(store, relpath, key, target_layer, topic.strip())
            document.entries.append(entry)
            store.write_topic(txn, relpath, document)
        else:
            target.document.entries.append(entry)
            save_held(store, txn, target)
        del source.document.entries[index]
        if _only_generated(source.document) and not source.held.saved:
            store.remove_file(txn, found.path)  # nothing left in it that a person wrote
        else:
            save_held(store, txn, source)
        txn.message = f"mv: {entry_id} ({_short(found.path)} -> {_short(relpath)})"
    return MoveResult([entry_id], found.path, relpath, store.git.head_oid())


def _short(relpath: str) -> str:
    role = L.classify_path(relpath)
    return f"{role.layer}/{role.slug}"


def topic_file(store: Store, name: str, scope: str, workspace: str | None) -> tuple[str, str]:
    """(store path, topic name) of OLD or NEW: a store path (`global/semantic/db.md`,
    `workspaces/proj/procedural/deploy`) or `layer/topic` in the chosen scope (workspace-only
    layers: the workspace)."""
    text = name.strip().replace("\\", "/")
    if text.startswith((f"{L.GLOBAL}/", "workspaces/")):
        relpath = text if text.endswith(".md") else f"{text}.md"
        role = L.classify_path(relpath)
        if role.kind != "topic":
            raise InvalidInputError(f"{name!r} is not a topic file path "
                                    "(e.g. global/semantic/db.md, or semantic/db)")
        return relpath, role.slug
    layer, sep, topic = text.partition("/")
    if not sep or not topic:
        raise InvalidInputError(f"{name!r}: name a topic as LAYER/TOPIC (e.g. semantic/db) "
                                "or by its path (e.g. global/semantic/db.md)")
    if layer not in L.LAYERS:
        raise InvalidInputError(f"{name!r}: unknown layer {layer!r} (use {', '.join(L.TOPIC_LAYERS)})")
    _topic_layer(layer)
    topic = topic[:-3] if topic.endswith(".md") else topic
    key = store.scope_for(scope if L.layer_spec(layer).global_ok else "workspace", workspace)
    L.check_layer_scope(layer, key)
    return L.topic_path(key, layer, topic_slug(topic)), topic


def move_topic(store: Store, old: str, new: str, *, scope: str = "global",
               workspace: str | None = None) -> MoveResult:
    """Rename topic file OLD to NEW (same scope, any topic layer), one commit; NEW must not
    exist. Its title and layer in the frontmatter follow; every entry keeps its Id."""
    with store.writing("mv-topic") as txn:
        source, _ = topic_file(store, old, scope, workspace)
        target, title = topic_file(store, new, scope, workspace)
        before, after = L.classify_path(source), L.classify_path(target)
        if source == target:
            raise InvalidInputError(f"{source} and {new!r} are the same file; nothing was written")
        if before.scope != after.scope:
            raise InvalidInputError(f"{target} is in another scope than {source}: a topic moves "
                                    "within its scope; nothing was written")
        if store.path(target).exists() or store.path(target).is_symlink():
            raise InvalidInputError(f"{target} already exists; nothing was written "
                                    "(move entries into it with `gitmem mv ID --topic T`)")
        edit = open_held(store, source)
        if edit is None:
            raise NotFoundError(f"no topic file {source}")
        if conflict_marker_lines(edit.text):
            raise ConflictError(f"`gitmem mv-topic` refused: {source} holds a conflict; settle it "
                                "first (`gitmem conflicts` lists them); nothing was written")
        document = edit.document
        follow_rename(document, before, after, title)
        store.write_file(txn, target, edit.render())
        store.remove_file(txn, source)
        txn.message = f"mv-topic: {_short(source)} -> {_short(target)}"
        ids = [e.id for e in document.entries if e.id]
    return MoveResult(ids, source, target, store.git.head_oid())


def _only_generated(document: TopicFile) -> bool:
    """No entry left, and nothing before the entries but the title gitmem wrote."""
    lines = [line for line in document.preamble.splitlines() if line.strip()]
    return not document.entries and all(line.startswith("# ") for line in lines) and len(lines) <= 1
