"""Conflict blocks in a memory file: where they are, the entries they hold, each version and the
label its marker line gives it (pure: text in, values out).

A merge that meets two different edits of one entry writes both between git-style markers:

    <<<<<<< laptop-b 3f2c1d0e9b8a      (the opening line names one side's machine and commit)
    ## the entry as one side has it
    =======
    ## the entry as the other side has it
    >>>>>>> laptop-a 7e6d5c4b3a21      (the closing line names the other side)

Older stores and other tools write `ours` / `theirs` / `HEAD` / a branch name instead; those are
read as labels too, they just say less.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from gitmem.errors import ConflictError
from gitmem.format.layers import is_memory_file
from gitmem.format.markdown import CONFLICT_MARKER_RE, split_lines

# The body of the stand-in entry a held block becomes (see HeldBlocks).
PLACEHOLDER_PREFIX = "<!-- gitmem-conflict "
_PLACEHOLDER_RE = re.compile(
    r"^## [^\r\n]*\r?\n<!-- gitmem-conflict ([0-9a-f]{16}) -->\r?\n(?:\r?\n\*\*Id:\*\*[^\r\n]*\r?\n)?",
    re.MULTILINE,
)

_ID_RE = re.compile(r"^\*\*Id:\*\*[ \t]+(\S+)", re.MULTILINE)
_TITLE_RE = re.compile(r"^## +(.+?)[ \t]*$", re.MULTILINE)
_LABEL_RE = re.compile(r"^(?P<machine>\S+) (?P<commit>[0-9a-f]{7,40})$")


@dataclass(frozen=True)
class Version:
    """One side's text inside a block (marker lines excluded) and what its marker says."""

    label: str
    text: str

    @property
    def ids(self) -> list[str]:
        return _ID_RE.findall(self.text)

    @property
    def title(self) -> str | None:
        match = _TITLE_RE.search(self.text)
        return match.group(1) if match else None


@dataclass(frozen=True)
class ConflictBlock:
    """One outermost <<<<<<< ... >>>>>>> block of a file."""

    start: int  # offset of the opening marker line
    end: int  # offset just after the closing marker line (and its line ending)
    line: int  # 1-based line of the opening marker
    text: str
    versions: tuple[Version, ...]

    @property
    def ids(self) -> list[str]:
        """Entry Ids in the block, in order, each once."""
        return list(dict.fromkeys(i for v in self.versions for i in v.ids))

    @property
    def entry_id(self) -> str | None:
        ids = self.ids
        return ids[0] if ids else None

    @property
    def title(self) -> str:
        titles = [v.title for v in self.versions if v.title]
        return titles[0] if titles else f"line {self.line}"

    @property
    def is_entry_block(self) -> bool:
        """Every version is whole entries (starts with a `## ` heading)."""
        return bool(self.versions) and all(
            v.text.lstrip("\r\n").startswith("## ") for v in self.versions)


def conflict_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every outermost <<<<<<< ... >>>>>>> block (nested blocks included)."""
    spans, depth, start, pos = [], 0, 0, 0
    for line in split_lines(text):
        marker = CONFLICT_MARKER_RE.match(line)
        if marker and marker.group(1).startswith("<"):
            start = pos if depth == 0 else start
            depth += 1
        elif marker and marker.group(1).startswith(">") and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, pos + len(line)))
        pos += len(line)
    return spans


def _marker(line: str) -> tuple[str, str] | None:
    """(kind '<' '=' '>', label) of a marker line, else None."""
    match = CONFLICT_MARKER_RE.match(line)
    if match is None:
        return None
    return match.group(1)[0], line[7:].strip()


def versions_of(block: str) -> list[Version]:
    """The versions of a block, nested blocks flattened: each stretch of text between marker
    lines, labelled by the `<<<<<<<` line before it or, after a `=======`, by the `>>>>>>>`
    line that closes it."""
    lines = split_lines(block)
    marks = [_marker(line) for line in lines]
    out: list[Version] = []
    chunk: list[str] = []
    opened: str | None = None  # label of the <<<<<<< that starts the current stretch
    for index, mark in enumerate(marks + [("<", "")]):
        if mark is None:
            chunk.append(lines[index])
            continue
        if "".join(chunk).strip():
            label = opened if opened is not None else _closing_label(marks, index)
            out.append(Version(label, "".join(chunk)))
        chunk = []
        opened = mark[1] if mark[0] == "<" else None
    return out


def _closing_label(marks: list[tuple[str, str] | None], index: int) -> str:
    """Label of the first `>>>>>>>` at or after `index`."""
    for mark in marks[index:]:
        if mark is not None and mark[0] == ">":
            return mark[1]
    return ""


def conflict_blocks(text: str) -> list[ConflictBlock]:
    """Every outermost block of `text`, in order."""
    out = []
    for start, end in conflict_spans(text):
        block = text[start:end]
        line = text.count("\n", 0, start) + 1
        out.append(ConflictBlock(start, end, line, block, tuple(versions_of(block))))
    return out


def has_conflict_block(text: str) -> bool:
    return "<<<<<<<" in text and bool(conflict_spans(text))


def block_of(text: str, entry_id: str) -> ConflictBlock | None:
    """The block holding a version of the entry with this Id, else None."""
    if "<<<<<<<" not in text:
        return None
    return next((b for b in conflict_blocks(text) if entry_id in b.ids), None)


def block_titled(text: str, title: str) -> ConflictBlock | None:
    """The block holding a version of the section with this heading (state.md, working.md)."""
    if "<<<<<<<" not in text:
        return None
    wanted = " ".join(title.split()).casefold()
    for block in conflict_blocks(text):
        for version in block.versions:
            if any(" ".join(t.split()).casefold() == wanted for t in _TITLE_RE.findall(version.text)):
                return block
    return None


def lost_blocks(old: str, new: str) -> list[ConflictBlock]:
    """The blocks of `old` that `new` no longer holds byte for byte."""
    if "<<<<<<<" not in old:
        return []
    blocks = conflict_blocks(old)
    texts = [b.text for b in blocks]
    return [b for b in blocks if new.count(b.text) < texts.count(b.text)]


def keep_blocks(relpath: str, old: str, new: str) -> None:
    """Refuse (ConflictError, exit 3) a write to a memory file (topic file, state.md, working.md)
    that would change or drop a conflict block; only `gitmem resolve` settles one. (Other files
    have verbs of their own that settle them: `gitmem doc update` rewrites a document's copy.)"""
    if not is_memory_file(relpath):
        return
    lost = lost_blocks(old, new)
    if not lost:
        return
    ref = lost[0].entry_id or f"{relpath}:{lost[0].line}"
    raise ConflictError(
        f"refused: this write would change the conflict block of {ref} in {relpath}:"
        f"{lost[0].line}; settle it first with `gitmem resolve {ref} --ours|--theirs|--both`, or"
        f" edit the file and run `gitmem resolve {ref}`; nothing was written"
    )


def parse_label(label: str) -> tuple[str, str] | None:
    """(machine, short commit) of a `<machine> <commit>` label, else None."""
    match = _LABEL_RE.match(label.strip())
    return (match["machine"], match["commit"]) if match else None


@dataclass
class HeldBlocks:
    """Entry-level conflict blocks of a text held aside as one stand-in entry each, so that the
    text can be parsed, changed entry by entry and rendered without touching them, then put back
    byte for byte. A stand-in keeps the block's first heading and first Id, so a lookup of the
    conflicted entry finds it (and `is_held` tells it apart from a real entry)."""

    saved: dict[str, str] = field(default_factory=dict)

    def hold(self, text: str) -> str:
        if "<<<<<<<" not in text:
            return text
        newline = "\r\n" if "\r\n" in text else "\n"
        for start, end in reversed(conflict_spans(text)):
            block = text[start:end]
            lines = block.splitlines()
            if len(lines) < 2 or not lines[1].startswith("## "):
                continue  # not an entry-level block: left in the text around the entries
            if not block.endswith("\n"):
                block += newline
            key = hashlib.sha1(block.encode("utf-8")).hexdigest()[:16]
            self.saved[key] = block
            ident = _ID_RE.search(block)
            placeholder = f"{lines[1]}{newline}{PLACEHOLDER_PREFIX}{key} -->{newline}"
            if ident:
                placeholder += f"{newline}**Id:** {ident.group(1)}{newline}"
            text = text[:start] + placeholder + text[end:]
        return text

    def put_back(self, text: str) -> str:
        return _PLACEHOLDER_RE.sub(lambda m: self.saved.get(m.group(1), m.group(0)), text)

    def block(self, body: str) -> str | None:
        """The held block a stand-in entry's body names, else None."""
        if not body.startswith(PLACEHOLDER_PREFIX):
            return None
        return self.saved.get(body[len(PLACEHOLDER_PREFIX):].split(" ", 1)[0])


def is_held(body: str) -> bool:
    """The body of a stand-in entry for a held conflict block."""
    return body.startswith(PLACEHOLDER_PREFIX)
