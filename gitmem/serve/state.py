"""state/serve.json: what the server says about itself (pid, schedule), read by `gitmem status`."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from gitmem.fsio import pid_alive, write_json_atomic

STATE_FILE = "state/serve.json"
LOCK_FILE = "state/serve.lock"


def iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(epoch))


def now_iso() -> str:
    return iso(time.time())


def read(root: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((root / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write(root: Path, data: dict[str, Any]) -> None:
    write_json_atomic(root / STATE_FILE, data, durable=False, mode=0o600)


def describe(root: Path) -> dict[str, Any]:
    """Whether a server is up for this store, and its schedule (for `gitmem status`)."""
    data = read(root) or {}
    pid = data.get("pid")
    up = isinstance(pid, int) and pid_alive(pid) and os.path.exists(root / "state" / "serve.sock")
    jobs = data.get("jobs") if isinstance(data.get("jobs"), dict) else {}
    return {"up": up, "pid": pid if up else None, "started": data.get("started") if up else None,
            "jobs": jobs if up else {}, "lastStopped": data.get("stopped")}
