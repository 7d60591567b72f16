"""Reading a transcript file: its format and session metadata from the head of the file, and the
events after a byte offset, so a second capture of a grown transcript reads only what is new."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmem.capture.formats import FORMATS, PARSERS, Event, SessionMeta, detect_format
from gitmem.errors import InvalidInputError, NotFoundError

HEAD_BYTES = 64 * 1024
TAIL_BYTES = 256  # bytes before the watermark whose hash proves the file is the one we read


@dataclass
class Delta:
    """Events read from `start` to `end` (a byte offset just past the last complete line)."""

    format: str
    meta: SessionMeta
    events: list[Event] = field(default_factory=list)
    start: int = 0
    end: int = 0
    lines: int = 0
    bad_lines: int = 0


def _decode(line: bytes) -> dict[str, Any] | None:
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _head_objects(path: Path) -> list[dict[str, Any]]:
    with open(path, "rb") as handle:
        head = handle.read(HEAD_BYTES)
    lines = head.split(b"\n")
    if len(head) == HEAD_BYTES:
        lines = lines[:-1]  # the last one may be cut
    return [obj for obj in map(_decode, lines) if obj is not None]


def open_transcript(path: Path, fmt: str | None) -> tuple[str, SessionMeta]:
    """The format (given or detected) and the session metadata the head of the file holds."""
    if not path.is_file():
        raise NotFoundError(f"no transcript at {path}")
    if fmt is not None and fmt not in FORMATS:
        raise InvalidInputError(f"unknown transcript format {fmt!r} (use {'|'.join(FORMATS)})")
    objects = _head_objects(path)
    found = fmt or detect_format(objects)
    if found is None:
        raise InvalidInputError(
            f"cannot tell the format of {path.name}: pass --format {'|'.join(FORMATS)}"
        )
    meta = SessionMeta()
    parser = PARSERS[found]
    for obj in objects:
        parser(obj, meta)
    if found == "claude-code":
        first = next((o for o in objects if o.get("type") in ("user", "assistant")), None)
        if first is not None and first.get("isSidechain") is True:
            meta.delegated = True  # a subagent's own transcript: every line is a sidechain
    meta.dropped.clear()  # the head was read for metadata; its events are counted when read
    meta.session = meta.session or path.stem
    return found, meta


def tail_hash(path: Path, offset: int) -> str:
    """Hash of the TAIL_BYTES before `offset` ('' for offset 0)."""
    if offset <= 0:
        return ""
    with open(path, "rb") as handle:
        handle.seek(max(0, offset - TAIL_BYTES))
        return hashlib.sha1(handle.read(min(offset, TAIL_BYTES))).hexdigest()


def read_delta(path: Path, fmt: str, meta: SessionMeta, start: int) -> Delta:
    """Events of every complete line from byte `start` on (a line still being written waits)."""
    with open(path, "rb") as handle:
        handle.seek(start)
        data = handle.read()
    cut = data.rfind(b"\n") + 1  # only complete lines: the writer may be mid-line ...
    if cut < len(data) and _decode(data[cut:]) is not None:
        cut = len(data)  # ... unless the last line is whole JSON (a file without a final newline)
    delta = Delta(fmt, meta, start=start, end=start + cut)
    parser = PARSERS[fmt]
    for line in data[:cut].split(b"\n"):
        if not line.strip():
            continue
        delta.lines += 1
        obj = _decode(line)
        if obj is None:
            delta.bad_lines += 1
            continue
        delta.events.extend(parser(obj, meta))
    return delta
