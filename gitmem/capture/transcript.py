"""Opening a transcript: its format, given or detected from its name and first lines, and the
reader of that format (source.py has the readers' common part)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from gitmem.capture import aider, gemini, opencode, opencode_db
from gitmem.capture.formats import FORMATS, PARSERS, SessionMeta, detect_format
from gitmem.capture.source import Transcript, head_bytes, head_objects
from gitmem.errors import InvalidInputError, NotFoundError


def open_transcript(path: Path, fmt: str | None) -> Transcript:
    """The transcript at `path` in its format (given or detected), its metadata read."""
    if not path.is_file():
        raise NotFoundError(f"no transcript at {path}")
    if fmt is not None and fmt not in FORMATS:
        raise InvalidInputError(f"unknown transcript format {fmt!r} (use {'|'.join(FORMATS)})")
    head = head_bytes(path)
    if opencode_db.is_sqlite(head):
        with opencode_db.Database(path):  # refuses a database that is not OpenCode's, by name
            raise opencode_db.refuse_whole(path)
    found = fmt or aider.detect(path, head) or _document_format(path, head) or detect_format(head_objects(head))
    if found is None:
        raise InvalidInputError(f"cannot tell the format of {path.name}: not a transcript gitmem "
                                f"knows ({', '.join(FORMATS)}); pass --format if it is one")
    if found == "aider":
        return aider.open_history(path)
    if found == "opencode":
        return opencode.open_session(path)
    if found == "gemini" and gemini.is_document(path, head):
        return gemini.open_document(path)
    return _open_lines(path, found, head_objects(head))


def _document_format(path: Path, head: bytes) -> str | None:
    """The format of a transcript that is one JSON document (not lines), by its content."""
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
    meta.session = meta.session or _session_of(path, found)
    if found == "gemini":
        meta.cwd = gemini.project_root(path) or meta.cwd
    return Transcript(path, found, meta)


def _session_of(path: Path, found: str) -> str:
    """A transcript's session when its lines name none: Copilot's folder, another tool's file
    name; a generic JSONL file's name with a short hash of its folder, since generic logs are
    often named alike (`session.jsonl`) and a session shares its watermark of what was read."""
    if found == "copilot":
        return path.parent.name
    if found != "jsonl":
        return path.stem
    folder = hashlib.sha1(str(path.absolute().parent).encode("utf-8")).hexdigest()[:8]
    return f"{path.stem}-{folder}"
