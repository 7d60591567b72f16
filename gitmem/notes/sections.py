"""Markdown notes split into entries: front matter read, headings outside code fences cut the
text into sections, each section with text becomes one note (pure functions of text).

- The first level-1 heading names the document; it is an entry only when text follows it.
- Every other heading starts a section; a section's text runs to the next heading. A section
  with no text of its own (only sub-headings) makes no entry.
- A note's anchor is the path of headings down to it (`style/python`), made unique in its file.
- A file without headings is one note named by its file stem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

from gitmem.format.layers import canonical_slug
from gitmem.notes.frontmatter import simple_front_matter
from gitmem.notes.model import Note, malformed

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when installed: ~10x faster
_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class Section:
    level: int  # 0: text before any heading
    title: str
    body: str
    line: int
    anchor: str


def anchor_part(text: str) -> str:
    """A heading as one step of an anchor: its slug, else its text without separators."""
    return canonical_slug(text) or re.sub(r"[\s/#,]+", "-", text.strip().lower()) or "_"


def split_front_matter(text: str, path: str) -> tuple[dict[str, Any], str, int]:
    """(front matter, the text after it, the line that text starts on)."""
    if not text.startswith("---\n"):
        return {}, text, 1
    end = text.find("\n---", 3)
    while end != -1 and text[end + 4: end + 5] not in ("\n", ""):
        end = text.find("\n---", end + 4)
    if end == -1:
        raise malformed(path, 1, "front matter is not closed by a '---' line")
    raw = text[4:end + 1]
    simple = simple_front_matter(raw)
    if simple is not None:
        return simple, *_after(text, end)
    try:
        meta = yaml.load(raw, Loader=_LOADER) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
        line = (mark.line + 2) if mark is not None else 1
        raise malformed(path, line, "front matter is not valid YAML") from None
    if not isinstance(meta, dict):
        raise malformed(path, 2, "front matter is not a mapping of keys to values")
    return meta, *_after(text, end)


def _after(text: str, end: int) -> tuple[str, int]:
    """The text after the front matter's closing line (at `end`), and the line it starts on."""
    rest = text[end + 4:].lstrip("\n")
    return rest, text[: len(text) - len(rest)].count("\n") + 1


def sections(text: str, first_line: int = 1) -> list[Section]:
    """The text cut at headings outside fences (see the module text)."""
    found: list[Section] = []
    stack: list[tuple[int, str]] = []
    title, level, start = "", 0, first_line
    body: list[str] = []
    fence = ""
    used: dict[str, int] = {}

    def close() -> None:
        content = "\n".join(body).strip("\n")
        path = "/".join(anchor_part(t) for _, t in stack) or "_"
        count = used.get(path, 0) + 1
        used[path] = count
        found.append(Section(level, title, content, start, path if count == 1 else f"{path}-{count}"))

    for number, line in enumerate(text.split("\n"), first_line):
        if fence:
            fence = "" if line.strip().startswith(fence) and not line.strip().strip(fence[0]) else fence
            body.append(line)
            continue
        opened = _FENCE_RE.match(line)
        if opened:
            fence = opened.group(1)
            body.append(line)
            continue
        heading = _HEADING_RE.match(line)
        if heading is None:
            body.append(line)
            continue
        close()
        level, title, start, body = len(heading.group(1)), heading.group(2).strip(), number, []
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
    close()
    return found


def notes_of(text: str, topic: str, fallback_title: str, *, first_line: int = 1,
             scope: str = "workspace", layer: str | None = None) -> list[Note]:
    """The notes of a Markdown text (see the module text)."""
    cut = sections(text, first_line)
    h1 = next((s for s in cut if s.level == 1), None)
    notes = []
    for section in cut:
        if not section.body.strip():
            continue
        if section.level == 0:
            title = h1.title if h1 is not None else fallback_title
        else:
            title = section.title or fallback_title
        notes.append(Note(anchor=section.anchor, title=title, body=section.body.strip(), topic=topic,
                          line=section.line, scope=scope, layer=layer))
    return notes
