"""When each scheduled job runs next: a fixed period with jitter, doubled after each failure.

Pure arithmetic over epoch seconds; the server's scheduler thread runs the jobs.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

JITTER = 0.1  # each wait is the period +-10%, so machines started together do not sync together
MAX_BACKOFF_SECONDS = 24 * 3600.0
FIRST_RUN_SECONDS = 30.0  # the first run comes soon after start, not a whole period later


@dataclass
class Job:
    """One scheduled job and what happened at its last run."""

    name: str
    every: float  # seconds; 0: never
    next_at: float = 0.0
    failures: int = 0
    last_at: float | None = None
    last_result: str | None = None
    last_seconds: float | None = None
    rng: random.Random = field(default_factory=random.Random, repr=False)

    @property
    def enabled(self) -> bool:
        return self.every > 0

    def jittered(self, seconds: float) -> float:
        return seconds * self.rng.uniform(1 - JITTER, 1 + JITTER)

    def start(self, now: float) -> None:
        """The first run: soon after the server starts."""
        self.next_at = now + self.jittered(min(self.every, FIRST_RUN_SECONDS))

    def finished(self, now: float, result: str, ok: bool, seconds: float) -> None:
        """Record a run and plan the next: the period again, or twice the last wait on failure."""
        self.last_at, self.last_result, self.last_seconds = now, result, seconds
        self.failures = 0 if ok else self.failures + 1
        wait = self.every * (2 ** min(self.failures, 16))
        self.next_at = now + self.jittered(min(max(wait, self.every), max(self.every, MAX_BACKOFF_SECONDS)))

    def as_json(self) -> dict[str, Any]:
        return {
            "every": self.every,
            "next": iso(self.next_at) if self.enabled else None,
            "last": iso(self.last_at) if self.last_at else None,
            "result": self.last_result,
            "seconds": round(self.last_seconds, 3) if self.last_seconds is not None else None,
            "failures": self.failures,
        }


def iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(epoch))


def due(jobs: list[Job]) -> Job | None:
    """The enabled job that comes next."""
    enabled = [job for job in jobs if job.enabled]
    return min(enabled, key=lambda job: job.next_at) if enabled else None
