"""Read verbs over the store: show and list. Records are plain dicts ready for --json."""

from __future__ import annotations

from collections.abc import Collection
from datetime import date
from functools import partial
from typing import TYPE_CHECKING, Any

from gitmem.errors import ParseError
from gitmem.format import layers as L
from gitmem.format.entry import Entry, TopicFile
from gitmem.format.freshness import grade_entry, parse_day
from gitmem.store.store import Located

if TYPE_CHECKING:
    from gitmem.store.store import Store


def status_of(entry: Entry, today: date) -> str:
    """live | forgotten | superseded | expired."""
    status = entry.status
    if status == "live":
        until = parse_day(entry.get("Valid-until"))
        if until is not None and until < today:
            return "expired"
    return status


def entry_record(found: Located, store: Store) -> dict[str, Any]:
    """A JSON-ready view of one entry with its freshness."""
    today = store.today()
    fresh = grade_entry(found.entry, today, store.registry.freshness_windows())
    record: dict[str, Any] = {
        "id": found.entry.id,
        "title": found.entry.title,
        "body": found.entry.body,
        "fields": dict(found.entry.ordered_fields()),
        "scope": found.scope,
        "layer": found.layer,
        "topic": found.topic,
        "path": found.path,
        "line": found.entry.line,
        "status": status_of(found.entry, today),
        "freshness": fresh.grade,
        "age_days": fresh.age_days,
        "label": fresh.label(),
    }
    if found.layer == "decisions":
        from gitmem.verbs.decisions import parse_decision_body

        record["decision"] = parse_decision_body(found.entry.body)
    return record


def show(store: Store, entry_id: str, *, space: str | None = None) -> dict[str, Any]:
    """One entry by `ID` or `SPACE/ID` (the store's own first, else the active space holding
    it); an entry in conflict is shown with every version and status "conflicted"."""
    from gitmem.spaces.folder import cite
    from gitmem.spaces.lookup import resolve_ref
    from gitmem.verbs.suspects import mark_records

    ref, found = resolve_ref(store, entry_id, space=space)
    record = entry_record(found, ref.store)
    record.update(space=ref.space, ref=ref.qualified, root=str(ref.store.root))
    cite(ref.store, record, record["fields"].get("Source", ""))
    conflict = conflict_of(ref.store, found.path, ref.id)
    if conflict is not None:
        record["status"] = "conflicted"
        record["conflict"] = conflict
    mark_records(store, [record])
    return record


def conflict_of(store: Store, relpath: str, entry_id: str) -> dict[str, Any] | None:
    """The conflict block holding this entry: its line and each version with its origin."""
    from gitmem.format.conflicts import block_of
    from gitmem.fsio import read_text
    from gitmem.sync.conflicts import describe_label

    try:
        block = block_of(read_text(store.path(relpath)), entry_id)
    except (OSError, UnicodeDecodeError):
        return None
    if block is None:
        return None
    versions = [{"label": v.label, "from": describe_label(v.label) or v.label or "unknown",
                 "text": v.text} for v in block.versions]
    return {"line": block.line, "versions": versions}


def skipped_note(skipped: Collection[str]) -> str:
    """The line a read verb adds when it left files out."""
    count = len(skipped)
    return f"{count} file{'' if count == 1 else 's'} skipped, see `gitmem check`"


def read_or_skip(store: Store, relpath: str, skipped: set[str] | None) -> TopicFile | None:
    """A memory file for a read verb: None when it is gone or cannot be read (then noted)."""
    try:
        return store.read_file(relpath)
    except ParseError:
        if skipped is not None:
            skipped.add(relpath)
        return None


def list_entries(
    store: Store,
    *,
    layer: str | None = None,
    scopes: list[str] | None = None,
    include_all: bool = False,
    space: str | None = None,
    skipped: set[str] | None = None,
) -> list[dict[str, Any]]:
    """Entries of the given layer/scopes of the store and its active spaces (or of the one
    `space` names), in file order; hidden ones only with include_all.

    A file that cannot be read is left out and added to `skipped` (never an error)."""
    from gitmem.spaces.folder import cite
    from gitmem.spaces.lookup import qualify
    from gitmem.spaces.mounts import reading_targets

    if layer is not None:
        L.layer_spec(layer)
    records = []
    targets, _problems = reading_targets(store, space)
    for name, target in targets:
        for record in _store_entries(target, layer, scopes, include_all, skipped):
            record.update(space=name, ref=qualify(name, target is store, record["id"]),
                          root=str(target.root))
            cite(target, record, record["fields"].get("Source", ""))
            records.append(record)
    return records


def _store_entries(store: Store, layer: str | None, scopes: list[str] | None,
                   include_all: bool, skipped: set[str] | None) -> list[dict[str, Any]]:
    with store.reading():
        store.catch_up_catalog()
    from gitmem.store import parsecache

    records = []
    day = (store.today().isoformat(), sorted(store.registry.freshness_windows().items()))
    for scope in scopes or store.scope_keys():
        for relpath in store.catalog.files(scope, layer):
            document = read_or_skip(store, relpath, skipped)
            if document is None:
                continue
            # A warm server builds a file's records once per text and day (else: every time).
            built = parsecache.derived(str(store.root), relpath, day,
                                       partial(_file_records, store, relpath, document))
            for record in built:
                if include_all or record["status"] == "live":
                    records.append(dict(record))
    return records


def _file_records(store: Store, relpath: str, document: TopicFile) -> list[dict[str, Any]]:
    """The record of every entry of a file (the costly part of listing)."""
    role = L.classify_path(relpath)
    topic = str(document.meta.get("topic") or role.slug)
    return [entry_record(Located(entry, relpath, role.scope, role.layer, topic), store)
            for entry in document.entries]


def topic_records(store: Store, relpath: str) -> list[dict[str, Any]]:
    """Every entry of one memory file (hidden ones included), in file order; NotFoundError when
    the path names no memory file of the store."""
    from gitmem.errors import NotFoundError

    with store.reading():
        store.catch_up_catalog()
    if ".." in relpath.split("/") or not store.catalog.has_file(relpath):
        raise NotFoundError(f"{relpath} is not a memory file of this store")
    document = read_or_skip(store, relpath, None)
    if document is None:
        raise NotFoundError(f"{relpath} cannot be read as it is (see `gitmem check`)")
    return _file_records(store, relpath, document)


def freshness_counts(store: Store) -> dict[str, dict[str, int]]:
    """The store's live entries per layer and freshness grade, from the stat-checked summaries
    (as the context card reads them): an unchanged file costs a stat, not a parse."""
    today = store.today()
    with store.reading():
        store.catch_up_catalog()
    scopes, layers = store.scope_keys(), list(L.TOPIC_LAYERS)
    files = [p for scope in scopes for layer in layers for p in store.catalog.files(scope, layer)]
    counts, _skipped = store.summaries.live_grades(files, scopes, layers, today,
                                                   store.registry.freshness_windows())
    return {layer: counts[layer] for layer in sorted(counts)}


def suspect_entries(store: Store) -> list[dict[str, Any]]:
    """Every live entry of a workspace whose code repository this machine knows, with a suspect
    mark: its code changed after it was last verified (the list the page's overview links to)."""
    from gitmem.provenance.codefresh import CodeWatch
    from gitmem.verbs.suspects import mark_records

    watch = CodeWatch(store.root, store.cwd)
    scopes = [s for s in store.scope_keys() if s != L.GLOBAL and watch.repo_for(s) is not None]
    if not scopes:
        return []
    home = str(store.root)
    records = [r for r in list_entries(store, scopes=scopes) if r.get("root") == home]
    mark_records(store, records)
    return [r for r in records if r["suspect"]]
