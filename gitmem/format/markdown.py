"""Parse and render topic files: text in, TopicFile out, and back (pure, no I/O).

Round trip: every entry keeps the exact text it was parsed from, so rendering an unmodified file
returns the same bytes. Only entries created or changed in memory are rendered canonically.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from gitmem.errors import ParseError
from gitmem.format.entry import Entry, TopicFile

# markdown-it normalizes \r\n and lone \r to \n; splitting the same way keeps line numbers aligned.
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
FIELD_RE = re.compile(r"^\*\*([A-Za-z][A-Za-z0-9-]*):\*\*(?:[ \t]+(.*?))?[ \t]*$")
_FRONTMATTER_OPEN = re.compile(r"---[ \t]*(?:\r\n|\r|\n)")
_FRONTMATTER_CLOSE = re.compile(r"(?:---|\.\.\.)[ \t]*(?:\r\n|\r|\n|$)")
CONFLICT_MARKER_RE = re.compile(r"^(<{7}|={7}|>{7})(?: |\r?$)", re.MULTILINE)


@lru_cache(maxsize=1)
def _block_parser() -> Any:
    """markdown-it configured for what the format needs: headings, fences, indented code."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("zero").enable(["heading", "fence", "code"])
    md.disable("inline")  # titles are read raw; inline parsing costs half the time
    return md


def split_lines(text: str) -> list[str]:
    """Lines with their endings kept, split exactly as markdown-it counts them."""
    return _LINE_RE.findall(text)


def detect_newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def _split_frontmatter(text: str, path: str) -> tuple[str, dict[str, Any], str]:
    """(raw frontmatter block, its metadata, the rest of the text)."""
    opener = _FRONTMATTER_OPEN.match(text)
    if not opener:
        return "", {}, text
    pos = opener.end()
    while pos <= len(text):
        closer = _FRONTMATTER_CLOSE.match(text, pos)
        if closer:
            raw = text[: closer.end()]
            return raw, _load_frontmatter(raw, path), text[closer.end() :]
        next_break = text.find("\n", pos)
        if next_break < 0:
            break
        pos = next_break + 1
    return "", {}, text  # an opening rule with no closing one is a thematic break, not frontmatter


def _load_frontmatter(raw: str, path: str) -> dict[str, Any]:
    import frontmatter
    import yaml

    try:
        meta = frontmatter.loads(raw.replace("\r\n", "\n").rstrip("\n") + "\n").metadata
    except yaml.YAMLError as exc:
        reason = " ".join(str(exc).split())
        raise ParseError(path, 1, f"invalid YAML frontmatter: {reason}") from None
    if not isinstance(meta, dict):
        raise ParseError(path, 1, "frontmatter must be a mapping")
    return dict(meta)


def heading_lines(body_text: str) -> list[tuple[int, str]]:
    """(0-based line, title) of every top-level `##` heading outside code."""
    tokens = _block_parser().parse(body_text)
    found: list[tuple[int, str]] = []
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2" and token.level == 0:
            assert token.map is not None
            found.append((token.map[0], tokens[index + 1].content.strip()))
    return found


def _content_end(content: list[str], *, skip_markers: bool) -> int:
    """Index after the last line that is not blank (nor a conflict marker, when asked)."""
    end = len(content)
    while end > 0 and (
        not content[end - 1].strip()
        or (skip_markers and CONFLICT_MARKER_RE.match(content[end - 1]) is not None)
    ):
        end -= 1
    return end


def _fields_start(content: list[str], end: int) -> int:
    """Index of the first line of the `**Field:** value` block that ends at `end`."""
    start = end
    while start > 0 and FIELD_RE.match(content[start - 1]):
        start -= 1
    return start


def parse_entry(lines: list[str], title: str, line_number: int) -> Entry:
    """Build an Entry from its lines (heading first); `line_number` is 1-based."""
    content = [_strip_eol(line) for line in lines[1:]]
    end = _content_end(content, skip_markers=False)
    start_fields = _fields_start(content, end)
    if start_fields == end:
        # Inside a merge conflict block a marker line follows the fields; look past it.
        marked_end = _content_end(content, skip_markers=True)
        if _fields_start(content, marked_end) < marked_end:
            end, start_fields = marked_end, _fields_start(content, marked_end)
    fields: dict[str, str] = {}
    for text in content[start_fields:end]:
        match = FIELD_RE.match(text)
        assert match is not None
        fields.setdefault(match.group(1), (match.group(2) or "").strip())
    body_lines = content[:start_fields]
    while body_lines and not body_lines[0].strip():
        body_lines.pop(0)
    while body_lines and not body_lines[-1].strip():
        body_lines.pop()
    return Entry(
        title=title,
        body="\n".join(body_lines),
        fields=fields,
        line=line_number,
        raw="".join(lines),
    )


def parse_topic_file(text: str, path: str = "<memory>") -> TopicFile:
    """Parse a topic file. Raises ParseError only for unreadable frontmatter."""
    frontmatter_raw, meta, rest = _split_frontmatter(text, path)
    offset = len(split_lines(frontmatter_raw))
    lines = split_lines(rest)
    headings = heading_lines(rest)
    first = headings[0][0] if headings else len(lines)
    entries: list[Entry] = []
    for position, (start, title) in enumerate(headings):
        stop = headings[position + 1][0] if position + 1 < len(headings) else len(lines)
        entries.append(parse_entry(lines[start:stop], title, offset + start + 1))
    return TopicFile(
        frontmatter_raw=frontmatter_raw,
        meta=meta,
        preamble="".join(lines[:first]),
        entries=entries,
        newline=detect_newline(text),
    )


def render_entry(entry: Entry, newline: str = "\n") -> str:
    """The entry's original text when unmodified, else its canonical rendering."""
    if entry.raw is not None:
        return entry.raw
    lines = [f"## {entry.title.strip()}"]
    if entry.body.strip():
        lines.extend(entry.body.strip("\n").split("\n"))
    fields = entry.ordered_fields()
    if fields:
        lines.append("")
        lines.extend(f"**{name}:** {value}".rstrip() for name, value in fields)
    return newline.join(lines) + newline


def _separator(before: str, newline: str) -> str:
    """What must follow `before` so that a canonical entry starts after a blank line."""
    if not before:
        return ""
    if before.endswith(("\n\n", "\r\n\r\n", "\r\r")):
        return ""
    if before.endswith(("\n", "\r")):
        return newline
    return newline + newline


_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def unclosed_fence(text: str) -> str | None:
    """The fence that is still open at the end of `text` (CommonMark rules), else None."""
    opener: str | None = None
    for line in split_lines(text):
        match = _FENCE_RE.match(_strip_eol(line))
        if not match:
            continue
        fence, rest = match.group(1), match.group(2)
        if opener is None:
            if not (fence[0] == "`" and "`" in rest):
                opener = fence
        elif fence[0] == opener[0] and len(fence) >= len(opener) and not rest.strip():
            opener = None
    return opener


def render_topic_file(topic: TopicFile) -> str:
    """Render back to text: unmodified parts byte for byte, new ones canonically."""
    out = topic.frontmatter_raw + topic.preamble
    previous_canonical = False
    for entry in topic.entries:
        text = render_entry(entry, topic.newline)
        if entry.raw is None:
            out = _open_for_canonical(out, topic.newline)
        elif previous_canonical:
            out += _separator(out, topic.newline)
        elif out and not out.endswith(("\n", "\r")):
            out += topic.newline  # a raw entry always starts on its own line
        out += text
        previous_canonical = entry.raw is None
    return out


def _open_for_canonical(out: str, newline: str) -> str:
    """`out` made ready for a canonical entry: any open fence closed, then a blank line."""
    fence = unclosed_fence(out)
    if fence is not None:
        # A fence left open would swallow the new entry: close it first.
        out += ("" if out.endswith(("\n", "\r")) else newline) + fence + newline
    return out + _separator(out, newline)


def append_entry_text(text: str, entry: Entry) -> str:
    """The file text with `entry` appended: what parsing, appending and rendering would give,
    without parsing (a write into an existing topic file needs no Markdown parser)."""
    newline = detect_newline(text)
    return _open_for_canonical(text, newline) + render_entry(entry.with_fields(), newline)


def render_frontmatter(meta: dict[str, Any], newline: str = "\n") -> str:
    """Deterministic YAML frontmatter block for a file gitmem creates."""
    import frontmatter

    body = frontmatter.YAMLHandler().export(meta, sort_keys=False, allow_unicode=True)
    return newline.join(["---", *body.splitlines(), "---"]) + newline


def new_topic_file(meta: dict[str, Any], heading: str, newline: str = "\n") -> TopicFile:
    """An empty topic file gitmem creates: frontmatter and an H1."""
    return TopicFile(
        frontmatter_raw=render_frontmatter(meta, newline),
        meta=dict(meta),
        preamble=f"# {heading}{newline}{newline}",
        entries=[],
        newline=newline,
    )


def conflict_marker_lines(text: str) -> list[int]:
    """1-based line numbers of git conflict markers in `text`."""
    return [text.count("\n", 0, match.start()) + 1 for match in CONFLICT_MARKER_RE.finditer(text)]
