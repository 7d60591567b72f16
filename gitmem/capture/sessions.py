"""Per-session watermarks (state/sessions.json): how far each transcript has been captured, so a
second capture of a grown transcript reads only the new events, and how many times a failed
summary of the waiting material has been tried."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from gitmem.fsio import load_json_object, write_json_atomic

SESSIONS_FILE = "state/sessions.json"
# Past this many sessions the watermarks of transcripts that are gone are forgotten first, then
# the oldest: a forgotten watermark means its transcript is read again, so a session folder that
# is captured on a schedule must fit (thousands of sessions do).
MAX_SESSIONS = 20_000


@dataclass
class Watermark:
    """Where capture of one session stands."""

    offset: int = 0  # byte offset just past the last event captured
    tail: str = ""  # hash of the bytes before `offset`: proves the file is the one read
    last_ts: str = ""  # timestamp of the last event captured (a fallback when the file changed)
    events: int = 0  # lines read so far
    attempts: int = 0  # failed summaries of the material waiting after `offset`
    updated: str = ""
    path: str = ""


def _load_all(root: Path) -> dict[str, Any]:
    return load_json_object(root / SESSIONS_FILE)


def load_watermark(root: Path, session: str) -> Watermark:
    raw = _load_all(root).get(session)
    if not isinstance(raw, dict):
        return Watermark()
    known = Watermark.__dataclass_fields__
    return Watermark(**{k: v for k, v in raw.items() if k in known})


def save_watermark(root: Path, session: str, mark: Watermark) -> None:
    data = _load_all(root)
    data[session] = asdict(mark)
    if len(data) > MAX_SESSIONS:
        ordered = sorted(data.items(), key=_keep_order)
        data = dict(ordered[-MAX_SESSIONS:])
    write_json_atomic(root / SESSIONS_FILE, data, durable=False)


def _keep_order(item: tuple[str, Any]) -> tuple[bool, str]:
    """Sort key of a watermark: those whose transcript is gone first, then the oldest."""
    mark = item[1] if isinstance(item[1], dict) else {}
    path = str(mark.get("path") or "")
    return bool(path) and Path(path).exists(), str(mark.get("updated", ""))


def marks_by_session(root: Path) -> dict[str, Watermark]:
    """Every watermark, keyed by its session (one read of the file)."""
    known = Watermark.__dataclass_fields__
    return {session: Watermark(**{k: v for k, v in raw.items() if k in known})
            for session, raw in _load_all(root).items() if isinstance(raw, dict)}


def marks_by_path(root: Path) -> dict[str, Watermark]:
    """Every watermark, keyed by the absolute path of its transcript (one read of the file)."""
    return {mark.path: mark for mark in marks_by_session(root).values() if mark.path}
