"""Helpers the bench scripts share: medians in milliseconds, the `python -c pass` reference,
starting a warm server, and printing a result as `key: value` lines or JSON."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC
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


def print_medians(results: dict[int, dict[str, list[float]]]) -> None:
    """A Markdown table: one row per measured line, one column per size, `median (p90)`; lines
    named `... errors` or `... per second` are counts, shown as their median alone."""
    sizes = list(results)
    print("| median (p90) | " + " | ".join(f"{s:,} entries" for s in sizes) + " |")
    print("|---" * (len(sizes) + 1) + "|")
    for name in results[sizes[0]]:
        cells = []
        for size in sizes:
            values = sorted(results[size][name])
            p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
            counted = name.endswith(("errors", "per second"))
            cells.append(f"{statistics.median(values):.1f}" if counted
                         else f"{statistics.median(values):.1f} ms ({p90:.1f})")
        print(f"| {name} | " + " | ".join(cells) + " |")


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
                             "--history-every", "0", "--consolidate-every", "0", "--refresh-every", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while ping(root) is None:
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit("the server did not come up")
        time.sleep(0.05)
    return proc


# -- what a run measured, and its output kept for bench/report.py -------------------------------

REPO = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
_GENERATED = (":!bench/results", ":!docs/performance.md")  # a bench run rewrites these itself


def measured() -> dict[str, Any]:
    """The command, commit (marked when the tree has changes), date and machine of this run."""
    import os
    from datetime import datetime

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short=12", "HEAD") or "unknown"
    if git("status", "--porcelain", "--untracked-files=no", "--", ".", *_GENERATED):
        commit += "+changes"
    script = Path(sys.argv[0]).resolve()
    shown = script.relative_to(REPO) if script.is_relative_to(REPO) else script
    return {"bench": script.stem, "command": " ".join([".venv/bin/python", str(shown), *sys.argv[1:]]),
            "commit": commit, "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "python": sys.version.split()[0], "cores": os.cpu_count(),
            "load": round(os.getloadavg()[0], 2)}


class _Tee:
    """Standard output that is also kept."""

    def __init__(self, out: Any) -> None:
        self.out, self.kept = out, []  # type: Any, list[str]

    def write(self, text: str) -> int:
        self.kept.append(text)
        return int(self.out.write(text))

    def flush(self) -> None:
        self.out.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.out, name)


def run_bench(main: Any) -> None:
    """Run a bench's main(): first a line saying what it measures (command, commit, date, load),
    then its own output, which a successful run also keeps in bench/results/BENCH.json.

    gitmem's bytecode is compiled first, as an install does: an environment with
    PYTHONDONTWRITEBYTECODE=1 would otherwise compile every changed module in every process a
    bench starts (~0.45 s of CPU per CLI start after a change)."""
    import compileall

    compileall.compile_dir(str(Path(__file__).resolve().parent.parent / "gitmem"), quiet=1)
    info = measured()
    print(f"measured: `{info['command']}` at commit {info['commit']} on {info['date']} "
          f"(python {info['python']}, {info['cores']} cores, load average {info['load']})", flush=True)
    tee = _Tee(sys.stdout)
    sys.stdout = tee
    try:
        code = main()  # --help and a bench that stops with problems leave by SystemExit: not kept
    finally:
        sys.stdout = tee.out
    if code in (None, 0):
        RESULTS.mkdir(exist_ok=True)
        info["output"] = "".join(tee.kept).rstrip("\n").splitlines()
        (RESULTS / f"{info['bench']}.json").write_text(json.dumps(info, indent=1, ensure_ascii=False) + "\n",
                                                       encoding="utf-8")
    raise SystemExit(code)
