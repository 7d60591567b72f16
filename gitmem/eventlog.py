"""logs/memory.log: one NDJSON line per operational event, rotated past 2 MB, secrets redacted."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from gitmem import caller
from gitmem.redaction import redact

LOG_FILE = "logs/memory.log"
LOG_ROTATE_BYTES = 2 * 1024 * 1024


def now_iso() -> str:
    return caller.local_time().strftime("%Y-%m-%dT%H:%M:%S%z")


def redact_value(value: Any) -> Any:
    """The value with every string redacted (recursively)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {str(k): redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v) for v in value]
    return value


def log_event(root: Path, record: dict[str, Any]) -> None:
    """Append one line to logs/memory.log (rotated to .1 past 2 MB); never raises."""
    try:
        path = root / LOG_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.parent.is_symlink():
            return  # the log is never written through a link (gitmem check reports it)
        if path.exists() and path.stat().st_size > LOG_ROTATE_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))
        line = json.dumps({"ts": now_iso(), **redact_value(record)}, ensure_ascii=False)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) \
            | getattr(os, "O_NONBLOCK", 0)  # a FIFO in the log's place is not waited on
        fd = os.open(path, flags, 0o666)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")
    except OSError:
        pass
