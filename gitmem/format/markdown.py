"""Parse and render topic files: text in, TopicFile out, and back (pure, no I/O).

Round trip: every entry keeps the exact text it was parsed from, so rendering an unmodified file
returns the same bytes (BOM, CRLF and odd spacing included). Only entries created or changed in
memory are rendered canonically.

What an entry is (docs/writing-by-hand.md says the same for people): it starts at an entry
heading (see gitmem.format.blocks) and runs to the next one. Its field block is the last run of
`**Field:** value` lines that holds a known field (runs of such lines separated only by blank
lines join it). A known field line anywhere else in the entry is a field too (an `**Id:**`
anywhere identifies the entry); text after the field block is body text someone appended. The
parsed `body` and `fields` are what normalization writes: appended text moved above the fields,
stray fields moved into the block, an unclosed fence closed. Parsing is linear in the text.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import Any

from gitmem.errors import ParseError
from gitmem.format.blocks import KNOWN_FIELDS, closes, field_match, open_fence_at_end, scan
from gitmem.format.entry import CANONICAL, Entry, Shape, TopicFile, one_line

BOM = "\ufeff"
_LINE_RE = re.compile(r"[^\n]*\n|[^\n]+$")
_FRONTMATTER_OPEN = re.compile(r"---[ \t]*\r?\n")
_FRONTMATTER_CLOSE = re.compile(r"(?:---|\.\.\.)[ \t]*(?:\r?\n|$)")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t])#+$")
CONFLICT_MARKER_RE = re.compile(r"^(<{7}|={7}|>{7})(?: |\r?$)", re.MULTILINE)


def split_lines(text: str) -> list[str]:
    """Lines with their endings kept; a line ends at "\\n" (a lone "\\r" is part of a line)."""
    return _LINE_RE.findall(text)


def detect_newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def strip_eol(line: str) -> str:
    """A line without its ending ("\\n" or "\\r\\n")."""
    if line.endswith("\n"):
        line = line[:-1]
        if line.endswith("\r"):
            line = line[:-1]
    return line


def is_blank(text: str) -> bool:
    return not text.strip(" \t")


def decode_memory_bytes(data: bytes, path: str) -> str:
    """A memory file's text; ParseError (with the line) for binary data or bytes that are not UTF-8."""
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise ParseError(path, line, "binary file (holds a NUL byte): not a memory file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ParseError(path, line, f"not UTF-8 text (byte 0x{data[exc.start]:02x})") from None


def _split(text: str) -> tuple[list[str], list[int]]:
    """(lines without endings, offset where each line starts plus one past the end)."""
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()  # the text ends with a line ending (or is empty)
    starts = [0]
    position = 0
    for part in parts:
        position += len(part) + 1
        starts.append(position)
    starts[-1] = min(starts[-1], len(text))
    texts = [part[:-1] if part[-1:] == "\r" else part for part in parts]
    if parts and not text.endswith("\n") and parts[-1].endswith("\r"):
        texts[-1] = parts[-1]  # a lone "\r" at the very end is no line ending
    return texts, starts


def _frontmatter_end(text: str) -> int:
    """Length of the frontmatter block at the start of `text` (0 when there is none)."""
    opener = _FRONTMATTER_OPEN.match(text)
    if not opener:
        return 0
    pos = opener.end()
    while pos <= len(text):
        closer = _FRONTMATTER_CLOSE.match(text, pos)
        if closer:
            return closer.end()
        next_break = text.find("\n", pos)
        if next_break < 0:
            break
        pos = next_break + 1
    return 0  # an opening rule with no closing one is a thematic break, not frontmatter


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


def heading_title(text: str) -> str:
    """The title of an entry heading line: after `##`, without a closing run of `#`."""
    rest = text[2:].strip(" \t")
    closing = _CLOSING_HASHES.search(rest)
    if closing:
        rest = rest[: closing.start()].rstrip(" \t")
    return rest


def _strip_blank_edges(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and is_blank(lines[start]):
        start += 1
    while end > start and is_blank(lines[end - 1]):
        end -= 1
    return lines[start:end]


def _field_block(content: list[str], fields_at: list[int], known_at: list[int]) -> tuple[int, int, int]:
    """(start, end, first blank line inside or -1) of the field block; end == 0 when none."""
    if not known_at:
        return 0, 0, -1
    is_field = set(fields_at)
    known = set(known_at)
    start = end = known_at[-1]
    while start - 1 in is_field:
        start -= 1
    while end + 1 in is_field:
        end += 1
    gap = -1
    while True:  # earlier runs holding a known field, separated by blank lines only, join
        above = start - 1
        while above >= 0 and is_blank(content[above]):
            above -= 1
        if above < 0 or above == start - 1 or above not in is_field:
            break
        run = above
        while run - 1 in is_field:
            run -= 1
        if not known.intersection(range(run, above + 1)):
            break
        gap, start = above + 1, run
    return start, end + 1, gap


def parse_entry(lines: list[str], title: str, line_number: int) -> Entry:
    """Build an Entry from its lines (heading first, endings kept); `line_number` is 1-based."""
    content = [strip_eol(line) for line in lines[1:]]
    found = scan(content, loose=False)
    unclosed = tuple(line_number + 1 + i for i in found.unclosed)
    return _entry("".join(lines), content, found.code, title, line_number, found.open_fence, unclosed)


def _entry(raw: str, content: list[str], inside: bytes | bytearray, title: str, line_number: int,
           open_fence: str, unclosed: tuple[int, ...]) -> Entry:
    """The Entry of `content` (its lines after the heading, without endings; `inside` marks the
    lines in fences and `unclosed` the lines of fences nothing closed, from blocks.scan)."""
    matches = {i: m for i, text in enumerate(content)
               if text[:2] == "**" and not inside[i] and (m := field_match(text)) is not None}
    known_at = [i for i, m in matches.items() if m.group(1) in KNOWN_FIELDS]
    start, end, gap = _field_block(content, list(matches), known_at)
    elsewhere = [i for i in known_at if i < start]
    fields: dict[str, str] = {}
    extra: list[tuple[str, str]] = []
    repeated: list[tuple[str, int]] = []
    for i in [i for i in matches if start <= i < end] + elsewhere:
        name, value = matches[i].group(1), (matches[i].group(2) or "").strip()
        if name in fields:
            extra.append((name, value))
            repeated.append((name, line_number + 1 + i))
        else:
            fields[name] = value
    if known_at:
        moved = set(elsewhere)
        body_lines = _strip_blank_edges(
            [t for i, t in enumerate(content[:start]) if i not in moved] if moved else content[:start])
        # Conflict markers after the fields belong to a merge conflict block, not to the entry.
        after = _strip_blank_edges([t for t in content[end:] if not CONFLICT_MARKER_RE.match(t)])
    else:
        body_lines, after = _strip_blank_edges(content), []
    left_open = False
    if unclosed or after:  # else every fence of the entry closes inside its text
        body_lines, left_open = _close_fences(body_lines, after)
    after_line = 0
    if after:
        first = next(i for i in range(end, len(content))
                     if not is_blank(content[i]) and not CONFLICT_MARKER_RE.match(content[i]))
        after_line = line_number + 1 + first
    shape = CANONICAL
    if after_line or elsewhere or gap >= 0 or left_open or repeated:
        shape = Shape(
            text_after_fields=after_line,
            fields_elsewhere=tuple(line_number + 1 + i for i in elsewhere),
            gaps_in_fields=line_number + 1 + gap if gap >= 0 else 0,
            unclosed_fence=(unclosed[0] if unclosed else line_number) if left_open else 0,
            repeated=tuple(repeated),
        )
    return Entry(title=title, body="\n".join(body_lines), fields=fields, line=line_number,
                 raw=raw, extra_fields=tuple(extra), shape=shape, open_fence=open_fence)


def _close_fences(body: list[str], after: list[str]) -> tuple[list[str], bool]:
    """The body with text found after the fields joined, every fence closed; and whether one was
    left open (a closing line right after the fields closes the body's fence)."""
    unclosed = False
    fence = open_fence_at_end(body) if body else ""
    if fence:
        unclosed = True
        if after and closes(after[0], fence):
            body = [*body, *after]
            after = []
        else:
            body = [*body, fence]
    if after:
        body = [*body, "", *after] if body else list(after)
        fence = open_fence_at_end(body)
        if fence:
            unclosed = True
            body.append(fence)
    return body, unclosed


def _body_of(text: str) -> tuple[str, int]:
    """(the text after the BOM and frontmatter, how many lines came before it)."""
    text = text.removeprefix(BOM)
    cut = _frontmatter_end(text)
    return text[cut:], text[:cut].count("\n")


def _entries(rest: str, offset: int) -> list[Entry]:
    """The entries of a file's text after its frontmatter (`offset` lines came before)."""
    texts, starts = _split(rest)
    found = scan(texts)
    headings = found.headings
    entries: list[Entry] = []
    for position, start in enumerate(headings):
        last = position + 1 == len(headings)
        stop = len(texts) if last else headings[position + 1]
        line = offset + start + 1
        entries.append(_entry(
            rest[starts[start]:starts[stop]], texts[start + 1:stop], found.code[start + 1:stop],
            heading_title(texts[start]), line, found.open_fence if last else "",
            tuple(line + i - start for i in found.unclosed[bisect_left(found.unclosed, start):
                                                          bisect_left(found.unclosed, stop)]),
        ))
    return entries


def entry_lines(text: str) -> list[int]:
    """The 1-based lines of a whole file's entry headings, as parse_topic_file finds them (BOM,
    frontmatter and CRLF included), without reading the frontmatter or building entries."""
    rest, offset = _body_of(text)
    return [offset + index + 1 for index in scan(_split(rest)[0]).headings]


def entry_at(text: str, line: int) -> Entry | None:
    """The entry whose heading is at `line` (1-based) as parse_topic_file reads it, else None."""
    return next((entry for entry in _entries(*_body_of(text)) if entry.line == line), None)


def parse_topic_file(text: str, path: str = "<memory>", *, lenient: bool = False) -> TopicFile:
    """Parse a topic file. Raises ParseError only for unreadable frontmatter; with `lenient`,
    that is recorded in `problem` instead and the entries are still read (for the catalog)."""
    bom = BOM if text.startswith(BOM) else ""
    text = text[len(bom):]
    cut = _frontmatter_end(text)
    frontmatter_raw, rest = text[:cut], text[cut:]
    problem = None
    meta: dict[str, Any] = {}
    if frontmatter_raw:
        try:
            meta = _load_frontmatter(frontmatter_raw, path)
        except ParseError as exc:
            if not lenient:
                raise
            problem = (exc.line, exc.reason)
    entries = _entries(rest, frontmatter_raw.count("\n"))
    preamble = rest[:len(rest) - sum(len(entry.raw or "") for entry in entries)]
    return TopicFile(
        frontmatter_raw=frontmatter_raw,
        meta=meta,
        preamble=preamble,
        entries=entries,
        newline=detect_newline(text),
        bom=bom,
        problem=problem,
    )


def render_entry(entry: Entry, newline: str = "\n") -> str:
    """The entry's original text when unmodified, else its canonical rendering."""
    if entry.raw is not None:
        return entry.raw
    lines = [f"## {one_line(entry.title).strip()}"]
    body = entry.body.strip("\n")
    if body.strip():
        body_lines = body.split("\n")
        lines.extend(body_lines)
        fence = open_fence_at_end(body_lines)
        if fence:
            lines.append(fence)  # a fence left open would swallow the fields
    fields = entry.ordered_fields() + list(entry.extra_fields)
    if fields:
        lines.append("")
        lines.extend(f"**{name}:** {one_line(value)}".rstrip() for name, value in fields)
    return newline.join(lines) + newline



def _separator(before: str, newline: str) -> str:
    """What must follow `before` so that a canonical entry starts after a blank line."""
    if not before:
        return ""
    if before.endswith(("\n\n", "\r\n\r\n")):
        return ""
    if before.endswith("\n"):
        return newline
    return newline + newline


def _closed(before: str, fence: str, newline: str) -> str:
    """What to add after `before` so that the fence it leaves open is closed."""
    if not fence:
        return ""
    return ("" if before.endswith("\n") or not before else newline) + fence + newline


def render_topic_file(topic: TopicFile) -> str:
    """Render back to text: unmodified parts byte for byte, new ones canonically (linear)."""
    head = topic.frontmatter_raw + topic.preamble
    parts = [topic.bom, head]
    tail = head[-4:]
    fence: str | None = None  # open at the end of the preamble: found only when it matters
    previous_canonical = False
    for index, entry in enumerate(topic.entries):
        pieces: list[str] = []
        if index == 0 and fence is None:
            preamble = [strip_eol(line) for line in split_lines(topic.preamble)]
            fence = open_fence_at_end(preamble, loose=True)
        if fence:
            pieces.append(_closed(tail, fence, topic.newline))
            tail = (tail + pieces[-1])[-4:]
        if entry.raw is None or previous_canonical:
            pieces.append(_separator(tail, topic.newline))
        elif tail and not tail.endswith("\n"):
            pieces.append(topic.newline)  # a raw entry always starts on its own line
        pieces.append(render_entry(entry, topic.newline))
        parts.extend(pieces)
        tail = (tail + "".join(pieces))[-4:]
        fence = entry.open_fence if entry.raw is not None else ""
        previous_canonical = entry.raw is None
    return "".join(parts)


def unclosed_fence(text: str) -> str | None:
    """The fence still open at the end of a file's `text` that would hide an entry appended
    after it, else None (frontmatter not skipped)."""
    return open_fence_at_end([strip_eol(line) for line in split_lines(text)], loose=True) or None


def append_entry_text(text: str, entry: Entry) -> str:
    """The file text with `entry` appended: what parsing, appending and rendering would give,
    without parsing (a write into an existing topic file needs no Markdown parser)."""
    newline = detect_newline(text)
    body = text[len(BOM):] if text.startswith(BOM) else text
    rest = body[_frontmatter_end(body):]
    out = text + _closed(text, unclosed_fence(rest) or "", newline)
    return out + _separator(out, newline) + render_entry(entry.with_fields(), newline)


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
    if "<<<<<<<" not in text and "=======" not in text and ">>>>>>>" not in text:
        return []  # the common case, found without walking every line
    return [text.count("\n", 0, match.start()) + 1 for match in CONFLICT_MARKER_RE.finditer(text)]
