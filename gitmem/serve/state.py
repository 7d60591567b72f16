"""state/serve.json written by the server (pid, identity, schedule); read by
gitmem/store/serverstate.py, which `gitmem status` uses without importing the server."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from gitmem.fsio import write_json_atomic
from gitmem.store.serverstate import STATE_FILE, read

__all__ = ["LOCK_FILE", "START_FILE", "STATE_FILE", "iso", "now_iso", "read", "write"]

LOCK_FILE = "state/serve.lock"  # held by the one server of the store
START_FILE = "state/serve.start"  # held by whoever is starting a server, until it has bound
LOG_FILE = "state/serve.log"  # what a server started by a call prints


def iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(epoch))


def now_iso() -> str:
    return iso(time.time())


def write(root: Path, data: dict[str, Any]) -> None:
    write_json_atomic(root / STATE_FILE, data, durable=False, mode=0o600)
