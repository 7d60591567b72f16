"""Project documents in the search index: a managed copy (documents/active|archived/*.md) becomes
one search document per section, titled `<document title> › <heading>` and citing the heading's
line, so that a hit in a long document points where the words are."""

from __future__ import annotations

import re
from typing import Any

from gitmem.format.document import DOCUMENT_COPY_RE, split_copy

_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_MARKER_BLOCK_RE = re.compile(r"^<{7}(?: |$).*?^>{7}(?: |$)", re.MULTILINE | re.DOTALL)


def document_sections(relpath: str, text: str, body_chars: int) -> list[dict[str, Any]]:
    """A managed document copy as search documents: one per section, so that a hit cites the
    line of its heading. Active copies are live; archived ones are found only with --all."""
    match = DOCUMENT_COPY_RE.match(relpath)
    assert match is not None
    values, body, first_line = split_copy(text)
    name = relpath.rsplit("/", 1)[-1].removesuffix(".md")
    title = " ".join(str(values.get("title") or name).split())
    base = {
        "path": relpath, "id": str(values.get("id") or ""), "scope": classify_scope(relpath),
        "layer": "documents", "topic": name, "importance": "normal", "volatility": "stable",
        "verified": str(values.get("updatedAt") or "")[:10], "created": "", "valid_until": "",
        "source": "", "status": "live" if match["status"] == "active" else "archived",
        "conflicted": bool(_MARKER_BLOCK_RE.search(text)),
    }
    docs = []
    for line, heading, section in _sections(body, first_line):
        label = f"{title} › {heading}" if heading and heading != title else title
        short = section[:body_chars] if len(section) > body_chars else section
        docs.append({**base, "line": line, "title": label, "body": short, "full_body": section})
    return docs


def classify_scope(relpath: str) -> str:
    """`global` or the workspace key of a path under a scope folder."""
    head, _, rest = relpath.partition("/")
    return head if head == "global" else rest.partition("/")[0]


def _sections(body: str, first_line: int) -> list[tuple[int, str, str]]:
    """(line, heading, text) of each ATX-headed section of a Markdown body (fences respected);
    text before the first heading is a section without a heading."""
    sections: list[tuple[int, str, list[str]]] = [(first_line, "", [])]
    fence = ""
    for offset, line in enumerate(body.split("\n")):
        opened = _FENCE_RE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
        elif opened:
            fence = opened.group(1)
        else:
            heading = _HEADING_RE.match(line.rstrip("\r"))
            if heading:
                sections.append((first_line + offset, (heading.group(2) or "").strip(), []))
                continue
        sections[-1][2].append(line.rstrip("\r"))
    return [(line, heading, "\n".join(lines).strip()) for line, heading, lines in sections
            if heading or "\n".join(lines).strip()]
