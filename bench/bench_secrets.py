"""Secret scanning cost: importing detect-secrets, scanning text, and `gitmem remember` end to end.

Prints medians of alternating rounds, each with its references measured in the same run:
- import: `python -c pass`, `import pygit2`, `import detect_secrets.core.scan` (what a scan that
  reaches the detector loads), each a fresh process;
- scan (in-process, detector already loaded or not needed): a one-line note and an 8 KiB note
  through the gate; the same 8 KiB with the gate off (the detector reads every line);
- the 16 KiB runbook of bench_runtime.py (what `doc add` scans): through the gate, and masked as
  output is (secrets.mask);
- `gitmem remember` (one CLI process per write, appending to one topic file): an ordinary note
  (the gate clears it: no detector), the same with --allow-secret (no scan at all: the
  reference), and a note holding a token (the gate passes it on, the detector loads and refuses).

    .venv/bin/python bench/bench_secrets.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

PYTHON = sys.executable
GITMEM = str(Path(PYTHON).with_name("gitmem"))
NOTE = "The staging database listens on port 5433; deploys go out at noon after the smoke tests."
SECRET_NOTE = "The alert bot posts with xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"


def wall(argv: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(argv, capture_output=True, env={**os.environ, **(env or {})}, check=False)
    return (time.perf_counter() - start) * 1000


def in_process(action: Callable[[], object], repeat: int = 20) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def median(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return f"{statistics.median(values):7.1f} ms (p95 {p95:.1f})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        env = {"HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"),
               "GITMEM_ROOT": str(home / "store"), "GIT_AUTHOR_NAME": "bench",
               "GIT_AUTHOR_EMAIL": "bench@localhost", "GIT_COMMITTER_NAME": "bench",
               "GIT_COMMITTER_EMAIL": "bench@localhost",
               # each write in its own process, as the table says (a warm server would answer)
               "GITMEM_SERVE": "off"}
        os.environ.update(env)
        subprocess.run([GITMEM, "init"], capture_output=True, check=True)
        subprocess.run([GITMEM, "remember", NOTE, "--layer", "semantic", "--topic", "bench"],
                       capture_output=True, check=True)  # first write: caches the gate

        imports: dict[str, list[float]] = {"python -c pass": [], "import pygit2": [],
                                           "import detect_secrets.core.scan": []}
        cli: dict[str, list[float]] = {"remember, no scan (--allow-secret)": [],
                                       "remember, ordinary note (gate clears it)": [],
                                       "remember, note with a token (detector, refused)": []}
        for index in range(args.rounds):
            for label in imports:
                code = "pass" if label.startswith("python") else label
                imports[label].append(wall([PYTHON, "-c", code]))
            text = f"{NOTE} Round {index}."
            cli["remember, no scan (--allow-secret)"].append(wall(
                [GITMEM, "remember", text + " unscanned", "--layer", "semantic", "--topic", "bench",
                 "--allow-secret"]))
            cli["remember, ordinary note (gate clears it)"].append(wall(
                [GITMEM, "remember", text, "--layer", "semantic", "--topic", "bench"]))
            cli["remember, note with a token (detector, refused)"].append(wall(
                [GITMEM, "remember", SECRET_NOTE, "--layer", "semantic", "--topic", "bench"]))

        from bench_runtime import document

        from gitmem.secrets.mask import hide_secrets
        from gitmem.secrets.scan import _detect, find_secrets

        runbook = document(1).encode()[:16384].decode(errors="ignore")

        big = "\n".join(f"{NOTE} Line {n}." for n in range(90))[:8000]
        find_secrets(SECRET_NOTE)  # the detector loaded, as in a scan that needs it
        scans = {
            "one-line note, through the gate": in_process(lambda: find_secrets(NOTE)),
            "8 KiB note (90 lines), through the gate": in_process(lambda: find_secrets(big)),
            "one line holding a token (detector)": in_process(lambda: find_secrets(SECRET_NOTE)),
            "16 KiB document, through the gate": in_process(lambda: find_secrets(runbook)),
            "16 KiB document, masked for output": in_process(lambda: hide_secrets(runbook)),
        }
        lines = list(enumerate(big.splitlines(), 1))
        scans["8 KiB note, gate off (detector reads every line)"] = in_process(
            lambda: _detect(lines, cache=False), 5)

    load = os.getloadavg()[0]
    print(f"load average {load:.2f}; {args.rounds} rounds; python {sys.version.split()[0]}")
    print("\nimports (fresh process, wall time):")
    for label, values in imports.items():
        print(f"  {label:<45} {median(values)}")
    print("\nscan, in-process (median of 20):")
    for label, value in scans.items():
        print(f"  {label:<45} {value:7.2f} ms")
    print("\ngitmem remember, one CLI process per write:")
    for label, values in cli.items():
        print(f"  {label:<45} {median(values)}")


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
