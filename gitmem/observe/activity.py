"""state/activity.jsonl: a bounded feed of recent actions, one JSON object a line, newest last,
for a person asking "what has gitmem been doing here?" (`gitmem log`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from gitmem.fsio import open_regular, read_regular_file, read_text, write_text_atomic

ACTIVITY_FILE = "state/activity.jsonl"
KEEP_LINES = 500
# The file is trimmed back to KEEP_LINES once it grows past this many bytes, so an append stays
# an append almost always and the feed never grows without bound.
TRIM_BYTES = 256 * 1024


def append_activity(root: Path, record: dict[str, Any]) -> None:
    """Add one action; trims the feed to its newest KEEP_LINES lines when it grew too big."""
    path = root / ACTIVITY_FILE
    line = json.dumps(record, ensure_ascii=False, sort_keys=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:  # a FIFO or folder in its place is left alone: the feed is only a record
        fd = open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    except OSError:
        return
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")
    if path.stat().st_size > TRIM_BYTES:
        lines = read_text(path).splitlines()
        write_text_atomic(path, "\n".join(lines[-KEEP_LINES:]) + "\n", durable=False)


def recent_activity(root: Path, limit: int = 20) -> list[dict[str, Any]]:
    """The newest `limit` actions, oldest first; unreadable lines are skipped."""
    try:
        lines = read_regular_file(root / ACTIVITY_FILE).decode("utf-8", errors="replace").splitlines()
    except OSError:
        return []
    found: list[dict[str, Any]] = []
    for line in reversed(lines):
        if len(found) >= limit:
            break
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            found.append(record)
    return list(reversed(found))
