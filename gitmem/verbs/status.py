"""`gitmem status`: where the store lives, what it holds, and what needs attention."""

from __future__ import annotations

from typing import Any

from gitmem.capture.report import memory_work
from gitmem.errors import GitmemError, StoreStateError
from gitmem.fsio import is_temp_name, refuse_link
from gitmem.redaction import redact
from gitmem.secrets.scan import refuse_hand_edit_secrets
from gitmem.store import integrity
from gitmem.store.recovery import leftovers
from gitmem.store.review import queue_length
from gitmem.store.serverstate import describe as describe_server
from gitmem.store.store import Store
from gitmem.store.system_doc import system_doc_stale
from gitmem.store.tree import scan_tree
from gitmem.sync.state import load_sync_state
from gitmem.verbs.check import find_problems


def status(store: Store, *, check: bool = True) -> dict[str, Any]:
    """Where the store lives, what it holds, and whether anything needs attention. Without
    `check`, the errors of `gitmem check` (which reads every file) are left out: "problems" is
    None."""
    store.require()
    with store.reading():
        store.catch_up_catalog()
        findings = find_problems(store) if check else None
    counts = store.catalog.counts()
    layers: dict[str, dict[str, dict[str, int]]] = {}
    for (scope, layer), (files, entries) in sorted(counts.items()):
        layers.setdefault(scope, {})[layer] = {"topics": files, "entries": entries}
    git = store.git
    sync_state = sync_outcome(load_sync_state(store.root), git.remote_url())
    dirty = git.dirty_paths()
    on_disk = scan_tree(store.root)
    data: dict[str, Any] = {
        "root": str(store.root),
        "branch": git.branch(),
        "head": git.head_oid(),
        "remote": git.remote_url(),
        "dirty": dirty,
        "dirty_refused": hand_edit_refusal(store, dirty) if dirty else None,
        "dirty_held": held_hand_edits(store, dirty) if dirty else [],
        "entries": sum(entries for _, entries in counts.values()),
        "layers": layers,
        "workspaces": _workspaces(store),
        "system_doc_stale": system_doc_stale(store.root),
        "conflicts": on_disk.conflicted,
        # The errors of `gitmem check`, from the same look (verbs.check.find_problems).
        "problems": [str(p) for p in findings.problems if p.is_error] if findings is not None else None,
        "sync": sync_state,
        "leftovers": [str(p) for p in leftovers(store)],
    }
    data.update(memory_work(store.root))
    data["reviewQueue"] = queue_length(store)  # facts consolidation left for a person
    data["server"] = describe_server(store.root)
    return data


def hand_edit_refusal(store: Store, dirty: list[str]) -> str | None:
    """Why the next write would refuse these uncommitted hand edits (None: it commits them,
    or leaves out those it cannot commit: see held_hand_edits).

    The refusals of Store.absorb_hand_edits, in the same order, changing nothing."""
    dirty = [p for p in dirty if not is_temp_name(p)]
    try:
        for relpath in dirty:
            refuse_link(store.root, relpath)
        refuse_hand_edit_secrets(store.root, dirty, lambda path: store.git.read_file_at("HEAD", path))
    except GitmemError as exc:
        return str(exc)
    return None


def held_hand_edits(store: Store, dirty: list[str]) -> list[str]:
    """The uncommitted files the next write leaves uncommitted (`path:line: reason`): those
    gitmem cannot parse and memory files with an error (integrity.held_back, changing nothing)."""
    dirty = [p for p in dirty if not is_temp_name(p)]
    with store.reading():
        outcomes = store.normalize_paths(dirty, fix=False, gate=True)
    held = integrity.held_back(store.root, dirty, outcomes)
    return [str(held[p]) for p in sorted(held)]


def sync_outcome(state: dict[str, Any], remote: str | None) -> dict[str, Any] | None:
    """The last sync as recorded, its error dropped (kept as `obsoleteError`) once the remote it
    was about has changed since: a later success clears it when it is recorded."""
    if not state:
        return None
    error = state.get("error")
    if error and (state.get("remote") or "") != redact(remote or ""):
        state = {key: value for key, value in state.items() if key != "error"}
        state["obsoleteError"] = error
    return state


def _workspaces(store: Store) -> list[str]:
    try:
        return sorted(store.registry.workspaces)
    except StoreStateError:
        return []  # a broken memory.json is among the leftovers

