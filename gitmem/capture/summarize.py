"""Turning filtered material into digest bullets: the summary prompt and the reading of its reply
(with a model), or deterministic clipped notes (without one)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gitmem.capture.relevance import Material, clip
from gitmem.models.reply import fresh_lines

NO_DURABLE = "NO_DURABLE_CONTENT"
MAX_BULLETS = 12
MAX_NOTES = 24
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+(.+?)\s*$")
_PLACEHOLDER = re.compile(r"^\*\*label:\*\*\s*fact\b", re.IGNORECASE)

INSTRUCTIONS = f"""\
You are distilling part of a coding session into long-term memory notes.

Write 5 to 12 bullets, one per line, each shaped like this:
- **label:** the fact, in one or two plain sentences
Keep what a later session would need and could not easily rediscover: decisions and the reasons
for them, constraints, preferences the people stated, facts about the environment (paths,
versions, ports, commands that work or fail), and lessons from mistakes. When a fact holds only
for a while, start it with the date (YYYY-MM-DD). Leave out tool mechanics, code, progress
updates, greetings and thanks. Reply with the bullets only.
If nothing in the material is worth keeping, the whole reply is the single line {NO_DURABLE}.
"""


@dataclass(frozen=True)
class Summary:
    """A reply read: the bullets, or the model's conclusion that nothing is durable."""

    bullets: list[str]
    nothing_durable: bool = False


def summary_prompt(material: Material, context: str) -> str:
    """The prompt: instructions, a line about the session, the files touched, the turns."""
    lines = [INSTRUCTIONS, f"Session: {context}"]
    if material.tool_calls:
        lines.append(f"Tool calls: {material.tool_calls}")
    if material.paths:
        lines.append("Files touched: " + ", ".join(material.paths))
    lines += ["", "Material (oldest first, one turn per line):"]
    lines += [f"{turn.role}: {turn.text}" for turn in material.turns]
    return "\n".join(lines) + "\n"


def parse_summary(reply: str, prompt: str) -> Summary | None:
    """Bullets from the reply's own lines (echoed prompt lines ignored); None when unreadable."""
    lines = fresh_lines(reply, prompt)
    bullets: list[str] = []
    for line in lines:
        match = _BULLET.match(line)
        if not match:
            continue
        text = " ".join(match.group(1).split())
        if len(text) < 8 or _PLACEHOLDER.match(text) or text.strip("*: ") == NO_DURABLE:
            continue
        bullets.append(clip(text, 600))
        if len(bullets) == MAX_BULLETS:
            break
    if bullets:
        return Summary(bullets)  # a stray NO_DURABLE_CONTENT next to facts loses nothing
    if any(line.strip().strip(".*`'\" ") == NO_DURABLE for line in lines):
        return Summary([], nothing_durable=True)
    return None


def clipped_notes(material: Material) -> list[tuple[str, list[str]]]:
    """Without a model: the newest turns as short notes, grouped by the day they happened."""
    sections: dict[str, list[str]] = {}
    for turn in material.turns[-MAX_NOTES:]:
        day = turn.ts[:10] if len(turn.ts) >= 10 else ""
        sections.setdefault(day, []).append(f"**{turn.role}:** {clip(turn.text, 300)}")
    return list(sections.items())
