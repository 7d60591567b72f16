"""Settling a record two machines changed differently: which version `ours` means (pure).

A merge keeps the merging machine's fields in the record and the other machine's version under
`"conflict"`, with the `<machine> <commit>` each came from. The machine that merged and the one
that fast-forwarded to the merge hold the same record, so `ours` cannot mean "the record's own
fields": it means the version this machine wrote, told by the machine names; `theirs` the other.
When neither origin names this machine (a third machine, a conflict written by an older gitmem
whose merge git no longer tells), `ours` is the record's own fields, as the merging machine saw
them; the words of the result name the machine whose version stayed either way.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from gitmem.format.conflicts import parse_label
from gitmem.runtime.model import IMPORTANCE, Item

Origins = tuple[str | None, str | None]  # (the record's own fields, the version under "theirs")


@dataclass(frozen=True)
class Settled:
    """The record without its conflict, and which version stayed, in words."""

    item: Item
    kept: str


def origin_machine(label: str | None) -> str | None:
    parsed = parse_label(label) if label else None
    return parsed[0] if parsed else None


def takes_other(keep: str, here: str, origins: Origins) -> bool:
    """True when `keep` (ours | theirs) asked on machine `here` means the version under "theirs"."""
    fields_from, theirs_from = (origin_machine(label) for label in origins)
    mine_is_other = bool(here) and theirs_from == here and fields_from != here
    return (keep == "theirs") != mine_is_other


def settle(item: Item, keep: str, here: str, origins: Origins) -> Settled:
    """`item` (in conflict) settled as `keep` asks on machine `here`."""
    conflict = item.conflict or {}
    settled = replace(item, extra={k: v for k, v in item.extra.items() if k != "conflict"})
    other = conflict.get("theirs")
    take_other = takes_other(keep, here, origins) and isinstance(other, dict)
    if take_other:
        settled = _as(settled, other)  # type: ignore[arg-type]
    return Settled(settled, _words(origins[1] if take_other else origins[0], take_other))


def _as(item: Item, version: dict[str, Any]) -> Item:
    importance = version.get("importance", item.importance)
    branches = version.get("branches") or []
    return replace(item, content=str(version.get("content", item.content)),
                   importance=importance if importance in IMPORTANCE else item.importance,
                   updated_at=str(version.get("updated_at", item.updated_at)),
                   branches=tuple(str(b) for b in branches) if isinstance(branches, list) else ())


def _words(label: str | None, other: bool) -> str:
    """`beta's version (commit 8c521277c63a)`, the same words on every machine."""
    parsed = parse_label(label) if label else None
    if parsed is not None:
        return f"{parsed[0]}'s version (commit {parsed[1]})"
    return "the version the merge took in" if other else "the version the merging machine kept"
