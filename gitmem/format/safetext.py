"""Text given to a write, made safe to land in an entry so that it parses back unchanged (pure).

Every write verb passes the text it records through `clean_text` and `safe_text`; parsing the
entry it wrote gives back exactly the safe text. What changes, and how it still reads the same in
Markdown (docs/writing-by-hand.md lists it for people):

- "\\r\\n" line endings become "\\n"; a "\\r" inside a line is kept (it is no line ending
  here), one at the end of a line or of the text goes with the line ending;
- blank lines (spaces, tabs, "\\r" only) at the start and at the end, and spaces and "\\r" at
  the very end, are dropped; the first line keeps its indentation;
- a line that would read as a field (`**Id:** ...`, any known field name) gets one leading
  space: a field line starts at column 0, and Markdown shows the line the same;
- outside code fences, a line that would read as an entry heading (`##` at column 0, or after up
  to three spaces) gets a backslash before its `##`: Markdown shows `## text` as text;
- a line that looks like a git conflict marker gets a backslash in front;
- a fence the text opens and never closes is closed at its end, inside the entry.
"""

from __future__ import annotations

import re

from gitmem.format.blocks import is_known_field, scan
from gitmem.format.markdown import CONFLICT_MARKER_RE

_HEADING_LIKE = re.compile(r"^( {0,3})(##(?:[ \t]|$))")
_CLOSING_HASHES = re.compile(r"(^|[ \t])(#+)$")


def clean_text(text: str) -> str:
    """Line endings to "\\n", blank lines at both ends and trailing spaces dropped."""
    lines = [line.rstrip("\r") for line in text.split("\n")]
    start, end = 0, len(lines)
    while start < end and not lines[start].strip(" \t\r"):
        start += 1
    while end > start and not lines[end - 1].strip(" \t\r"):
        end -= 1
    kept = lines[start:end]
    if kept:
        # "\r" and spaces both count as the end of the text: stripping only one of them could
        # bring the other to the end, and a second pass would strip again.
        kept[-1] = kept[-1].rstrip(" \t\r")
    return "\n".join(kept)


def safe_text(text: str) -> str:
    """`clean_text`, with fields, entry headings and conflict markers escaped and fences closed.

    Idempotent: safe text is left as it is."""
    lines = clean_text(text).split("\n")
    if lines == [""]:
        return ""
    lines = [" " + line if is_known_field(line) else line for line in lines]
    lines = ["\\" + line if CONFLICT_MARKER_RE.match(line) else line for line in lines]
    found = scan(lines, loose=False)
    for index, line in enumerate(lines):
        if not found.code[index]:
            lines[index] = _HEADING_LIKE.sub(r"\1\\\2", line)
    if found.open_fence:
        lines.append(found.open_fence)
    return "\n".join(lines)


def safe_title(title: str) -> str:
    """A heading title on one line; a closing run of `#` (which Markdown would drop) escaped."""
    text = " ".join(title.split())
    return _CLOSING_HASHES.sub(lambda m: f"{m.group(1)}\\{m.group(2)}", text)
