"""`gitmem why ID` and `gitmem log ID`: an entry's origin and versions, from git history."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gitmem.provenance.trace import Change, EntryTrace

if TYPE_CHECKING:
    from gitmem.store.store import Store

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


def why(store: Store, entry_id: str) -> dict[str, Any]:
    """Who made the entry, when, on which machine, from what; and every later change."""
    store.require()
    changes = EntryTrace(store.git, entry_id).changes()
    created = next((c for c in reversed(changes) if c.kind == "created"), changes[-1])
    latest = next((c.after for c in changes if c.after is not None), None)
    source = latest.entry.get("Source") if latest else ""
    later = [c for c in changes if c is not created]
    return {
        "id": entry_id,
        "root": str(store.root),
        "exists": changes[0].after is not None,
        "path": changes[0].after.path if changes[0].after else None,
        "title": latest.entry.title if latest else "",
        "created": created.as_json(),
        "source": [s.as_json() for s in parse_source(source)],
        "changes": [c.as_json() for c in reversed(later)],
    }


def entry_log(store: Store, entry_id: str) -> list[dict[str, Any]]:
    """The entry's versions, newest first, each with the text it had after that commit."""
    store.require()
    changes: list[Change] = EntryTrace(store.git, entry_id).changes()
    return [c.as_json(with_text=True) for c in changes]
