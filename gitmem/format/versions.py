"""What a topic file version's entries are made of, cheaply: for following entries through
history without parsing every version.

An entry's heading, body and fields are a function of its signature: its raw text and what the
file's scan says of its lines (fences, fences left open). Two versions of a file that share an
entry's signature share that entry exactly, so only entries whose signature changed need their
Ids read. The splitting is parse_topic_file's own (markdown.py).
"""

from __future__ import annotations

from bisect import bisect_left

from gitmem.errors import ParseError
from gitmem.format.blocks import field_match, scan
from gitmem.format.markdown import BOM, _body_of, _frontmatter_end, _load_frontmatter, _split

# raw text, fence mask of the lines after the heading, fences nothing closed (relative lines),
# the fence still open at the end of the file (last entry only)
Signature = tuple[str, bytes, tuple[int, ...], str]


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


def signature_ids(signature: Signature) -> set[str]:
    """Every Id a `**Id:**` line of the entry names (its own among them)."""
    found = set()
    for line in signature[0].split("\n"):
        if line[:2] == "**" and (match := field_match(line.removesuffix("\r"))) is not None \
                and match.group(1) == "Id" and (value := (match.group(2) or "").strip()):
            found.add(value)
    return found
