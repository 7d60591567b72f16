"""Helpers the bench scripts share: medians in milliseconds, the `python -c pass` reference, and
printing a result as `key: value` lines or JSON."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile of a non-empty sample."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def median_ms(samples: list[float]) -> float:
    """The median of samples in seconds, in milliseconds to one decimal."""
    return round(statistics.median(samples) * 1000, 1)


def python_start() -> float:
    """Seconds for `python -c pass`: the floor under any CLI process."""
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - began


def print_result(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(result, indent=2))
        return
    for key, value in result.items():
        print(f"{key}: {value}")
