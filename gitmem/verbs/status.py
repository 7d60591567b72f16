"""`gitmem status`: where the store lives, what it holds, and what needs attention."""

from __future__ import annotations

from typing import Any

from gitmem.capture.report import memory_work
from gitmem.errors import StoreStateError
from gitmem.serve.state import describe as describe_server
from gitmem.store.recovery import leftovers
from gitmem.store.store import Store
from gitmem.store.system_doc import system_doc_stale
from gitmem.store.tree import scan_tree
from gitmem.sync.state import load_sync_state


def status(store: Store) -> dict[str, Any]:
    """Where the store lives, what it holds, and whether anything needs attention."""
    store.require()
    with store.reading():
        store.catch_up_catalog()
    counts = store.catalog.counts()
    layers: dict[str, dict[str, dict[str, int]]] = {}
    for (scope, layer), (files, entries) in sorted(counts.items()):
        layers.setdefault(scope, {})[layer] = {"topics": files, "entries": entries}
    git = store.git
    sync_state = load_sync_state(store.root) or None
    on_disk = scan_tree(store.root)
    problems = {f"{path}:{line}: {reason}" for path, line, reason in store.catalog.problems()}
    problems.update(str(problem) for problem in on_disk.problems)
    data: dict[str, Any] = {
        "root": str(store.root),
        "branch": git.branch(),
        "head": git.head_oid(),
        "remote": git.remote_url(),
        "dirty": git.dirty_paths(),
        "entries": sum(entries for _, entries in counts.values()),
        "layers": layers,
        "workspaces": _workspaces(store),
        "system_doc_stale": system_doc_stale(store.root),
        "conflicts": on_disk.conflicted,
        "problems": sorted(problems),
        "sync": sync_state,
        "leftovers": [str(p) for p in leftovers(store)],
    }
    data.update(memory_work(store.root))
    data["server"] = describe_server(store.root)
    return data


def _workspaces(store: Store) -> list[str]:
    try:
        return sorted(store.registry.workspaces)
    except StoreStateError:
        return []  # a broken memory.json is among the leftovers

