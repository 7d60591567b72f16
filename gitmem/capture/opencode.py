"""OpenCode's sessions, one JSON file per session, message and part under its storage folder
(`~/.local/share/opencode/storage`, under `$XDG_DATA_HOME` when set):

    session/<project id>/<session id>.json   the session: id, directory, parentID (a subagent's)
    message/<session id>/<message id>.json   a message: role, time.created, time.completed
    part/<message id>/<part id>.json         its parts: text, reasoning, tool, file, patch, ...

The transcript gitmem is given is the session file; its messages are the records, in the order
they were created, and the offset counts them. An assistant message that has not completed yet is
the end of what is read: it waits for the next capture. Later OpenCode versions keep the same
messages and parts in a database (opencode_db.py), read by the same functions below; the
watermark names a message by its session and id alone, so a session that moved goes on."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gitmem.capture.formats import Event, SessionMeta
from gitmem.capture.source import RecordTranscript, decode
from gitmem.errors import InvalidInputError


def is_session_file(path: Path, head: bytes) -> bool:
    """An OpenCode session file: session/<project>/<id>.json holding a session object."""
    if path.suffix != ".json" or path.parent.parent.name != "session":
        return False
    obj = decode(head)
    return obj is not None and str(obj.get("id", "")).startswith("ses") and (
        "projectID" in obj or "directory" in obj)


def _load(path: Path) -> dict[str, Any] | None:
    try:
        return decode(path.read_bytes())
    except OSError:
        return None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def iso_millis(millis: Any) -> str:
    """An ISO 8601 UTC time from milliseconds since the epoch ('' for anything else)."""
    if not isinstance(millis, int | float) or isinstance(millis, bool):
        return ""
    stamp = datetime.fromtimestamp(millis / 1000, UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


class OpenCodeSession(RecordTranscript):
    """A session's messages, each with its parts."""

    def __init__(self, path: Path, meta: SessionMeta, storage: Path) -> None:
        super().__init__(path, "opencode", meta)
        self.storage = storage
        self._messages: list[tuple[str, dict[str, Any]]] | None = None

    def _listed(self) -> list[tuple[str, dict[str, Any]]]:
        if self._messages is None:
            folder = self.storage / "message" / self.meta.session
            found = []
            for file in sorted(folder.glob("*.json")) if folder.is_dir() else []:
                message = _load(file)
                if message is not None:
                    created = _object(message.get("time")).get("created", 0)
                    found.append((created if isinstance(created, int | float) else 0, file.stem, message))
            found.sort(key=lambda item: (item[0], item[1]))
            self._messages = [(stem, message) for _, stem, message in found]
        return self._messages

    def record_ids(self) -> list[str]:
        return [stem for stem, _ in self._listed()]

    def record_events(self, index: int) -> list[Event] | None:
        messages = self._listed()
        stem, message = messages[index]
        return message_events(message, self._parts(stem), self.meta, last=index == len(messages) - 1)

    def tail(self, offset: int) -> str:
        ids = self.record_ids()
        return record_tail(self.meta.session, ids[offset - 1]) if 0 < offset <= len(ids) else ""

    def _parts(self, message_id: str) -> list[dict[str, Any]]:
        folder = self.storage / "part" / message_id
        files = sorted(folder.glob("*.json")) if folder.is_dir() else []
        return [part for part in map(_load, files) if part is not None]


def record_tail(session: str, message_id: str) -> str:
    """The watermark's proof of a session's last message read: its session and message ids, so
    a session OpenCode moved from its JSON storage into its database (ids kept) goes on where it
    stopped."""
    return hashlib.sha1(f"opencode\n{session}\n{message_id}".encode()).hexdigest()


def message_events(message: dict[str, Any], parts: list[dict[str, Any]], meta: SessionMeta, *,
                   last: bool) -> list[Event] | None:
    """The events of one message and its parts (as either storage keeps them); None for the last
    message when it is an assistant's reply still being written."""
    role = str(message.get("role") or "")
    times = _object(message.get("time"))
    if role == "assistant" and not times.get("completed") and not message.get("error") and last:
        return None  # still being written
    path = message.get("path")
    if isinstance(path, dict) and isinstance(path.get("cwd"), str):
        meta.cwd = meta.cwd or path["cwd"]
    ts = iso_millis(times.get("created"))
    injected = role == "assistant" and message.get("summary") is True  # a compaction's summary
    events: list[Event] = []
    for part in parts:
        events += part_events(part, "assistant" if role == "assistant" else "user", ts, injected, meta)
    return events


def part_events(part: dict[str, Any], role: str, ts: str, injected: bool, meta: SessionMeta) -> list[Event]:
    kind = part.get("type")
    if kind == "text" and isinstance(part.get("text"), str) and not part.get("ignored"):
        return [Event(role, part["text"], ts, injected=injected or part.get("synthetic") is True)]
    if kind == "tool":
        state = _object(part.get("state"))
        if "output" in state or "error" in state:
            meta.drop("tool results")
        return [Event("tool", ts=ts, tool=str(part.get("tool") or ""), args=state.get("input"))]
    if kind == "file":
        source = _object(part.get("source"))
        return [Event("tool", ts=ts, tool="file", args={"path": source.get("path") or part.get("filename")})]
    if kind == "patch":
        return [Event("tool", ts=ts, tool="patch", args={"files": part.get("files")})]
    if kind == "subtask":
        return [Event("tool", ts=ts, tool="task", args={"agent": part.get("agent")})]
    if kind == "reasoning":
        meta.drop("thinking")
    elif kind == "compaction":
        meta.drop("injected")
    return []


def open_session(path: Path) -> OpenCodeSession:
    info = _load(path)
    if info is None or not isinstance(info.get("id"), str):
        raise InvalidInputError(f"{path.name}: not an OpenCode session file (session/<project>/<id>.json)")
    meta = SessionMeta()
    meta.session = info["id"]
    meta.cwd = str(info.get("directory") or "")
    meta.delegated = bool(info.get("parentID"))  # a subagent's session: its caller records
    return OpenCodeSession(path, meta, path.parent.parent.parent)


def sessions_folder(path: Path) -> bool:
    """True for a storage folder's message/ and part/ folders: no transcript is in them."""
    return path.name in ("message", "part") and (path.parent / "session").is_dir()
