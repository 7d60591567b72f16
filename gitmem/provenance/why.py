"""`gitmem why ID` and `gitmem log ID`: an entry's origin and versions, from git history."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gitmem.provenance.index import Progress
from gitmem.provenance.trace import Change, EntryTrace

if TYPE_CHECKING:
    from gitmem.store.store import Store

SHOWN = 20  # changes `why` and `log ID` show unless asked for all: an entry may have thousands
# Source prefixes and what they name.
SOURCE_KINDS = {"session": "agent session", "digest": "captured digest", "space": "memory space",
                "transcript": "transcript", "commit": "commit", "fixture": "fixture"}


@dataclass(frozen=True)
class SourceRef:
    """One item of an entry's **Source:** field."""

    raw: str
    kind: str  # session | digest | space | ... | text
    ref: str

    def as_json(self) -> dict[str, str]:
        return {"raw": self.raw, "kind": self.kind, "ref": self.ref,
                "meaning": SOURCE_KINDS.get(self.kind, "free text")}


def parse_source(value: str) -> list[SourceRef]:
    """`session:4f2a`, `space:team/global-sem-0004, session:4f2a`, or free text."""
    out = []
    for part in (p.strip() for p in value.split(",")):
        if not part:
            continue
        kind, sep, ref = part.partition(":")
        if sep and kind.isalpha() and ref.strip():
            out.append(SourceRef(part, kind.lower(), ref.strip()))
        else:
            out.append(SourceRef(part, "text", part))
    return out


def why(store: Store, entry_id: str, *, limit: int | None = SHOWN,
        progress: Progress | None = None) -> dict[str, Any]:
    """Who made the entry, when, on which machine, from what; and its newest `limit` later
    changes (None: every one), only those read."""
    store.require()
    shown = EntryTrace(store.git, entry_id, progress).shown(limit)
    newest, created = shown.newest, shown.created
    top = newest[0] if newest else created
    latest = next((c.after for c in newest if c.after is not None), created.after)
    source = latest.entry.get("Source") if latest else ""
    later = [c for c in newest if c is not created]
    return {
        "id": entry_id,
        "root": str(store.root),
        "exists": top.after is not None,
        "path": top.after.path if top.after else None,
        "title": latest.entry.title if latest else "",
        "created": created.as_json(),
        "source": [s.as_json() for s in parse_source(source)],
        "changes": [c.as_json() for c in reversed(later)],
        "more": shown.unread,  # commits between the creation and the changes shown, not read
    }


def entry_log(store: Store, entry_id: str, limit: int | None = None,
              progress: Progress | None = None) -> list[dict[str, Any]]:
    """The entry's newest `limit` versions (None: all), newest first, each with the text it had
    after that commit."""
    store.require()
    changes: list[Change] = EntryTrace(store.git, entry_id, progress).changes(limit)
    return [c.as_json(with_text=True) for c in changes]
