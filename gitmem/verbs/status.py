"""`gitmem status`: where the store lives, what it holds, and what needs attention."""

from __future__ import annotations

import copy
from typing import Any

from gitmem.capture.report import memory_work
from gitmem.errors import GitmemError, StoreStateError
from gitmem.fsio import is_temp_name, refuse_link
from gitmem.redaction import redact
from gitmem.secrets.scan import refuse_hand_edit_secrets
from gitmem.store import integrity, kept
from gitmem.store.recovery import leftovers
from gitmem.store.review import queue_length
from gitmem.store.serverstate import describe as describe_server
from gitmem.store.store import Store
from gitmem.store.system_doc import system_doc_stale
from gitmem.store.tree import scan_tree
from gitmem.sync.state import SYNC_STATE, load_sync_state
from gitmem.verbs.check import find_problems


def status(store: Store, *, check: bool = True) -> dict[str, Any]:
    """Where the store lives, what it holds, and whether anything needs attention. Without
    `check`, the errors of `gitmem check` (which reads every file) are left out: "problems" is
    None."""
    store.require()
    with store.git.one_status():  # the catch-up, the counts and "dirty" share one git status
        with store.reading():
            store.catch_up_catalog()
            findings = find_problems(store) if check else None
        counts = _counts(store)
        facts = glance(store)
        dirty = facts["dirty"]
        on_disk = scan_tree(store.root)
        data: dict[str, Any] = {
            "root": facts["root"],
            "branch": facts["branch"],
            "head": facts["head"],
            "remote": facts["remote"],
            "dirty": dirty,
            "dirty_refused": hand_edit_refusal(store, dirty) if dirty else None,
            "dirty_held": held_hand_edits(store, dirty) if dirty else [],
            "entries": counts["entries"],
            "layers": counts["layers"],
            "workspaces": _workspaces(store),
            "system_doc_stale": system_doc_stale(store.root),
            "conflicts": on_disk.conflicted,
            # The errors of `gitmem check`, from the same look (verbs.check.find_problems).
            "problems": [str(p) for p in findings.problems if p.is_error] if findings is not None else None,
            "sync": facts["sync"],
            "leftovers": [str(p) for p in leftovers(store)],
        }
    data.update({key: value for key, value in facts.items() if key not in data})  # memory_work's
    data["reviewQueue"] = queue_length(store)  # facts consolidation left for a person
    data["server"] = describe_server(store.root)
    return data


def glance(store: Store) -> dict[str, Any]:
    """What status says that needs no memory file read: the root, branch, HEAD, remote, the
    files that differ from HEAD, the last sync and the digests waiting (`pending`, ...)."""
    store.require()
    git = store.git
    return {
        "root": str(store.root),
        "branch": git.branch(),
        "head": git.head_oid(),
        "remote": git.remote_url(),
        "dirty": git.dirty_paths(),
        "sync": sync_outcome(load_sync_state(store.root), git.remote_url()),
        "tracking": tracking(store),
        **memory_work(store.root),
    }


def tracking(store: Store) -> dict[str, int] | None:
    """Commits only here (`ahead`) and only on the remote as last fetched (`behind`); None
    when the branch has no remote-tracking branch yet (never synced, or no remote)."""
    from gitmem.sync.remote import REMOTE

    git = store.git
    try:
        head = git.head_oid()
        if head is None:
            return None
        ahead, behind = git.ahead_behind(head, f"refs/remotes/{REMOTE}/{git.branch()}")
    except (GitmemError, KeyError, ValueError):
        return None
    return {"ahead": ahead, "behind": behind}


def totals(store: Store) -> dict[str, Any]:
    """What the page's overview counts from every memory file: `entries`, entries and topic
    files per scope and layer (`layers`), blocks of conflict markers (`conflicts`), live entries
    per layer and freshness grade (`freshness`). A long-lived process keeps them while nothing
    they are read from changed (store/kept.py): then a call costs one git status and a few stats."""
    store.require()
    with store.git.one_status():
        sign = kept.signature(store, TOTALS_READ)
        found = kept.kept(store, "totals", sign, lambda: _totals(store))
    return copy.deepcopy(found)


def totals_cheap(store: Store) -> bool:
    """Whether totals() reads little: the catalog is at HEAD already, so only the work tree's
    changes are read and the summaries cost a stat per unchanged file. A store never read, or
    one a pull moved, has its files read first (seconds at 50,000 entries)."""
    store.require()
    return not store.catalog.is_empty() and store.catalog.get_meta("head") == store.git.head_oid()


# What totals() reads besides the memory files and memory.json: the conflicts the last sync noted.
TOTALS_READ = (SYNC_STATE,)


def _totals(store: Store) -> dict[str, Any]:
    from gitmem.sync.conflicts import list_conflicts
    from gitmem.verbs.reads import freshness_counts

    with store.reading():
        store.catch_up_catalog()
    return {**_counts(store), "conflicts": len(list_conflicts(store)),
            "freshness": freshness_counts(store)}


def _counts(store: Store) -> dict[str, Any]:
    """Entries in all, and topic files and entries per scope and layer, from the catalog."""
    counts = store.catalog.counts()
    layers: dict[str, dict[str, dict[str, int]]] = {}
    for (scope, layer), (files, entries) in sorted(counts.items()):
        layers.setdefault(scope, {})[layer] = {"topics": files, "entries": entries}
    return {"entries": sum(entries for _, entries in counts.values()), "layers": layers}


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

