"""Writes when spaces are mounted: which store a new entry goes to, which store an `ID` or
`SPACE/ID` lives in, and what the write reports. The CLI and the MCP server share these."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gitmem.spaces.lookup import Ref
    from gitmem.spaces.routing import Target
    from gitmem.store.store import Store
    from gitmem.verbs.base import WriteResult

VERB_OF_LAYER = {"decisions": "decision", "codebase": "codebase"}


def route_write(home: Store, space: str | None, layer: str, topic: str | None, text: str) -> Target:
    """Where a new entry goes: `space` when named, else the routing rules."""
    from gitmem.spaces.routing import choose

    verb = VERB_OF_LAYER.get(layer, "remember")
    return choose(home, space=space, layer=layer, topic=topic, text=text, verb=verb)


def routed_report(home: Store, target: Target, result: WriteResult) -> tuple[dict[str, Any], str]:
    """The write's result as data, and the note saying where it went ('' when it stayed home
    with no routing at play). A space the write went to that was inactive becomes active."""
    note = target.finish(home) if (target.reason or not target.home) else ""
    data = {"id": result.id, "path": result.path, "changed": result.changed, "note": result.note,
            "space": target.name, "root": str(target.store.root), "routed": target.reason or None}
    return data, note


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
