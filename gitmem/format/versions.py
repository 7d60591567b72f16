"""What a topic file version's entries are made of, cheaply: for following entries through
history without parsing every version.

An entry's heading, body and fields are a function of its signature: its raw text and what the
file's scan says of its lines (fences, fences left open). Two versions of a file that share an
entry's signature share that entry exactly, so only entries whose signature changed need their
Ids read. The splitting is parse_topic_file's own (markdown.py).
"""

from __future__ import annotations

import re
from bisect import bisect_left

from gitmem.errors import ParseError
from gitmem.format.blocks import field_match, may_fence, scan
from gitmem.format.markdown import BOM, _body_of, _frontmatter_end, _load_frontmatter, _split

# raw text, fence mask of the lines after the heading, fences nothing closed (relative lines),
# the fence still open at the end of the file (last entry only)
Signature = tuple[str, bytes, tuple[int, ...], str]
# An entry heading line (blocks.is_heading) at the start of a line of the text.
_HEADING_RE = re.compile(r"^##(?=[ \t]|\r?\n|\Z)", re.MULTILINE)


def frontmatter_raw(text: str) -> str:
    """The frontmatter block a topic file starts with ("" when none)."""
    text = text.removeprefix(BOM)
    return text[:_frontmatter_end(text)]


def frontmatter_readable(raw: str) -> bool:
    """False when parse_topic_file would refuse this frontmatter."""
    try:
        _load_frontmatter(raw, "<memory>")
    except ParseError:
        return False
    return True


def entry_signatures(text: str) -> list[Signature]:
    """The signature of each entry of a topic file's text, in order."""
    rest, _offset = _body_of(text)
    if not may_fence(rest):
        return _unfenced_signatures(rest)
    texts, starts = _split(rest)
    found = scan(texts)
    headings = found.headings
    out: list[Signature] = []
    for position, start in enumerate(headings):
        last = position + 1 == len(headings)
        stop = len(texts) if last else headings[position + 1]
        unclosed = found.unclosed[bisect_left(found.unclosed, start):bisect_left(found.unclosed, stop)]
        out.append((rest[starts[start]:starts[stop]], bytes(found.code[start + 1:stop]),
                    tuple(i - start for i in unclosed), found.open_fence if last else ""))
    return out


def _unfenced_signatures(rest: str) -> list[Signature]:
    """entry_signatures of a text no line of which opens a fence: no line is code, so each
    entry is its text from one heading line to the next (found without splitting lines)."""
    bounds = [match.start() for match in _HEADING_RE.finditer(rest)]
    bounds.append(len(rest))
    out: list[Signature] = []
    for begin, end in zip(bounds, bounds[1:], strict=False):
        raw = rest[begin:end]
        lines = raw.count("\n") + (not raw.endswith("\n"))
        out.append((raw, bytes(lines - 1), (), ""))
    return out


def signature_ids(signature: Signature) -> set[str]:
    """Every Id a `**Id:**` line of the entry names (its own among them)."""
    found = set()
    for line in signature[0].split("\n"):
        if line[:7] == "**Id:**" and (match := field_match(line.removesuffix("\r"))) is not None \
                and match.group(1) == "Id" and (value := (match.group(2) or "").strip()):
            found.add(value)
    return found
