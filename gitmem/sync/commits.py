"""Merging two commits of a store, file by file and entry by entry (used by `gitmem sync`).

- Every path changed on either side since the merge base is looked at once: changed on one side
  only, that side's version is taken; changed on both, `merge.merge_file` merges it by its role.
- Before that, texts are prepared (merge_prep.py): Ids two machines use for different entries are
  renumbered on this machine's side, and earlier conflict blocks are held as single entries.
- Document copies follow their merged index record (sync/shelves.py): an edit follows a copy
  moved between shelves, and a copy the merge brought back on the other shelf joins the one the
  record names.
- A topic file deleted on one side and changed on the other is merged entry by entry against an
  emptied base.
- A review item accepted on both machines is one entry (merge/accepted.py).
- Generated files (layer indexes, SYSTEM.md) are rendered again from the merged files instead of
  being merged.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gitmem.errors import GitmemError
from gitmem.format import layers as L
from gitmem.format.entry import TopicFile
from gitmem.merge.accepted import fold_double_accepts
from gitmem.merge.common import PLAIN, Labels
from gitmem.merge.entries import MergeConflict
from gitmem.merge.files import is_generated, merge_file
from gitmem.merge.moves import align_moves
from gitmem.merge.prep import (
    ConflictBlocks,
    TakenIds,
    clear_parse_cache,
    ids_of,
    parse_copy,
    renumber_local_ids,
)
from gitmem.sync.shelves import align_shelf_moves, copy_front_matter, fold_stray_copies

if TYPE_CHECKING:
    from gitmem.store.store import Store

SYSTEM_DOC = "SYSTEM.md"


@dataclass
class TreeMerge:
    """The merged content, as changes against ours' tree, and what the merge had to decide."""

    files: dict[str, bytes | None] = field(default_factory=dict)
    blocks: ConflictBlocks = field(default_factory=ConflictBlocks)
    conflicts: list[MergeConflict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    renumbered: dict[str, str] = field(default_factory=dict)


def _decode(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8")


class _Trees:
    """Cached reads of the three commits' files."""

    def __init__(self, store: Store, base: str, ours: str, theirs: str, blocks: ConflictBlocks) -> None:
        self.git = store.git
        self.blocks = blocks
        self.revs = {"base": base, "ours": ours, "theirs": theirs}
        self.cache: dict[tuple[str, str], bytes | None] = {}
        self.override: dict[tuple[str, str], str | None] = {}  # texts to merge instead (moves)

    def blob(self, side: str, path: str) -> bytes | None:
        key = (side, path)
        if key not in self.cache:
            self.cache[key] = self.git.read_file_at(self.revs[side], path)
        return self.cache[key]

    def text(self, side: str, path: str) -> str | None:
        """The side's text; entry files with their conflict blocks held as placeholders."""
        if (side, path) in self.override:
            return self.override[(side, path)]
        text = _decode(self.blob(side, path))
        if L.classify_path(path).kind in ("topic", "single"):
            return self.blocks.protect(text)
        return text


def merge_commits(store: Store, base: str, ours: str, theirs: str,
                  labels: Labels = PLAIN) -> TreeMerge:
    """Merge `theirs` into `ours` (HEAD, checked out and clean) over their merge base `base`;
    conflict blocks carry `labels` on their marker lines.

    Leaves the catalog describing the merged files (the caller commits them, or restores the
    catalog from the work tree when it does not).
    """
    git = store.git
    result = TreeMerge()
    trees = _Trees(store, base, ours, theirs, result.blocks)
    ours_paths = set(git.changed_between(base, ours))
    theirs_paths = set(git.changed_between(base, theirs))

    def side_map(paths: set[str], side: str) -> dict[str, tuple[str | None, str | None]]:
        return {p: (trees.text("base", p), trees.text(side, p))
                for p in sorted(paths) if L.classify_path(p).kind == "topic"}

    try:
        ours_side, theirs_side = side_map(ours_paths, "ours"), side_map(theirs_paths, "theirs")
    except UnicodeDecodeError:
        ours_side, theirs_side = {}, {}
    extra: dict[tuple[str, str], set[int]] = {}
    for path, texts in (*ours_side.items(), *theirs_side.items()):
        for text in texts:
            for ident in ids_of(parse_copy(text, path)):
                parsed = L.parse_id(ident)
                if parsed:
                    extra.setdefault((parsed.scope, parsed.layer), set()).add(parsed.number)

    def taken(scope: str, layer: str) -> set[int]:
        return store.catalog.numbers(scope, layer) | extra.get((scope, layer), set())

    rewritten, result.renumbered, result.notes = renumber_local_ids(ours_side, theirs_side, taken)
    both = _align_moves(result, trees, rewritten, set(ours_side), set(theirs_side))
    both |= align_shelf_moves(trees, ours_paths, theirs_paths)
    renamed = _distinct_copy_names(trees, ours_paths, theirs_paths, result)
    regenerate: set[str] = set()
    for path in sorted(ours_paths | theirs_paths):
        if path in renamed:
            continue
        if path in both:
            _merge_one(result, trees, path, rewritten, taken, regenerate, labels)
            continue
        if path not in theirs_paths:
            if path in rewritten:
                result.files[path] = result.blocks.restore(rewritten[path]).encode("utf-8")
            continue
        mine, other = trees.blob("ours", path), trees.blob("theirs", path)
        if path not in ours_paths or mine == other:
            if path not in ours_paths:
                result.files[path] = other
            continue
        _merge_one(result, trees, path, rewritten, taken, regenerate, labels)
    fold_stray_copies(result, trees, ours_paths | theirs_paths)
    fold_double_accepts(result, trees)
    _regenerate(store, result, ours_paths, theirs_paths, regenerate, trees)
    clear_parse_cache()
    return result


def _align_moves(result: TreeMerge, trees: _Trees, rewritten: dict[str, str], ours_paths: set[str],
                 theirs_paths: set[str]) -> set[str]:
    """Apply entries moved on one side to the base and the other side's edits (merge/moves.py);
    returns the paths that must now be merged whatever each side did to them."""

    def texts(side: str, path: str) -> str | None:
        return rewritten[path] if side == "ours" and path in rewritten else trees.text(side, path)

    try:
        aligned = align_moves(texts, ours_paths, theirs_paths)
    except UnicodeDecodeError:
        return set()
    for (side, path), text in aligned.texts.items():
        if side == "ours":
            rewritten.pop(path, None)  # the renumbered text, which the alignment started from
        trees.override[(side, path)] = text
    result.notes.extend(aligned.notes())
    return aligned.paths()


def _distinct_copy_names(trees: _Trees, ours_paths: set[str], theirs_paths: set[str],
                         result: TreeMerge) -> set[str]:
    """Documents both sides added under one copy file name (documents/names.py): ours' takes
    the next free name, its copy moved there, and theirs' copy keeps the name; ours' index is
    merged with the new names. Returns the copy paths settled here."""
    from gitmem.documents.names import distinct_copy_names

    settled: set[str] = set()
    for index in sorted(p for p in ours_paths & theirs_paths if p.endswith("/documents/index.json")):
        try:
            found = distinct_copy_names(index, *(trees.text(side, index) for side in ("base", "ours", "theirs")))
        except UnicodeDecodeError:
            continue
        if found is None:
            continue
        trees.override[("ours", index)], renames = found
        shelf = index.removesuffix("index.json")
        for rename in renames:
            old, new = f"{shelf}{rename.status}/{rename.old}", f"{shelf}{rename.status}/{rename.new}"
            result.files[new] = trees.blob("ours", old)
            result.files[old] = trees.blob("theirs", old)
            settled |= {old, new}
            result.notes.append(f"{index}: {rename.doc_id} and a document added on the other machine "
                                f"both took the file name {rename.old}; this machine's is now {rename.new}")
    return settled


def _merge_one(
    result: TreeMerge, trees: _Trees, path: str, rewritten: dict[str, str], taken: TakenIds,
    regenerate: set[str], labels: Labels,
) -> None:
    """Merge one path changed on both sides into `result`."""
    try:
        base = trees.text("base", path)
        mine = rewritten.get(path, trees.text("ours", path))
        other = trees.text("theirs", path)
    except UnicodeDecodeError:
        result.notes.append(f"{path}: not UTF-8 text and changed on both sides; kept this "
                            f"machine's version (the other stays in commit {trees.revs['theirs'][:12]})")
        return
    emptied = _emptied_topic(path, base, mine, other)
    if emptied is not None:  # a topic file deleted on one side: its entries were deleted
        mine, other = (emptied, other) if mine is None else (mine, emptied)
    merged = merge_file(path, base, mine, other, taken_ids=taken, labels=labels)
    if merged is None or (emptied is not None and not _has_entries(merged.text, path)):
        result.files[path] = None
        return
    result.files[path] = result.blocks.restore(merged.text, base, path).encode("utf-8")
    result.conflicts.extend(merged.conflicts)
    result.notes.extend(merged.notes)
    for old, new in merged.renumbered.items():
        result.renumbered.setdefault(old, new)
    if merged.regenerate or is_generated(path):
        regenerate.add(path)


def _emptied_topic(path: str, base: str | None, ours: str | None, theirs: str | None) -> str | None:
    """For a topic file one side deleted and the other changed: the base with no entries.

    Merging against it deletes, entry by entry, what the other side left untouched and keeps what
    it edited or added; deleting the whole file would lose those, keeping it whole would bring
    back entries (and their Ids) the deleting side meant to remove.
    """
    if base is None or (ours is None) == (theirs is None) or L.classify_path(path).kind != "topic":
        return None
    topic = parse_copy(base, path)
    return None if topic is None else topic.frontmatter_raw + topic.preamble


def _has_entries(text: str, path: str) -> bool:
    topic = parse_copy(text, path)
    return topic is None or bool(topic.entries)


def _regenerate(
    store: Store, result: TreeMerge, ours_paths: set[str], theirs_paths: set[str],
    flagged: set[str], trees: _Trees,
) -> None:
    """Bring the catalog to the merged files and render the generated files from them."""
    topic_paths = sorted(p for p in result.files if L.classify_path(p).kind == "topic")

    def read(path: str) -> TopicFile | None:
        data = result.files[path]
        if data is None:
            return None
        return parse_copy(data.decode("utf-8", errors="replace"), path) or TopicFile()

    if topic_paths:
        store.catalog.refresh(topic_paths, read)

    def layers_of(paths: set[str]) -> set[tuple[str, str]]:
        return {(r.scope, r.layer) for r in map(L.classify_path, paths) if r.kind == "topic"}

    layers = layers_of(ours_paths) & layers_of(theirs_paths)
    layers |= {(r.scope, r.layer) for r in map(L.classify_path, flagged) if r.kind == "layer-index"}
    for scope, layer in sorted(layers):
        path = L.layer_index_path(scope, layer)
        topics = store.catalog.topics(scope, layer)
        if topics or trees.blob("ours", path) is not None or trees.blob("theirs", path) is not None:
            text = L.render_layer_index(scope, layer, topics).encode("utf-8")
            if text != trees.blob("ours", path) or path in result.files:
                result.files[path] = text
    # SYSTEM.md describes the merged store whichever side changed it: rendered, never merged.
    system = _system_doc(store, result).encode("utf-8")
    if system != trees.blob("ours", SYSTEM_DOC):
        result.files[SYSTEM_DOC] = system
    _regenerate_runtime(result, ours_paths | theirs_paths, trees)
    copy_front_matter(result, trees)


def _regenerate_runtime(result: TreeMerge, changed: set[str], trees: _Trees) -> None:
    """USER.md / MEMORY.md rendered from each merged memories.json (records two machines both
    added with the same text are kept once)."""
    from gitmem.runtime.model import (
        dump_records,
        load_records,
        render_projection,
        without_duplicates,
    )
    from gitmem.runtime.tier import projection_path, records_path, targets_of

    folders = {p.removesuffix("/runtime/memories.json") for p in changed
               if p.endswith("/runtime/memories.json")}
    scopes = {L.GLOBAL if f == L.GLOBAL else f.removeprefix("workspaces/") for f in folders
              if f == L.GLOBAL or f.startswith("workspaces/")}
    for scope in sorted(scopes):
        path = records_path(scope)
        data = result.files[path] if path in result.files else trees.blob("ours", path)
        if data is None:
            continue
        try:
            records = load_records(data.decode("utf-8"), path)
        except (UnicodeDecodeError, GitmemError):
            result.notes.append(f"{path}: not readable after the merge; projections left as they were")
            continue
        records, dropped = without_duplicates(records)
        if dropped:
            result.files[path] = dump_records(records).encode("utf-8")
            result.notes += [f"{path}: {item.id} repeated an item; kept the earlier one" for item in dropped]
        for target in targets_of(scope):
            relpath = projection_path(scope, target)
            text = render_projection([item.content for item in records.of(target)]).encode("utf-8")
            current = result.files.get(relpath, trees.blob("ours", relpath))
            if text != current and (records.of(target) or current is not None):
                result.files[relpath] = text


def _system_doc(store: Store, result: TreeMerge) -> str:
    """SYSTEM.md rendered from the merged memory.json and catalog."""
    from gitmem.store.registry import Registry
    from gitmem.store.system_doc import render_system_doc, tier_counts

    merged = result.files.get("memory.json")
    registry = store.registry
    if merged is not None:
        with contextlib.suppress(ValueError):
            registry = Registry(json.loads(merged.decode("utf-8")))
    def read(relpath: str) -> bytes | None:  # the merged tree: the merge's changes over ours
        return result.files[relpath] if relpath in result.files else store.read_bytes(relpath)

    arrived = {p.split("/")[1] for p in result.files if p.startswith("workspaces/") and p.count("/") >= 2}
    scopes = [*store.scope_keys(), *sorted(k for k in arrived - set(store.scope_keys()) if L.is_workspace_key(k))]
    return render_system_doc(registry, store.catalog.counts(), tier_counts(scopes, read))
