"""Entry write verbs: remember, forget, verify, codebase."""

from __future__ import annotations

from collections.abc import Callable

from gitmem.errors import InvalidInputError
from gitmem.format import layers as L
from gitmem.format.entry import IMPORTANCE_VALUES, VOLATILITY_VALUES, Entry, text_hash
from gitmem.format.freshness import guess_volatility
from gitmem.secrets.scan import refuse_secrets
from gitmem.store.paths import topic_slug
from gitmem.store.store import Store, WriteTxn
from gitmem.store.txn import Located
from gitmem.verbs.base import (
    WriteResult,
    check_choice,
    check_day,
    check_text,
    heading_for,
    load_or_new_topic,
    safe_body,
    target_scope,
)
from gitmem.verbs.blocks import open_held, save_held

# How each single-file layer is written instead of with `remember`.
_SINGLE_WAY_OUT = {
    "state": "use `gitmem state SECTION CONTENT`",
    "working": "use `gitmem working`",
    "junk": "junk.md is edited by hand and never indexed",
}


def remember(
    store: Store,
    text: str,
    layer: str,
    *,
    topic: str | None = None,
    title: str | None = None,
    importance: str | None = None,
    volatility: str | None = None,
    until: str | None = None,
    source: str | None = None,
    supersedes: str | None = None,
    scope: str = "global",
    workspace: str | None = None,
    force: bool = False,
    extra_fields: dict[str, str] | None = None,
    verb: str = "remember",
    allow_secret: bool = False,
) -> WriteResult:
    """Add an entry; identical live text returns the existing id and writes nothing.

    Text that holds a likely secret is refused (exit 2) unless `allow_secret`."""
    spec = L.layer_spec(layer)
    if spec.shape != "topics":
        raise InvalidInputError(f"layer {layer!r} is not written with remember ({_SINGLE_WAY_OUT[layer]})")
    body = safe_body(check_text(text, allow_secret=allow_secret))
    for value, what in ((title, "title"), (source, "source")):
        if value:
            refuse_secrets(value, what, allow=allow_secret)
    heading = heading_for(text, title)
    check_choice(importance, IMPORTANCE_VALUES, "importance")
    check_choice(volatility, VOLATILITY_VALUES, "volatility")
    until = check_day(until, "--until date")
    topic_name = (topic or "general").strip()
    slug = topic_slug(topic_name)
    with store.writing(verb, allow_secret=allow_secret) as txn:
        key = target_scope(store, txn, layer, scope, workspace)
        relpath = L.topic_path(key, layer, slug)
        for hit in store.catalog.find_text(key, layer, text_hash(body)):
            if hit.status == "live":
                txn.message = ""
                return WriteResult(hit.id, hit.path, False, "identical entry already recorded")
            if hit.status == "forgotten" and not force:
                raise InvalidInputError(
                    f"refused: this text was forgotten as {hit.id}; use --force, or `gitmem forget --undo {hit.id}`"
                )
        old = store.locate(supersedes) if supersedes else None
        new_id = L.format_id(key, layer, store.catalog.max_number(key, layer) + 1)
        today = store.today().isoformat()
        fields = {
            "Id": new_id,
            "Importance": importance or "normal",
            "Volatility": volatility or guess_volatility(text),
            "Created": today,
            "Verified": today,
        }
        if until:
            fields["Valid-until"] = until
        if source:
            fields["Source"] = " ".join(source.split())
        if old is not None:
            fields["Supersedes"] = old.entry.id or ""
        fields.update(extra_fields or {})
        anchor = code_anchor(store, key, layer, topic_name, fields)
        if anchor:
            fields["Code-Commit"] = anchor
        if old is not None:
            mark_superseded(store, txn, old.path, old.entry.id or "", new_id)
        entry = Entry(title=heading, body=body, fields=fields)
        if not store.append_entry(txn, relpath, entry):
            document = load_or_new_topic(store, relpath, key, layer, topic_name)
            document.entries.append(entry)
            store.write_topic(txn, relpath, document)
        txn.message = f"{verb}: {new_id} ({layer}/{slug})"
        return WriteResult(new_id, relpath, True)


def mark_superseded(store: Store, txn: WriteTxn, relpath: str, old_id: str, new_id: str) -> None:
    edit = open_held(store, relpath)
    assert edit is not None
    index = edit.document.find(old_id)
    assert index is not None
    edit.refuse_if_held(edit.document.entries[index], "remember --supersedes")
    edit.document.entries[index] = edit.document.entries[index].with_fields(Superseded_by=new_id)
    save_held(store, txn, edit)


def update_entry(store: Store, verb: str, entry_id: str, *,
                 derived: Callable[[Located], dict[str, str | None]] | None = None,
                 **fields: str | None) -> WriteResult:
    """Set or clear fields of one entry (forget, verify), and those `derived` computes from the
    entry found; no commit when nothing changes."""
    with store.writing(verb) as txn:
        found = store.locate(entry_id)
        if derived is not None:
            fields = {**fields, **derived(found)}
        edit = open_held(store, found.path)
        assert edit is not None
        index = edit.document.find(entry_id)
        assert index is not None
        edit.refuse_if_held(edit.document.entries[index], verb)
        updated = edit.document.entries[index].with_fields(**fields)
        if updated.fields == edit.document.entries[index].fields:
            return WriteResult(entry_id, found.path, False, "already so; nothing changed")
        edit.document.entries[index] = updated
        save_held(store, txn, edit)
        txn.message = f"{verb}: {entry_id}"
        return WriteResult(entry_id, found.path, True)


def forget(store: Store, entry_id: str, *, undo: bool = False) -> WriteResult:
    if undo:
        return update_entry(store, "forget --undo", entry_id, Forgotten=None)
    return update_entry(store, "forget", entry_id, Forgotten=store.today().isoformat())


def verify(store: Store, entry_id: str) -> WriteResult:
    """Re-confirm an entry today; one bound to code also records the code's commit it was checked
    against (or drops an old one when the code is not known here: the day rule then applies)."""
    def commit(found: Located) -> dict[str, str | None]:
        return {"Code_Commit": code_anchor(store, found.scope, found.layer, found.topic, found.entry.fields)}

    return update_entry(store, "verify", entry_id, Verified=store.today().isoformat(), derived=commit)


def code_anchor(store: Store, scope: str, layer: str, topic: str, fields: dict[str, str]) -> str | None:
    """The HEAD of the workspace's repository, for an entry bound to its code (Code-Commit)."""
    if scope == L.GLOBAL or ("Paths" not in fields and layer != "codebase"):
        return None  # nothing to look up: not about code
    from gitmem.provenance.codefresh import CodeWatch

    return CodeWatch(store.root, store.cwd).anchor(scope, layer, topic, fields)


def codebase(
    store: Store,
    topic: str,
    text: str,
    *,
    importance: str | None = None,
    workspace: str | None = None,
    allow_secret: bool = False,
    source: str | None = None,
) -> WriteResult:
    """Record what a path or subsystem does; re-recording the topic updates its entry."""
    body = safe_body(check_text(text, allow_secret=allow_secret))
    check_choice(importance, IMPORTANCE_VALUES, "importance")
    slug = topic_slug(topic)
    with store.writing("codebase", allow_secret=allow_secret) as txn:
        key = target_scope(store, txn, "codebase", "workspace", workspace)
        relpath = L.topic_path(key, "codebase", slug)
        edit = open_held(store, relpath)
        if edit is None:
            document = load_or_new_topic(store, relpath, key, "codebase", topic.strip())
        else:
            document = edit.document
        today = store.today().isoformat()
        live = [i for i, e in enumerate(document.entries) if not e.is_forgotten and not e.is_superseded]
        if live:
            index = live[-1]
            current = document.entries[index]
            if edit is not None:
                edit.refuse_if_held(current, "codebase")
            if current.body == body and (importance is None or current.get("Importance") == importance):
                return WriteResult(current.id, relpath, False, "already recorded; nothing changed")
            document.entries[index] = current.with_body(body).with_fields(
                Verified=today, Importance=importance or current.get("Importance") or "normal",
                Source=" ".join(source.split()) if source else current.get("Source") or None,
                Code_Commit=code_anchor(store, key, "codebase", topic.strip(), current.fields),
            )
            entry_id = current.id
        else:
            entry_id = L.format_id(key, "codebase", store.catalog.max_number(key, "codebase") + 1)
            fields = {"Id": entry_id, "Importance": importance or "normal", "Volatility": "normal",
                      "Created": today, "Verified": today}
            if source:
                fields["Source"] = " ".join(source.split())
            anchor = code_anchor(store, key, "codebase", topic.strip(), fields)
            if anchor:
                fields["Code-Commit"] = anchor
            document.entries.append(Entry(topic.strip(), body, fields))
        if edit is None:
            store.write_topic(txn, relpath, document)
        else:
            save_held(store, txn, edit)
        txn.message = f"codebase: {entry_id} ({slug})"
        return WriteResult(entry_id, relpath, True)


def paths_field(paths: str) -> dict[str, str]:
    """The Paths field of an entry from comma-separated repository paths (refused when one is
    not a path inside the repository)."""
    from gitmem.format.references import parse_paths

    refuse_secrets(paths, "--paths", overridable=False)  # a path never needs to hold one
    good, bad = parse_paths(paths)
    if bad or not good:
        raise InvalidInputError(f"--paths: {', '.join(bad) or paths!r} is not a path inside the repository")
    return {"Paths": ", ".join(good)}
