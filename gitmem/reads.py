"""Read verbs over the store: show, list, status. Records are plain dicts ready for --json."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any

from . import layers as L
from .entry import Entry
from .freshness import grade_entry, parse_day
from .markdown import conflict_marker_lines
from .store import Located

if TYPE_CHECKING:
    from .store import Store


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
        from .writes import parse_decision_body

        record["decision"] = parse_decision_body(found.entry.body)
    return record


def show(store: Store, entry_id: str) -> dict[str, Any]:
    return entry_record(store.locate(entry_id), store)


def list_entries(
    store: Store,
    *,
    layer: str | None = None,
    scopes: list[str] | None = None,
    include_all: bool = False,
) -> list[dict[str, Any]]:
    """Entries of the given layer/scopes, in file order; hidden ones only with include_all."""
    if layer is not None:
        L.layer_spec(layer)
    with store.locked():
        store.catch_up_catalog()
    records = []
    for scope in scopes or store.scope_keys():
        for relpath in store.catalog.files(scope, layer):
            document = store.read_file(relpath)
            if document is None:
                continue
            role = L.classify_path(relpath)
            topic = str(document.meta.get("topic") or role.slug)
            for entry in document.entries:
                record = entry_record(Located(entry, relpath, role.scope, role.layer, topic), store)
                if include_all or record["status"] == "live":
                    records.append(record)
    return records


def conflicted_files(store: Store) -> list[str]:
    """Memory files that still hold conflict markers."""
    found = []
    for relpath in store.all_memory_files():
        path = store.path(relpath)
        if path.is_file() and conflict_marker_lines(path.read_text(encoding="utf-8", errors="replace")):
            found.append(relpath)
    return found


def status(store: Store) -> dict[str, Any]:
    """Where the store lives, what it holds, and whether anything needs attention."""
    from .system_doc import system_doc_stale

    store.require()
    with store.locked():
        store.catch_up_catalog()
    counts = store.catalog.counts()
    layers: dict[str, dict[str, dict[str, int]]] = {}
    for (scope, layer), (files, entries) in sorted(counts.items()):
        layers.setdefault(scope, {})[layer] = {"topics": files, "entries": entries}
    git = store.git
    from .synclog import load_sync_state

    sync_state = load_sync_state(store.root) or None
    return {
        "root": str(store.root),
        "branch": git.branch(),
        "head": git.head_oid(),
        "remote": git.remote_url(),
        "dirty": git.dirty_paths(),
        "entries": sum(entries for _, entries in counts.values()),
        "layers": layers,
        "workspaces": sorted(store.registry.workspaces),
        "system_doc_stale": system_doc_stale(store),
        "conflicts": conflicted_files(store),
        "sync": sync_state,
    }
