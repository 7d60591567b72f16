"""The context card again during a long session: what it says is recorded per session when a
hook injects it (state/injections.json, this machine only), so a later injection can hand over
only what changed since, and a long session learns what other sessions wrote.

Two moments inject it again:
- after a compaction (SessionStart, source `compact`): the whole card, because the compaction
  summarised the first one away, with one line saying which sections changed since;
- every `context.refreshMinutes` minutes (0, the default: never) through the prompt hook: only
  the lines that are new since the session's last card, and how many of its lines went.

A line is recorded as a short hash of its section and text, never the text itself. What changes
with the clock and not with memory is left out of the comparison: italic lines (`_..._`, the
card's own remarks, such as how long ago working memory was updated) and the ages in brackets
(`[STALE 40d]`, a runtime item's `created=14d`)."""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem.integrate import sessionlog

if TYPE_CHECKING:
    from gitmem.verbs.context import Card

INJECTIONS_FILE = "state/injections.json"


@dataclass
class SectionChange:
    name: str
    added: list[str] = field(default_factory=list)
    removed: int = 0


@dataclass
class CardChanges:
    """What the card says now that the session's last card did not (and how much it no longer says)."""

    since: float | None  # epoch seconds of the last card (None: no card recorded)
    sections: list[SectionChange] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.sections

    def names(self) -> list[str]:
        return [s.name for s in self.sections]


_BRACKETS = re.compile(r"\[[^\]\n]*\]")
_DAYS = re.compile(r"\b\d+d\b")


def _steady(line: str) -> str:
    """The line without the ages in its brackets (`[STALE 40d]`, `[...; updated=2d]`): they grow
    with the clock, and a card a day older has not changed."""
    return _BRACKETS.sub(lambda m: _DAYS.sub("#d", m.group()), line)


def _line_hash(section: str, line: str) -> str:
    return hashlib.sha256(f"{section}\n{_steady(line)}".encode()).hexdigest()[:16]


def _compared(line: str) -> bool:
    text = line.strip()
    return bool(text) and not (text.startswith("_") and text.endswith("_"))


def fingerprint(card: Card) -> dict[str, list[str]]:
    """Section name -> the hashes of its compared lines."""
    return {s.name: [_line_hash(s.name, line) for line in s.lines if _compared(line)] for s in card.sections}


def last_card(root: Path, session: str) -> dict[str, Any]:
    return sessionlog.load(root, INJECTIONS_FILE, session)


def record_card(root: Path, session: str, card: Card, now: float | None = None) -> None:
    """Record the card a hook just injected into `session`."""
    sessionlog.save(root, INJECTIONS_FILE, session, {
        "at": time.time() if now is None else now, "workspace": card.workspace,
        "sections": fingerprint(card)})


def changes_since(card: Card, record: dict[str, Any]) -> CardChanges:
    """The lines of `card` the recorded card did not hold, section by section."""
    at = record.get("at")
    before = record.get("sections") if isinstance(record.get("sections"), dict) else {}
    assert isinstance(before, dict)
    result = CardChanges(float(at) if isinstance(at, int | float) else None)
    now = fingerprint(card)
    for section in card.sections:
        seen = set(before.get(section.name) or [])
        added = [line for line in section.lines
                 if _compared(line) and _line_hash(section.name, line) not in seen]
        removed = len(seen - set(now[section.name]))
        if added or removed:
            result.sections.append(SectionChange(section.name, added, removed))
    for name, hashes in before.items():
        if name not in now and hashes:
            result.sections.append(SectionChange(name, [], len(hashes)))
    return result


def changes_text(card: Card, changes: CardChanges) -> str:
    """The delta as the prompt hook hands it over."""
    when = time.strftime("%H:%M", time.localtime(changes.since)) if changes.since else "earlier"
    where = f"workspace {card.workspace}" if card.workspace else "global"
    parts = [f"## gitmem memory — changed since this session's card of {when} ({where})"]
    for section in changes.sections:
        lines = [f"### {section.name}", *section.added]
        if section.removed:
            lines.append(f"- _{section.removed} line(s) of the earlier card no longer shown here_")
        parts.append("\n".join(lines))
    parts.append("The rest of the card is as it was. Writing nothing is a correct outcome.")
    return "\n\n".join(parts)


def compact_note(changes: CardChanges) -> str:
    """The line the card carries when it comes again after a compaction."""
    if changes.since is None:
        return ""
    if changes.empty:
        return "_Again after the compaction; nothing changed since this session's last card._"
    return ("_Again after the compaction; changed since this session's last card: "
            f"{', '.join(changes.names())}._")


def due(record: dict[str, Any], minutes: float, now: float) -> bool:
    """Whether the cadence is due: a card is recorded and it is `minutes` old."""
    at = record.get("at")
    return minutes > 0 and isinstance(at, int | float) and (now - at >= minutes * 60 or now < at)
