"""Capture speed: `capture` of a 5 MB Claude Code transcript, without model time.

    .venv/bin/python bench/bench_capture.py [--mb 5] [--runs 7] [--json]

Builds a synthetic session transcript of about `--mb` megabytes in the Claude Code format (user
turns, assistant text with thinking blocks, tool calls and large tool results, as real sessions
have them), then for each run captures it from scratch into a fresh store with no model
(clipped notes: the whole pipeline minus the model call). Also times, as references in the same
run, `python -c pass` and a bare `json.loads` of every line of the file, and the CLI process.
Prints medians in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchutil import median_ms, print_result, python_start  # noqa: E402

from gitmem.capture.pipeline import capture  # noqa: E402
from gitmem.store.store import Store  # noqa: E402

CWD = "/home/dev/src/shop"
WORDS = ["cache", "queue", "deploy", "worker", "schema", "index", "token", "branch", "release", "rollback", "metric", "budget", "staging", "replica", "snapshot", "timeout", "retry", "service", "gateway", "config"]


def sentence(n: int, length: int = 14) -> str:
    return " ".join(WORDS[(n * 7 + k * 3) % len(WORDS)] for k in range(length)).capitalize() + "."


def line(kind: str, content: object, n: int) -> str:
    return json.dumps({"parentUuid": None, "isSidechain": False, "cwd": CWD, "sessionId": "bench-session",
                       "gitBranch": "main", "type": kind, "uuid": f"u{n}",
                       "timestamp": f"2026-11-{1 + n // 4000:02d}T10:{(n // 60) % 60:02d}:{n % 60:02d}.000Z",
                       "message": {"role": kind, "content": content}})


def build_transcript(path: Path, megabytes: float) -> int:
    """Write a transcript of about `megabytes` MB; returns the number of lines."""
    target = int(megabytes * 1024 * 1024)
    size = lines = 0
    with open(path, "w", encoding="utf-8") as handle:
        n = 0
        while size < target:
            turn = [
                line("user", " ".join(sentence(n + k) for k in range(3)), n),
                line("assistant", [{"type": "thinking", "thinking": sentence(n) * 6, "signature": "x"},
                                   {"type": "text", "text": " ".join(sentence(n + k) for k in range(4))},
                                   {"type": "tool_use", "id": f"t{n}", "name": "Read",
                                    "input": {"file_path": f"{CWD}/src/module_{n % 300}.py"}}], n + 1),
                line("user", [{"type": "tool_result", "tool_use_id": f"t{n}",
                               "content": ("def f():\n    return 1\n" * 120)}], n + 2),
            ]
            for text in turn:
                handle.write(text + "\n")
                size += len(text) + 1
                lines += 1
            n += 3
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=5.0)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        transcript = base / "session.jsonl"
        lines = build_transcript(transcript, args.mb)
        size_mb = transcript.stat().st_size / 1024 / 1024
        library, parse, start, cli = [], [], [], []
        for run in range(args.runs):
            store = Store(base / f"store{run}", cwd=base)
            store.init()
            began = time.perf_counter()
            report = capture(store, transcript, use_model=False)
            library.append(time.perf_counter() - began)
            assert report.result == "notes", report
            store.close()
            began = time.perf_counter()
            with open(transcript, "rb") as handle:
                for raw in handle:
                    json.loads(raw)
            parse.append(time.perf_counter() - began)
            start.append(python_start())
        gitmem = str(Path(sys.executable).with_name("gitmem"))
        for run in range(min(3, args.runs)):
            root = base / f"cli{run}"
            Store(root, cwd=base).init()
            began = time.perf_counter()
            subprocess.run([gitmem, "--root", str(root), "capture", str(transcript), "--no-model"],
                           check=True, capture_output=True, env={**os.environ})
            cli.append(time.perf_counter() - began)
        result = {
            "transcript_mb": round(size_mb, 2), "lines": lines, "runs": args.runs,
            "capture_library_ms": median_ms(library), "capture_library_max_ms": round(max(library) * 1000, 1),
            "capture_cli_ms": median_ms(cli),
            "reference_json_loads_every_line_ms": median_ms(parse),
            "reference_python_start_ms": median_ms(start),
            "load_average": os.getloadavg()[0],
        }
    print_result(result, args.json)


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
