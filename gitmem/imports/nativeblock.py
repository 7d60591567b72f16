"""gitmem's block in Claude Code's MEMORY.md, as text: found, taken out, told from hand edits,
rendered within the window Claude Code loads (pure functions; docs/decisions/0038).

The block runs from a `<!-- gitmem: begin ... -->` line to a `<!-- gitmem: end -->` line; every
line outside it is Claude Code's (or the person's) and is never changed. Claude Code loads the
first 200 lines (and at most 25 KB) of MEMORY.md: the block is rendered so that it and the text
outside it fit together, and its last line says how many entries it leaves out and how to find
them, so nothing is silently cut.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BEGIN = ("<!-- gitmem: begin (rendered from the gitmem store; a line added here becomes an entry, "
         "edit or forget entries with gitmem) -->")
END = "<!-- gitmem: end -->"
BEGIN_MARK = "<!-- gitmem: begin"
WINDOW_LINES = 200
WINDOW_BYTES = 25_000  # Claude Code's 25 KB, with room to spare for a multi-byte line
LINE_CHARS = 150
FRAME_LINES = 4  # the markers, the heading and the last line
MORE_RESERVE = 200  # bytes kept for the last line, whatever number it ends up saying
_ENTRY_LINE = re.compile(r"^- .*\(([A-Za-z0-9_.\-:]+-[a-z]+-\d+)\)$")
_OURS = ("## gitmem memory", "- … and ", "- all ", "- no other entries of ")


@dataclass(frozen=True)
class Split:
    """MEMORY.md cut around gitmem's block (`block` None: there is none)."""

    before: list[str]
    block: list[str] | None  # the lines between the markers
    after: list[str]


@dataclass(frozen=True)
class Row:
    """One entry as the block lists it."""

    id: str
    title: str


def split(text: str) -> Split:
    """The lines before, inside and after the block (an unclosed begin is not a block)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    start = next((i for i, line in enumerate(lines) if line.startswith(BEGIN_MARK)), None)
    if start is None:
        return Split(lines, None, [])
    end = next((i for i in range(start + 1, len(lines)) if lines[i].strip() == END), None)
    if end is None:
        return Split(lines, None, [])
    return Split(lines[:start], lines[start + 1:end], lines[end + 1:])


def outside(text: str) -> str:
    """MEMORY.md without gitmem's block: what Claude Code (or the person) wrote there."""
    cut = split(text)
    if cut.block is None:
        return text
    before, after = list(cut.before), list(cut.after)
    while after and not after[0].strip() and (not before or not before[-1].strip()):
        after.pop(0)  # the blank line gitmem put after its block
    lines = before + after
    return "\n".join(lines) + "\n" if any(line.strip() for line in lines) else ""


def hand_lines(block: list[str], rendered: list[str] | None) -> list[tuple[int, str]]:
    """(index in the block, line) of the block's lines gitmem did not write: added or changed by
    hand. Without a record of the last rendering, a line in gitmem's own shapes counts as its."""
    ours = set(rendered or ())
    found = []
    for index, line in enumerate(block):
        if not line.strip() or line in ours:
            continue
        if rendered is None and (line.startswith(_OURS) or _ENTRY_LINE.match(line)):
            continue
        found.append((index, line))
    return found


def deleted_rows(block: list[str] | None, rendered: list[str] | None) -> tuple[list[tuple[str, str]], str]:
    """(Id, line) of the entry lines of the last rendering that are gone from the block now (a person or
    Claude Code deleted them), and a note when the block is read as "render again" instead: no
    record of the last rendering, no block (deleted whole, or a marker broken), or every entry
    line gone at once. A line edited in place keeps its Id: that is an edit, not a deletion."""
    if rendered is None:
        return [], ""
    listed = [(found, line) for line in rendered if (found := rendered_id(line))]
    if block is None:
        return [], "no gitmem block in MEMORY.md (removed or its markers broken): rendered again, nothing forgotten"
    present = {line.strip() for line in block}
    kept_ids = {found for line in block if (found := rendered_id(line))}
    gone = [(ident, line) for ident, line in listed if line not in present and ident not in kept_ids]
    if listed and len(gone) == len(listed):
        return [], "every entry line of the gitmem block was gone: rendered again, nothing forgotten"
    return gone, ""


def rendered_id(line: str) -> str | None:
    """The Id a block line ends with, as gitmem renders it (None: a line without one)."""
    found = _ENTRY_LINE.match(line.strip())
    return found.group(1) if found else None


def without_id(line: str) -> str:
    """A hand-edited block line as an entry's text: the list mark and a rendered Id dropped."""
    text = line.strip()
    text = text[2:] if text.startswith(("- ", "* ")) else text
    return re.sub(r"\s*\([A-Za-z0-9_.\-:]+-[a-z]+-\d+\)$", "", text).strip()


def entry_line(row: Row) -> str:
    """`- Title (Id)`, cut to LINE_CHARS with the Id kept."""
    tail = f" ({row.id})"
    title = " ".join(row.title.split())
    room = LINE_CHARS - len(tail) - 2
    if len(title) > room:
        title = title[: max(room - 1, 1)].rstrip() + "…"
    return f"- {title}{tail}"


def more_line(listed: int, total: int, workspace: str) -> str:
    """The block's last line: how many entries are left out and how to find them."""
    if total == 0:
        return f"- no other entries of {workspace} yet: `gitmem remember TEXT` records one"
    if listed >= total:
        return f"- all {total} entries are listed; `gitmem show ID` reads one in full"
    return (f"- … and {total - listed} more entries of {workspace} not listed here: "
            "`gitmem search WORDS` finds them, `gitmem show ID` reads one")


def render(rows: list[Row], workspace: str, outside_text: str, total: int | None = None) -> list[str]:
    """The block's lines (markers included): as many rows as fit the window beside
    `outside_text`, in the order given, then the line that counts the rest (of `total`, when
    `rows` are only the first of them)."""
    kept_lines = len(outside_text.split("\n")) if outside_text else 0  # with the blank line after
    room_lines = WINDOW_LINES - kept_lines
    room_bytes = WINDOW_BYTES - len(outside_text.encode("utf-8")) - 1
    heading = f"## gitmem memory ({workspace}: most important and freshest first)"
    lines = [BEGIN, heading]
    used = sum(len(line.encode("utf-8")) + 1 for line in lines) + len(END) + 1 + MORE_RESERVE
    listed = 0
    for row in rows:
        line = entry_line(row)
        size = len(line.encode("utf-8")) + 1
        if len(lines) + 2 >= room_lines or used + size > room_bytes:
            break
        lines.append(line)
        used += size
        listed += 1
    return [*lines, more_line(listed, len(rows) if total is None else total, workspace), END]


def placed(text: str, block: list[str]) -> str:
    """MEMORY.md with `block` where the old block was, else at the top (Claude Code loads the
    file's first lines: gitmem's pointer to everything else is never the part cut)."""
    cut = split(text)
    if cut.block is not None:
        lines = [*cut.before, *block, *cut.after]
    else:
        rest = cut.before
        lines = [*block, *([""] + rest if any(line.strip() for line in rest) else [])]
    return "\n".join(lines) + "\n"
