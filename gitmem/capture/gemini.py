"""Gemini CLI's chats. The newer chat file, `~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`,
is JSON lines (formats.gemini_line); the older one, `session-<time>-<id>.json`, is one JSON
document holding `sessionId`, `projectHash`, `startTime`, `lastUpdated`, `kind` and the
`messages` list, rewritten whole as the session goes on: its offset counts messages.

Neither names the project's folder; the project's temporary folder does, in `.project_root`,
when Gemini CLI wrote one (older versions named the folder by a hash of the path and did not)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gitmem.capture.formats import Event, SessionMeta, gemini_message
from gitmem.capture.source import RecordTranscript
from gitmem.errors import InvalidInputError

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024  # a chat file past this is refused, not loaded


def is_document(path: Path, head: bytes) -> bool:
    """The older Gemini chat file: a .json document that starts as a conversation record."""
    start = head.lstrip()[:4096]
    return (path.suffix == ".json" and start.startswith(b"{") and b'"sessionId"' in start
            and (b'"messages"' in start or b'"projectHash"' in start))


def project_root(path: Path) -> str:
    """The project folder a chat file belongs to, from `.project_root` above it ('' if none)."""
    for folder in list(path.parents)[1:4]:  # chats/../, and a subagent's chats/<parent>/../../
        marker = folder / ".project_root"
        if marker.is_file():
            try:
                return marker.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return ""
    return ""


class GeminiDocument(RecordTranscript):
    """A conversation record whose messages are read in order."""

    def __init__(self, path: Path, meta: SessionMeta, messages: list[dict[str, Any]]) -> None:
        super().__init__(path, "gemini", meta)
        self.messages = messages

    def record_ids(self) -> list[str]:
        return [str(m.get("id") or i) for i, m in enumerate(self.messages)]

    def record_events(self, index: int) -> list[Event] | None:
        return gemini_message(self.messages[index], self.meta)


def open_document(path: Path) -> GeminiDocument:
    if path.stat().st_size > MAX_DOCUMENT_BYTES:
        raise InvalidInputError(f"{path.name}: a Gemini chat file over {MAX_DOCUMENT_BYTES >> 20} MB "
                                "is not read whole; capture its .jsonl successor instead")
    try:
        data = json.loads(path.read_bytes())
    except ValueError:
        raise InvalidInputError(f"{path.name}: not a whole JSON document (Gemini CLI chat file)") from None
    if not isinstance(data, dict):
        raise InvalidInputError(f"{path.name}: not a Gemini CLI chat file (no conversation object)")
    meta = SessionMeta()
    meta.session = str(data.get("sessionId") or path.stem)
    meta.delegated = data.get("kind") == "subagent"
    directories = data.get("directories")
    if isinstance(directories, list) and directories and isinstance(directories[0], str):
        meta.cwd = directories[0]
    meta.cwd = project_root(path) or meta.cwd
    messages = [m for m in data.get("messages") or [] if isinstance(m, dict)]
    return GeminiDocument(path, meta, messages)
