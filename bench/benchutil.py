"""Helpers the bench scripts share: medians in milliseconds, the `python -c pass` reference,
starting a warm server, and printing a result as `key: value` lines or JSON."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_SCRIPT = Path(sys.executable).with_name("gitmem")
# The console script, as agents and people run it (the module where it is not installed).
GITMEM = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "gitmem"]


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


def start_server(root: Path) -> subprocess.Popen[bytes]:
    """`gitmem serve` for the store, nothing scheduled; returns once it answers a ping."""
    from gitmem.serve.control import ping

    proc = subprocess.Popen([*GITMEM, "--root", str(root), "serve", "--sync-every", "0",
                             "--history-every", "0", "--consolidate-every", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while ping(root) is None:
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit("the server did not come up")
        time.sleep(0.05)
    return proc
