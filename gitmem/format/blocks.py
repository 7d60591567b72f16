"""Where the lines of a topic file stand: entry headings, code fences, field lines (pure, O(n)).

The rule, stated for people in docs/writing-by-hand.md ("What counts as an entry"):

- Lines end at "\\n" ("\\r\\n" is one line ending); a lone "\\r" is an ordinary character, as git
  sees it.
- A fence opens at a line of at most three spaces and then three or more backticks or tildes (a
  backtick fence's info string holds no backtick), and closes at the next line of at most three
  spaces and at least as many of the same character, followed by nothing but spaces and tabs.
  Containers (lists, quotes) do not matter: the rule looks at lines, not at nesting.
- An entry heading is a line that starts with `## ` (or is `##`) at column 0 outside a fence.
- A field line is `**Name:** value` at column 0. A field line with a known name is never code:
  it ends a fence that was left open. Such a fence is *unclosed* (normalization closes it before
  the fields), and a closing fence line right after those field lines still belongs to it (that
  is where earlier versions of gitmem put it).
- Outside the text of an entry (before the first entry heading, and after a known field line)
  a fence cannot hide an entry heading: a `## ` line there always starts an entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gitmem.format.entry import FIELD_ORDER

FIELD_RE = re.compile(r"^\*\*([A-Za-z][A-Za-z0-9-]*):\*\*(?:[ \t]+(.*?))?[ \t]*$")
KNOWN_FIELDS: frozenset[str] = frozenset(FIELD_ORDER)
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_CLOSE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*$")
_FENCE_START = frozenset(" `~")


def is_heading(text: str) -> bool:
    """An entry heading line (without its line ending): `## ...` or `##` at column 0."""
    return text.startswith("##") and (len(text) == 2 or text[2] in " \t")


def field_match(text: str) -> re.Match[str] | None:
    """The match of a `**Name:** value` line (without its line ending), else None."""
    return FIELD_RE.match(text) if text.startswith("**") else None


def is_known_field(text: str) -> bool:
    match = field_match(text)
    return match is not None and match.group(1) in KNOWN_FIELDS


def fence_opener(text: str) -> str | None:
    """The fence (e.g. "```") a line opens, else None."""
    if text[:1] not in _FENCE_START:
        return None
    match = _FENCE_RE.match(text)
    if match is None:
        return None
    fence = match.group(1)
    if fence[0] == "`" and "`" in match.group(2):
        return None  # a backtick fence's info string holds no backtick
    return fence


def closes(text: str, fence: str) -> bool:
    """True when the line closes a fence opened by `fence`."""
    if text[:1] not in _FENCE_START:
        return False
    match = _CLOSE_RE.match(text)
    return match is not None and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)


@dataclass
class Scan:
    """Where the lines of a text stand (indexes are 0-based line numbers)."""

    headings: list[int]
    code: bytearray  # 1 for a line inside a fence (the fence lines included)
    unclosed: list[int]  # lines that opened a fence nothing closed
    open_fence: str  # the fence still open at the end of the text ("" when none)


def scan(texts: list[str], *, loose: bool = True) -> Scan:
    """Apply the rule above to lines given without their line endings; linear in their number.

    `loose` says whether the text starts outside an entry's text (a whole file does; an entry's
    body does not): there, a fence cannot hide an entry heading."""
    count = len(texts)
    code = bytearray(count)
    headings: list[int] = []
    unclosed: list[int] = []
    index = 0
    while index < count:
        text = texts[index]
        first = text[:1]
        if first == "#":
            if is_heading(text):
                headings.append(index)
                loose = False
            index += 1
            continue
        if first == "*":
            if is_known_field(text):
                loose = True
            index += 1
            continue
        fence = fence_opener(text) if first in _FENCE_START else None
        if fence is None:
            index += 1
            continue
        end = index + 1
        while end < count:
            line = texts[end]
            if (closes(line, fence) or (line[:2] == "**" and is_known_field(line))
                    or (loose and is_heading(line))):
                break
            end += 1
        if end < count and closes(texts[end], fence):
            code[index : end + 1] = b"\x01" * (end + 1 - index)
            index = end + 1
            continue
        code[index:end] = b"\x01" * (end - index)
        unclosed.append(index)
        if end == count:
            return Scan(headings, code, unclosed, "" if loose else fence)
        if is_heading(texts[end]):
            index = end  # outside an entry's text a heading always starts an entry
            continue
        loose = True
        while end < count and field_match(texts[end]) is not None:
            end += 1
        if end < count and closes(texts[end], fence):
            code[end] = 1  # the closing line an earlier gitmem wrote after the fields
            end += 1
        index = end
    return Scan(headings, code, unclosed, "")


def may_fence(text: str) -> bool:
    """False when no line of `text` can open a fence (no run of three backticks or tildes)."""
    return "```" in text or "~~~" in text


def open_fence_at_end(texts: list[str], *, loose: bool = False) -> str:
    """The fence still open after these lines ("" when none), by the rule above; `loose` as in
    scan (an entry's body is not loose, a whole file is)."""
    return scan(texts, loose=loose).open_fence
