"""Helpers for the review queue tests: a pending digest and a consolidation pass with a fake model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from fakemodels import fake_model
from gitmem.capture.digests import PENDING, Digest, new_digest_id, write_digest
from gitmem.models import config

START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
UNSURE = "A prefetch of 50 starved the other consumers; use 10."  # confidence 0.4 (fake model)
HALF_SURE = "Staging RabbitMQ listens on port 5673."  # 55%
SURE = "The worker acks only after the handler commits."  # 0.9
NO_CONFIDENCE = "The job worker: handles queue messages and acks after processing."


def make_digest(root: Path, n: int, workspace: str = "acme-api") -> str:
    """A pending digest of session n (the fake models answer from its id alone)."""
    when = START + timedelta(minutes=n)
    digest = Digest(new_digest_id(root, f"session{n:02d}", when), {
        "session": f"session{n:02d}", "format": "claude-code", "workspace": workspace, "branch": "main",
        "first": when.isoformat(), "last": when.isoformat(), "captured": when.isoformat(),
        "summary": "model:fake", "status": PENDING, "attempts": "0", "consolidated": "",
    }, ["src/queue/worker.py"], [("2026-12-01", ["**Delivery:** the worker acks after the commit."])])
    write_digest(root, digest)
    return digest.id


def use_model(root: Path, folder: Path, kind: str = "confidence") -> None:
    """This machine's ladder: one fake model of `kind` (tests/fakemodels.py)."""
    for rung in config.load_saved_ladder(root).rungs:
        config.remove_rung(root, rung.name)
    config.add_rung(root, kind, fake_model(folder, kind))
