"""History ingest speed: `gitmem history` of a code repository with 5,000 commits.

    .venv/bin/python bench/bench_history.py [--commits 5000] [--runs 3] [--json]

Builds a code repository with `git fast-import`: `--commits` commits over about a year (20 a
day), each changing one to three files, with a message body on every third. Then for each run
ingests all of them into a fresh store (library call, `--limit` = all) and times, as references
in the same run, `git log --name-only` over the same commits and `python -c pass`. Also times the
CLI process once and an incremental pass that finds nothing new.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchutil import median_ms, print_result, python_start  # noqa: E402

from gitmem.history.ingest import ingest  # noqa: E402
from gitmem.store.store import Store  # noqa: E402

ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def build_repo(path: Path, commits: int) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=ENV)
    subprocess.run(["git", "remote", "add", "origin", "https://example.com/acme/bench.git"], cwd=path,
                   check=True, env=ENV)
    start = 1_735_700_000  # 2025-01-01
    stream = []
    for n in range(commits):
        when = start + (n // 20) * 86_400 + (n % 20) * 1_200
        message = f"Change {n}: adjust module {n % 97} handling of case {n}\n"
        if n % 3 == 0:
            message += f"\nThe module {n % 97} now retries twice before giving up.\nSee issue {n}.\n"
        data = message.encode()
        stream.append(f"commit refs/heads/main\nmark :{n + 1}\n"
                      f"author bench <bench@example.com> {when} +0100\n"
                      f"committer bench <bench@example.com> {when} +0100\n"
                      f"data {len(data)}\n".encode() + data)
        if n:
            stream.append(f"from :{n}\n".encode())
        for k in range(1 + n % 3):
            content = f"module {n} part {k}\n".encode()
            stream.append(f"M 100644 inline src/pkg{(n + k) % 40}/module_{(n * 7 + k) % 300}.py\n"
                          f"data {len(content)}\n".encode() + content + b"\n")
        stream.append(b"\n")
    subprocess.run(["git", "fast-import", "--quiet"], cwd=path, input=b"".join(stream), check=True, env=ENV)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=path, check=True, env=ENV)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        repo = base / "code"
        began = time.perf_counter()
        build_repo(repo, args.commits)
        setup = time.perf_counter() - began
        library, gitlog, start, again = [], [], [], []
        for run in range(args.runs):
            store = Store(base / f"store{run}", cwd=repo)
            store.init()
            began = time.perf_counter()
            report = ingest(store, repo, limit=args.commits)
            library.append(time.perf_counter() - began)
            assert report.recorded == args.commits, report
            began = time.perf_counter()
            assert ingest(store, repo, limit=args.commits).result == "up-to-date"
            again.append(time.perf_counter() - began)
            store.close()
            began = time.perf_counter()
            subprocess.run(["git", "log", "--name-only", "--format=%H%n%B"], cwd=repo, check=True,
                           capture_output=True)
            gitlog.append(time.perf_counter() - began)
            start.append(python_start())
        root = base / "cli"
        Store(root, cwd=repo).init()
        gitmem = str(Path(sys.executable).with_name("gitmem"))
        began = time.perf_counter()
        subprocess.run([gitmem, "--root", str(root), "history", "--repo", str(repo), "--limit",
                        str(args.commits)], check=True, capture_output=True)
        cli = time.perf_counter() - began
        days = len(list((root / "workspaces" / "acme-bench" / "history").glob("*.md")))
        result = {
            "commits": args.commits, "day_files": days, "runs": args.runs,
            "repo_setup_s": round(setup, 1),
            "ingest_library_ms": median_ms(library), "ingest_library_max_ms": round(max(library) * 1000, 1),
            "ingest_cli_ms": round(cli * 1000, 1),
            "incremental_pass_nothing_new_ms": median_ms(again),
            "reference_git_log_name_only_ms": median_ms(gitlog),
            "reference_python_start_ms": median_ms(start),
            "load_average": os.getloadavg()[0],
        }
    print_result(result, args.json)


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
