"""Per-session records the agent hooks keep on this machine (state/, never committed): when a
session was last captured at a turn's end, what its context card last said. One JSON object per
file, keyed by the agent's session id; the oldest sessions are forgotten past MAX_SESSIONS.

A record is only a record: a missing or unreadable file is empty (the next hook starts afresh),
and two hooks writing at once lose at most one of their records, which costs one extra capture
or one card repeated, never memory."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from gitmem.fsio import load_json_object, write_json_atomic

MAX_SESSIONS = 500


def session_key(session_id: str, transcript_path: str = "") -> str:
    """The key of a session: its id, else its transcript (an agent that sends no id)."""
    return session_id or transcript_path


def load(root: Path, relpath: str, session: str) -> dict[str, Any]:
    """The record of `session` in state file `relpath` ({} when there is none)."""
    found = load_json_object(root / relpath).get(session)
    return found if isinstance(found, dict) else {}


def save(root: Path, relpath: str, session: str, record: dict[str, Any]) -> None:
    """Replace the record of `session` (stamped with the time it was written)."""
    data = load_json_object(root / relpath)
    data[session] = {**record, "written": time.time()}
    if len(data) > MAX_SESSIONS:
        def written(item: tuple[str, Any]) -> float:
            value = item[1].get("written") if isinstance(item[1], dict) else None
            return float(value) if isinstance(value, int | float) else 0.0

        data = dict(sorted(data.items(), key=written)[-MAX_SESSIONS:])
    write_json_atomic(root / relpath, data, durable=False)
