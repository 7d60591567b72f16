"""Reading a transcript: its format and session metadata from the head, and the events after an
offset, streamed, so a second capture of a grown transcript reads only what is new and a large
one is never held in memory whole.

Two kinds of offset: a byte offset for the formats written as lines (the JSONL formats, Aider's
Markdown), and a record count for those written as a document or as one file per message (the
older Gemini CLI chat file, an OpenCode session)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmem.capture.formats import FORMATS, PARSERS, Event, SessionMeta, detect_format
from gitmem.errors import InvalidInputError, NotFoundError

HEAD_BYTES = 64 * 1024
TAIL_BYTES = 256  # bytes before the watermark whose hash proves the file is the one we read
LINE_FORMATS = ("claude-code", "codex", "gemini", "jsonl")


@dataclass
class Delta:
    """Events from `start` on. `events` is read once; `end` (just past the last complete line or
    record), `lines` and `bad_lines` are final once it has been read to its end."""

    format: str
    meta: SessionMeta
    start: int = 0
    end: int = 0
    lines: int = 0
    bad_lines: int = 0
    events: Iterator[Event] = field(default_factory=lambda: iter(()))


def decode(line: bytes | str) -> dict[str, Any] | None:
    """A JSON object, or None for anything else."""
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def head_bytes(path: Path, size: int = HEAD_BYTES) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(size)


def _head_objects(head: bytes) -> list[dict[str, Any]]:
    lines = head.split(b"\n")
    if len(head) == HEAD_BYTES:
        lines = lines[:-1]  # the last one may be cut
    return [obj for obj in map(decode, lines) if obj is not None]


class Transcript:
    """One session's transcript file: its format, its metadata, and its events after an offset."""

    def __init__(self, path: Path, fmt: str, meta: SessionMeta) -> None:
        self.path, self.format, self.meta = path, fmt, meta

    def size(self) -> int:
        """The largest offset the transcript has now."""
        return self.path.stat().st_size

    def tail(self, offset: int) -> str:
        """Hash of the TAIL_BYTES before `offset` ('' for offset 0)."""
        if offset <= 0:
            return ""
        with open(self.path, "rb") as handle:
            handle.seek(max(0, offset - TAIL_BYTES))
            return hashlib.sha1(handle.read(min(offset, TAIL_BYTES))).hexdigest()

    def delta(self, start: int) -> Delta:
        """Events of every complete line from byte `start` on (a line still being written waits)."""
        delta = Delta(self.format, self.meta, start=start, end=start)
        delta.events = self._lines(delta)
        return delta

    def _lines(self, delta: Delta) -> Iterator[Event]:
        parser = PARSERS[self.format]
        with open(self.path, "rb") as handle:
            handle.seek(delta.start)
            for raw in handle:
                obj = decode(raw)
                if not raw.endswith(b"\n") and obj is None:
                    return  # the writer is mid-line: that line waits for the next capture
                delta.end += len(raw)
                if not raw.strip():
                    continue
                delta.lines += 1
                if obj is None:
                    delta.bad_lines += 1
                    continue
                yield from parser(obj, self.meta)


class RecordTranscript(Transcript):
    """A transcript read as records (messages) in order; the offset counts whole records."""

    def record_ids(self) -> list[str]:
        raise NotImplementedError

    def record_events(self, index: int) -> list[Event] | None:
        """The events of record `index`, or None when it is still being written."""
        raise NotImplementedError

    def size(self) -> int:
        return len(self.record_ids())

    def tail(self, offset: int) -> str:
        ids = self.record_ids()
        if offset <= 0 or offset > len(ids):
            return ""
        return hashlib.sha1(f"{self.path}\n{ids[offset - 1]}".encode()).hexdigest()

    def delta(self, start: int) -> Delta:
        delta = Delta(self.format, self.meta, start=start, end=start)
        delta.events = self._records(delta)
        return delta

    def _records(self, delta: Delta) -> Iterator[Event]:
        for index in range(delta.start, len(self.record_ids())):
            events = self.record_events(index)
            if events is None:
                return
            delta.end, delta.lines = index + 1, delta.lines + 1
            yield from events


def open_transcript(path: Path, fmt: str | None) -> Transcript:
    """The transcript at `path` in its format (given or detected), its metadata read."""
    if not path.is_file():
        raise NotFoundError(f"no transcript at {path}")
    if fmt is not None and fmt not in FORMATS:
        raise InvalidInputError(f"unknown transcript format {fmt!r} (use {'|'.join(FORMATS)})")
    from gitmem.capture import aider, gemini, opencode

    head = head_bytes(path)
    found = fmt or aider.detect(path, head) or _document_format(path, head) or detect_format(_head_objects(head))
    if found is None:
        raise InvalidInputError(f"cannot tell the format of {path.name}: not a transcript gitmem "
                                f"knows ({', '.join(FORMATS)}); pass --format if it is one")
    if found == "aider":
        return aider.open_history(path)
    if found == "opencode":
        return opencode.open_session(path)
    if found == "gemini" and gemini.is_document(path, head):
        return gemini.open_document(path)
    return _open_lines(path, found, _head_objects(head))


def _document_format(path: Path, head: bytes) -> str | None:
    """The format of a transcript that is one JSON document (not lines), by its content."""
    from gitmem.capture import gemini, opencode

    if opencode.is_session_file(path, head):
        return "opencode"
    if gemini.is_document(path, head):
        return "gemini"
    return None


def _open_lines(path: Path, found: str, objects: list[dict[str, Any]]) -> Transcript:
    meta = SessionMeta()
    parser = PARSERS[found]
    for obj in objects:
        parser(obj, meta)
    if found == "claude-code":
        first = next((o for o in objects if o.get("type") in ("user", "assistant")), None)
        if first is not None and first.get("isSidechain") is True:
            meta.delegated = True  # a subagent's own transcript: every line is a sidechain
    meta.reset()  # the head was read for metadata; its events are counted when read
    meta.session = meta.session or path.stem
    return Transcript(path, found, meta)
