"""What `gitmem status` says about memory work: digests waiting for consolidation or for a
person, the last consolidation pass, the model ladder, and the counters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitmem.capture.digests import NEEDS_REVIEW, PENDING, list_digests, load_last_pass
from gitmem.models.config import ladder_report
from gitmem.observe.metrics import load_metrics


def memory_work(root: Path) -> dict[str, Any]:
    """`pending` (count), `needsReview` (digest ids), `lastConsolidation`, `ladder`, `metrics`."""
    digests = list_digests(root)
    return {
        "pending": sum(1 for d in digests if d.status == PENDING),
        "needsReview": [d.id for d in digests if d.status == NEEDS_REVIEW],
        "lastConsolidation": load_last_pass(root),
        "ladder": ladder_report(root),
        "metrics": load_metrics(root),
    }
