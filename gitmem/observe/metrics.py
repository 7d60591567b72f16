"""state/metrics.json: counts of what gitmem did on this machine (writes, captures, model calls,
model calls saved by cost control, failures). Local and operational: never committed."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gitmem.errors import LockTimeoutError
from gitmem.eventlog import now_iso
from gitmem.fsio import file_lock, json_text, load_json_object, open_regular

METRICS_FILE = "state/metrics.json"
_LOCK_FILE = "state/metrics.lock"
# Counting is best effort: a writer never waits long for a counter.
_LOCK_TIMEOUT = 2.0


def load_metrics(root: Path) -> dict[str, Any]:
    """The counters ({} when none were recorded yet or the file is unreadable)."""
    return load_json_object(root / METRICS_FILE)


def _add(data: dict[str, Any], dotted: str, amount: int) -> None:
    """Add to a counter named by a dotted path ("modelCalls.summarize"), creating levels."""
    *parents, leaf = dotted.split(".")
    level = data
    for name in parents:
        child = level.get(name)
        if not isinstance(child, dict):
            child = {}
            level[name] = child
        level = child
    current = level.get(leaf)
    level[leaf] = (current if isinstance(current, int) else 0) + amount


def bump(root: Path, counters: Iterable[str], amount: int = 1) -> None:
    """Add `amount` to each named counter; never raises (a lost count is not worth a failed write)."""
    names = list(counters)
    if not names:
        return
    path = root / METRICS_FILE
    try:
        with file_lock(root / _LOCK_FILE, _LOCK_TIMEOUT, "the metrics lock"):
            fd = open_regular(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                _bump_file(fd, names, amount)
            finally:
                os.close(fd)
    except (OSError, LockTimeoutError):
        pass


def _bump_file(fd: int, names: list[str], amount: int) -> None:
    """Rewrite the counters in place. Replacing or truncating the file makes ext4 flush it (a few
    ms on every write of the store); overwriting from the start and padding with spaces (JSON
    ignores them) does not. Torn by a crash, the counters start over: they are only counts."""
    old = b""
    while chunk := os.read(fd, 65536):
        old += chunk
    try:
        data = json.loads(old) if old.strip() else {}
    except ValueError:
        data = {}
    if not isinstance(data, dict):
        data = {}
    data.setdefault("since", now_iso())
    for name in names:
        _add(data, name, amount)
    data["updated"] = now_iso()
    raw = json_text(data).encode("utf-8")
    os.pwrite(fd, raw + b" " * max(0, len(old) - len(raw)), 0)
