"""state/metrics.json: counts of what gitmem did on this machine (writes, captures, model calls,
model calls saved by cost control, failures). Local and operational: never committed."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gitmem.errors import LockTimeoutError
from gitmem.eventlog import now_iso
from gitmem.fsio import file_lock, read_text, write_json_atomic

METRICS_FILE = "state/metrics.json"
_LOCK_FILE = "state/metrics.lock"
# Counting is best effort: a writer never waits long for a counter.
_LOCK_TIMEOUT = 2.0


def load_metrics(root: Path) -> dict[str, Any]:
    """The counters ({} when none were recorded yet or the file is unreadable)."""
    try:
        data = json.loads(read_text(root / METRICS_FILE))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


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
    try:
        with file_lock(root / _LOCK_FILE, _LOCK_TIMEOUT, "the metrics lock"):
            data = load_metrics(root)
            data.setdefault("since", now_iso())
            for name in names:
                _add(data, name, amount)
            data["updated"] = now_iso()
            write_json_atomic(root / METRICS_FILE, data, durable=False)
    except (OSError, LockTimeoutError):
        pass
