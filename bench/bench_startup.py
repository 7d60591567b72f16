"""What each start-up trick of the thin client still saves a call the warm server answers.

    .venv/bin/python bench/bench_startup.py [--rounds 40]

Every `gitmem` call imports `gitmem.serve.client` first (gitmem/__main__.py); when a server runs,
that is all it imports before handing the call over. The client avoids three modules: `json`
(frames are `marshal`; json imports `re`), `socket` (`_socket` instead; socket imports enum and
selectors) and `typing`. This bench starts `python -c` with the client alone and with each avoided
module added, interleaved round by round so all see the same machine load, and prints the median
wall and CPU time of each against `python -c pass`. A trick whose module adds nothing measurable
would be removed (decision 0023).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from benchutil import run_bench  # noqa: E402

CASES = {
    "python -c pass (reference)": "pass",
    "the client as shipped (_socket, marshal, no typing)": "import gitmem.serve.client",
    "client + json": "import gitmem.serve.client, json",
    "client + socket": "import gitmem.serve.client, socket",
    "client + typing": "import gitmem.serve.client, typing",
    "client + all three": "import gitmem.serve.client, json, socket, typing",
}


def _one(code: str) -> tuple[float, float]:
    """Wall and CPU seconds of one `python -c CODE`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    walls: dict[str, list[float]] = {name: [] for name in CASES}
    cpus: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.rounds):
        for name, code in CASES.items():
            wall, cpu = _one(code)
            walls[name].append(wall)
            cpus[name].append(cpu)
    shipped = "the client as shipped (_socket, marshal, no typing)"
    base_cpu = statistics.median(cpus[shipped])
    print(f"{args.rounds} rounds, interleaved; load average at end {os.getloadavg()[0]:.2f}")
    print("| start of a served call | wall median | CPU median | CPU over the shipped client |")
    print("|---|---:|---:|---:|")
    for name in CASES:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        extra = "" if name.startswith("python") else f"{(cpu - base_cpu) * 1000:+.1f} ms"
        print(f"| {name} | {wall * 1000:.1f} ms | {cpu * 1000:.1f} ms | {extra} |")
    return 0


if __name__ == "__main__":
    run_bench(main)
