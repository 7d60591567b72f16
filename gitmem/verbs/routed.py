"""The write verbs as callers use them when spaces may be mounted: each picks the store (the one
named by `space`, else the routing rules for a new entry; the store an `ID` or `SPACE/ID` lives
in for a write to an entry), writes, and reports where the write went. The CLI and the MCP
server call these and only render what they return."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gitmem.spaces.lookup import Ref
    from gitmem.spaces.routing import Target
    from gitmem.store.store import Store
    from gitmem.verbs.base import WriteResult

VERB_OF_LAYER = {"decisions": "decision", "codebase": "codebase"}


@dataclass(frozen=True)
class Routed:
    """A write and where it went: the report as data, and the note naming the space when spaces
    made that a question ('' when it stayed home and none is mounted)."""

    result: WriteResult
    data: dict[str, Any]
    note: str
    shown: str  # what a person is told: the id, else the file (and why it did not change)


def remember(home: Store, text: str, layer: str, *, space: str | None = None,
             paths: str | None = None, **options: Any) -> Routed:
    """verbs.entries.remember, in the store `space` names or the routing rules choose;
    `paths` is the comma-separated Paths field."""
    from gitmem.verbs.entries import paths_field
    from gitmem.verbs.entries import remember as write

    extra = paths_field(paths) if paths else None
    target = route_write(home, space, layer, options.get("topic"),
                         f"{options.get('title') or ''}\n{text}")
    return _report(home, target, lambda store: write(store, text, layer, extra_fields=extra, **options))


def decision(home: Store, statement: str, *, rationale: str, space: str | None = None,
             **options: Any) -> Routed:
    """verbs.decisions.decision, routed like remember."""
    from gitmem.verbs.decisions import decision as write

    target = route_write(home, space, "decisions", options.get("topic"),
                         f"{statement}\n{options.get('context') or ''}\n{rationale}")
    return _report(home, target, lambda store: write(store, statement, rationale=rationale, **options))


def codebase(home: Store, topic: str, text: str, *, space: str | None = None,
             **options: Any) -> Routed:
    """verbs.entries.codebase, routed like remember."""
    from gitmem.verbs.entries import codebase as write

    target = route_write(home, space, "codebase", topic, text)
    return _report(home, target, lambda store: write(store, topic, text, **options))


def entry_write(home: Store, ref: str, space: str | None,
                write: Callable[[Store, str], WriteResult]) -> Routed:
    """`write(store, id)` on the entry an `ID` or `SPACE/ID` names, in the store it lives in."""
    found = entry_ref(home, ref, space)
    result = write(found.store, found.id)
    data, note = entry_write_report(home, found, result)
    return Routed(result, data, note, result.id or result.path)


def forget(home: Store, ref: str, *, undo: bool = False, space: str | None = None) -> Routed:
    from gitmem.verbs.entries import forget as write

    return entry_write(home, ref, space, lambda store, ident: write(store, ident, undo=undo))


def verify(home: Store, ref: str, *, space: str | None = None) -> Routed:
    from gitmem.verbs.entries import verify as write

    return entry_write(home, ref, space, write)


def route_write(home: Store, space: str | None, layer: str, topic: str | None, text: str, *,
                home_unless_routed: bool = False) -> Target:
    """Where a new entry goes: `space` when named, else the routing rules."""
    from gitmem.spaces.routing import choose

    verb = VERB_OF_LAYER.get(layer, "remember")
    return choose(home, space=space, layer=layer, topic=topic, text=text, verb=verb,
                  home_unless_routed=home_unless_routed)


def _report(home: Store, target: Target, write: Callable[[Store], WriteResult]) -> Routed:
    """Write into the target store, its commit recording where the write went and why; a space
    the write went to that was inactive becomes active; the note says where it went whenever
    spaces are mounted or it left the store."""
    from gitmem.spaces.mounts import load_mounts

    store, before = target.store, target.store.commit_trailer
    store.commit_trailer = target.trailer(home)
    try:
        result = write(store)
    finally:
        store.commit_trailer = before
    note = target.finish(home) if (target.reason or not target.home) else ""
    if note and target.home and not load_mounts(home.root):
        note = ""
    data = {"id": result.id, "path": result.path, "changed": result.changed, "note": result.note,
            "space": target.name, "root": str(target.store.root), "routed": target.reason or None}
    return Routed(result, data, note, result.id or (
        result.path if result.changed else f"{result.path}: {result.note or 'unchanged'}"))


def entry_ref(home: Store, ref: str, space: str | None) -> Ref:
    """The store an `ID` or `SPACE/ID` lives in, for a write to that entry."""
    from gitmem.spaces.lookup import resolve_ref

    found, _located = resolve_ref(home, ref, space=space, writing=True)
    return found


def entry_write_report(home: Store, ref: Ref, result: WriteResult) -> tuple[dict[str, Any], str]:
    """A write to an entry found by reference, as data; an inactive space it changed becomes
    active (it is in use now), and the note says so."""
    from gitmem.spaces.mounts import load_mounts, save_mounts

    data = {"id": result.id, "path": result.path, "changed": result.changed, "note": result.note,
            "space": ref.space, "ref": ref.qualified}
    note = ""
    if not ref.home and result.changed:
        mounts = load_mounts(home.root)
        mount = mounts.get(ref.space)
        if mount is not None and not mount.active:
            mount.active = True
            save_mounts(home.root, mounts)
            note = f"space {ref.space} was inactive and is now active"
    return data, note
