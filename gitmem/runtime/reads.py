"""Reading the hot runtime memory: the items per scope with their budgets (`runtime show`), and
what the context card shows of them (branch-filtered, user items first)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem.errors import InvalidInputError
from gitmem.format import layers as L
from gitmem.runtime.budget import Limits, size_of
from gitmem.runtime.model import TARGETS, Item, check_choice, metadata_line
from gitmem.runtime.tier import effective_records, limits_of, projection_path, targets_of

if TYPE_CHECKING:
    from gitmem.store.store import Store

def show(store: Store, *, target: str | None = None, scope: str | None = None,
         workspace: str | None = None, cwd: Path | None = None) -> dict[str, Any]:
    """Items per scope and target with their budgets, as JSON-ready data."""
    from gitmem.runtime.branches import current_branch, visible

    store.require()
    if target is not None:
        check_choice(target, TARGETS, "target")
    limits = limits_of(store)
    keys = _show_scopes(store, scope, workspace)
    branch = current_branch(cwd or store.cwd)
    now = store.now()
    out: dict[str, Any] = {"branch": branch, "scopes": []}
    for key in keys:
        records, notes = effective_records(store, key, limits)
        for wanted in targets_of(key):
            if target is not None and wanted != target:
                continue
            items = records.of(wanted)
            out["scopes"].append({
                "scope": key, "target": wanted, "path": projection_path(key, wanted),
                "bytes": size_of(items), "limit": limits.of(wanted), "notes": notes,
                "items": [{**i.as_json(), "visible": visible(i, branch), "meta": metadata_line(i, now)}
                          for i in items],
            })
    return out


def _show_scopes(store: Store, scope: str | None, workspace: str | None) -> list[str]:
    if scope == "global":
        return [L.GLOBAL]
    if scope == "all":  # every scope that holds a hot file (the web page shows the whole store)
        from gitmem.runtime.tier import scopes_with_runtime

        return [L.GLOBAL, *(key for key in scopes_with_runtime(store) if key != L.GLOBAL)]
    if scope == "workspace" or workspace:
        return [store.resolve_workspace(workspace)]
    keys = [L.GLOBAL]
    with contextlib.suppress(InvalidInputError):
        keys.append(store.resolve_workspace(workspace))
    return keys


def snapshot(store: Store, scopes: list[str], cwd: Path | None = None) -> tuple[list[tuple[str, Item]], list[str]]:
    """(scope, item) pairs the context card shows (user items first, branch-filtered), and notes."""
    from gitmem.runtime.branches import current_branch, visible

    try:
        limits = limits_of(store)
    except InvalidInputError:
        limits = Limits()
    branch = current_branch(cwd or store.cwd)
    users: list[tuple[str, Item]] = []
    memories: list[tuple[str, Item]] = []
    notes: list[str] = []
    for key in sorted(dict.fromkeys(scopes), key=lambda k: k == L.GLOBAL):
        try:
            records, problems = effective_records(store, key, limits)
        except InvalidInputError as exc:
            notes.append(str(exc))
            continue
        notes += problems
        users += [(key, i) for i in records.of("user")]
        memories += [(key, i) for i in records.of("memory") if visible(i, branch)]
    return users + memories, notes
