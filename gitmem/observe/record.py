"""One place that records an operational event: a line in logs/memory.log, counters in
state/metrics.json, and (for what a person would want to see) a line in state/activity.jsonl."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gitmem.eventlog import log_event, now_iso, redact_value
from gitmem.observe.activity import append_activity
from gitmem.observe.metrics import bump


def record(
    root: Path,
    event: str,
    *,
    count: Iterable[str] = (),
    activity: str | None = None,
    **fields: Any,
) -> None:
    """Record one event; never raises, so recording cannot fail the work it describes.

    `count` names the counters to add one to ("writes", "modelCalls.summarize"); `activity` is
    the one-line summary shown by `gitmem log` (none: the event is logged and counted only).
    Every string is redacted before it reaches a file.
    """
    log_event(root, {"event": event, **fields})
    bump(root, count)
    if activity:
        with contextlib.suppress(OSError):
            append_activity(root, redact_value({"ts": now_iso(), "event": event, "summary": activity}))
