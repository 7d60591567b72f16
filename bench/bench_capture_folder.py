"""Folder capture: `gitmem capture FOLDER --no-model` of a 50 MB folder of Claude Code sessions.

    .venv/bin/python bench/bench_capture_folder.py [--mb 50] [--sessions 60] [--runs 3] [--json]

Builds a folder laid out as ~/.claude/projects is (one folder per project, one JSONL file per
session; a few sessions large, most small), whose lines are what real sessions hold: user turns,
assistant text with thinking blocks, tool calls and large tool results (which capture drops).
Each run captures the whole folder into a fresh store through the CLI, with its peak RSS, then
captures it again (nothing new: every watermark holds). References in the same run: `wc -l` of
every file, and `json.loads` of every line in Python. Target: ≤ 60 s on 2 cores, memory bounded
(the peak RSS does not grow with the folder: transcripts are streamed, not loaded whole).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_capture import CWD, sentence  # noqa: E402
from benchutil import GITMEM, print_result  # noqa: E402

from gitmem.store.store import Store  # noqa: E402


def session_line(session: str, kind: str, content: object, n: int) -> str:
    return json.dumps({"parentUuid": None, "isSidechain": False, "cwd": CWD, "sessionId": session,
                       "gitBranch": "main", "type": kind, "uuid": f"{session}-{n}", "version": "2.0.30",
                       "timestamp": f"2026-11-{1 + n // 4000 % 28:02d}T10:{(n // 60) % 60:02d}:{n % 60:02d}.000Z",
                       "message": {"role": kind, "content": content}})


def write_session(path: Path, session: str, target: int) -> int:
    """One session of about `target` bytes; returns its size."""
    size, n = 0, 0
    with open(path, "w", encoding="utf-8") as handle:
        while size < target:
            result = "def handler(event):\n    return process(event)\n" * (40 + n % 160)  # 2-8 KB
            for text in (
                session_line(session, "user", " ".join(sentence(n + k) for k in range(3)), n),
                session_line(session, "assistant", [
                    {"type": "thinking", "thinking": sentence(n) * 6, "signature": "x"},
                    {"type": "text", "text": " ".join(sentence(n + k) for k in range(4))},
                    {"type": "tool_use", "id": f"t{n}", "name": "Read",
                     "input": {"file_path": f"{CWD}/src/module_{n % 300}.py"}}], n + 1),
                session_line(session, "user", [{"type": "tool_result", "tool_use_id": f"t{n}",
                                                "content": result}], n + 2),
            ):
                handle.write(text + "\n")
                size += len(text) + 1
            n += 3
    return size


def build_folder(folder: Path, megabytes: float, sessions: int) -> int:
    """`sessions` transcripts in 6 project folders, 4 of them ten times the size of the others."""
    weights = [10 if k < 4 else 1 for k in range(sessions)]
    unit = megabytes * 1024 * 1024 / sum(weights)
    total = 0
    for k, weight in enumerate(weights):
        project = folder / f"-home-dev-src-project-{k % 6}"
        project.mkdir(parents=True, exist_ok=True)
        total += write_session(project / f"{k:08x}-7d3b-4c55-9a1e-2b8f0c6d7e11.jsonl",
                               f"{k:08x}-7d3b-4c55-9a1e-2b8f0c6d7e11", int(unit * weight))
    return total


def timed_cli(root: Path, folder: Path) -> tuple[float, int, dict[str, object]]:
    """(seconds, peak RSS in MiB of the capture process, its --json report)."""
    script = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
              "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
              "d = time.perf_counter() - t; "
              "print(d, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode); "
              "print(p.stdout if p.returncode == 0 else p.stderr)")
    done = subprocess.run([sys.executable, "-c", script, *GITMEM, "--root", str(root), "capture",
                           str(folder), "--no-model", "--json"], capture_output=True, text=True, check=True)
    first, rest = done.stdout.split("\n", 1)
    seconds, rss_kib, code = first.split()
    if code != "0":
        raise SystemExit(f"capture failed: {rest.strip()}")
    return float(seconds), int(rss_kib) // 1024, json.loads(rest)


def wc_lines(folder: Path) -> float:
    files = sorted(str(p) for p in folder.rglob("*.jsonl"))
    began = time.perf_counter()
    subprocess.run(["wc", "-l", *files], check=True, capture_output=True)
    return time.perf_counter() - began


def json_every_line(folder: Path) -> float:
    began = time.perf_counter()
    for path in sorted(folder.rglob("*.jsonl")):
        with open(path, "rb") as handle:
            for raw in handle:
                json.loads(raw)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=50.0)
    parser.add_argument("--sessions", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        folder = base / "projects"
        size = build_folder(folder, args.mb, args.sessions)
        first, again, rss, wc, parse = [], [], [], [], []
        largest = max(p.stat().st_size for p in folder.rglob("*.jsonl"))
        for run in range(args.runs):
            root = base / f"store{run}"
            Store(root, cwd=base).init()
            seconds, peak, report = timed_cli(root, folder)
            assert report["results"] == {"notes": args.sessions}, report["results"]
            first.append(seconds)
            rss.append(peak)
            seconds, _, report = timed_cli(root, folder)
            assert report["results"] == {"unchanged": args.sessions}, report["results"]
            again.append(seconds)
            wc.append(wc_lines(folder))
            parse.append(json_every_line(folder))
    result = {
        "folder_mb": round(size / 1024 / 1024, 1), "transcripts": args.sessions,
        "largest_transcript_mb": round(largest / 1024 / 1024, 1), "runs": args.runs,
        "capture_folder_cli_s": round(statistics.median(first), 2),
        "capture_folder_cli_max_s": round(max(first), 2),
        "capture_folder_again_nothing_new_s": round(statistics.median(again), 2),
        "capture_folder_peak_rss_mib": max(rss),
        "reference_wc_l_s": round(statistics.median(wc), 3),
        "reference_json_loads_every_line_s": round(statistics.median(parse), 2),
        "target": "≤ 60 s on 2 cores",
        "load_average": round(os.getloadavg()[0], 2),
    }
    print_result(result, args.json)


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
