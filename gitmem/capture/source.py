"""A transcript as capture reads it: its format and session metadata, and the events after an
offset, streamed, so a second capture of a grown transcript reads only what is new and a large
one is never held in memory whole.

Two kinds of offset: a byte offset for the formats written as lines (the JSONL formats, Aider's
Markdown), and a record count for those written as a document or as one file per message (the
older Gemini CLI chat file, an OpenCode session)."""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmem.capture.formats import PARSERS, Event, SessionMeta

HEAD_BYTES = 64 * 1024
TAIL_BYTES = 256  # bytes before the watermark whose hash proves the file is the one we read


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


def head_objects(head: bytes) -> list[dict[str, Any]]:
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


class RecordTranscript(Transcript, ABC):
    """A transcript read as records (messages) in order; the offset counts whole records. Each
    format that stores a session as records (gemini.py, opencode.py) says how to list them."""

    @abstractmethod
    def record_ids(self) -> list[str]:
        """The ids of the session's records, oldest first."""

    @abstractmethod
    def record_events(self, index: int) -> list[Event] | None:
        """The events of record `index`, or None when it is still being written."""

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
