"""Import speed and memory: `gitmem import basic-memory` of 10,000 notes.

    .venv/bin/python bench/bench_import.py [--notes 10000] [--small 2000] [--runs 1] [--json]

Writes a basic-memory project of `--notes` notes in 100 folders, each with front matter, a
paragraph of prose, three observations (a decision, a technique, a fact) and two relations to
other notes, so one note becomes four entries and two or three typed links. Each run imports it
into a fresh store through the CLI (one process, as people run it) and records its wall time and
its peak resident memory; the same for `--small` notes shows whether memory grows with the
number of notes (the import is streamed: one note file is held at a time). References in the
same run: reading every note file once in Python, `git add -A && git commit` of a copy of the
notes in a fresh repository, and `python -c pass`. A second import of the unchanged notes is
timed too (it must write nothing).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchutil import GITMEM, median_ms, print_result, python_start  # noqa: E402

from gitmem.store.store import Store  # noqa: E402

ENV = {**os.environ, "GITMEM_SERVE": "off", "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def note_text(n: int, total: int) -> str:
    a, b = (n * 7 + 3) % total, (n * 13 + 5) % total
    return (f"---\ntitle: Component {n}\ntype: note\ntags: [area-{n % 17}, bench]\n"
            f"permalink: component-{n}\n---\n\n# Component {n}\n\n"
            f"Component {n} handles the {n % 97} pipeline stage and reports to queue q{n % 31}.\n\n"
            f"## Observations\n"
            f"- [decision] We chose batching for component {n} to cut round trips #perf\n"
            f"- [technique] Restart component {n} with `svc restart c{n}` after a config change\n"
            f"- [fact] Component {n} keeps {n % 50 + 1} days of logs (retention policy)\n\n"
            f"## Relations\n- depends_on [[Component {a}]]\n- relates_to [[Component {b}]]\n")


def build_notes(folder: Path, count: int) -> None:
    for n in range(count):
        target = folder / f"area-{n % 100:02d}" / f"component-{n}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(note_text(n, count), encoding="utf-8")


def cli_import(root: Path, notes: Path) -> tuple[float, int, str]:
    """(seconds, peak RSS in MiB of the import process, its last output line)."""
    script = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
              "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
              "d = time.perf_counter() - t; "
              "print(d, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode); "
              "print((p.stdout or p.stderr).strip().splitlines()[-1])")
    done = subprocess.run([sys.executable, "-c", script, *GITMEM, "--root", str(root), "import",
                           "basic-memory", str(notes)], capture_output=True, text=True, env=ENV, check=True)
    first, last = done.stdout.strip().split("\n", 1)
    seconds, rss_kib, code = first.split()
    if code != "0":
        raise SystemExit(f"import failed: {last}")
    return float(seconds), int(rss_kib) // 1024, last


def read_all(folder: Path) -> float:
    began = time.perf_counter()
    for path in sorted(folder.rglob("*.md")):
        path.read_text(encoding="utf-8")
    return time.perf_counter() - began


def git_commit_copy(notes: Path, base: Path) -> float:
    repo = base / "gitref"
    shutil.copytree(notes, repo)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=ENV)
    began = time.perf_counter()
    subprocess.run("git add -A && git -c gc.auto=0 commit -q -m notes", shell=True, cwd=repo, check=True,
                   env=ENV)
    took = time.perf_counter() - began
    shutil.rmtree(repo, ignore_errors=True)
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--small", type=int, default=2_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        notes, small = base / "notes", base / "small"
        build_notes(notes, args.notes)
        build_notes(small, args.small)
        times, rss, reads, gits, starts, again = [], [], [], [], [], []
        summary = ""
        for run in range(args.runs):
            root = base / f"store{run}"
            Store(root, cwd=base).init()
            seconds, peak, summary = cli_import(root, notes)
            times.append(seconds)
            rss.append(peak)
            again.append(cli_import(root, notes)[0])
            reads.append(read_all(notes))
            gits.append(git_commit_copy(notes, base))
            starts.append(python_start())
            shutil.rmtree(root)
        root = base / "store-small"
        Store(root, cwd=base).init()
        small_seconds, small_peak, _ = cli_import(root, small)
        result = {
            "notes": args.notes, "runs": args.runs, "import_summary": summary,
            "import_cli_s": round(min(times), 1), "import_cli_median_ms": median_ms(times),
            "import_peak_rss_mib": max(rss),
            "reimport_unchanged_ms": median_ms(again),
            f"import_{args.small}_notes_s": round(small_seconds, 1),
            f"import_{args.small}_notes_peak_rss_mib": small_peak,
            "reference_read_every_note_ms": median_ms(reads),
            "reference_git_add_commit_notes_ms": median_ms(gits),
            "reference_python_start_ms": median_ms(starts),
            "load_average": round(os.getloadavg()[0], 2),
        }
    print_result(result, args.json)


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
