"""What the code repository's post-commit hook adds to `git commit`.

    .venv/bin/python bench/bench_codehook.py [--commits 30] [--json]

A code repository with 200 commits and a store that already recorded them. Rounds alternate
between a commit without the hook and a commit with it installed (`gitmem hooks install --repo`);
each times a whole `git commit -q -am` of a one-line change. After each hooked commit the bench
waits until the background run has recorded the commit (and reports how long that took), so the
next commit is not timed while it still works. Also times the hooked commit with GITMEM_HOOKS=0
(the script runs, nothing is started). Prints medians in milliseconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchutil import print_result  # noqa: E402

from gitmem.history.codehook import install  # noqa: E402
from gitmem.history.ingest import ingest, recorded_commits  # noqa: E402
from gitmem.store.store import Store  # noqa: E402

ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> float:
    began = time.perf_counter()
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env or ENV)
    return time.perf_counter() - began


def change(repo: Path, n: int) -> None:
    with open(repo / "notes.txt", "a", encoding="utf-8") as handle:
        handle.write(f"line {n}\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        repo = base / "code"
        git(base, "init", "-q", "-b", "main", str(repo))
        git(repo, "remote", "add", "origin", "https://example.com/acme/bench.git")
        (repo / "notes.txt").write_text("start\n")
        git(repo, "add", ".")
        for n in range(200):
            change(repo, n)
            git(repo, "commit", "-q", "-am", f"Seed {n}")
        store = Store(base / "store", cwd=repo)
        store.init()
        ingest(store, repo)
        key = store.resolve_workspace(None, repo)
        hook = repo / ".git" / "hooks" / "post-commit"
        plain, hooked, skipped, background = [], [], [], []
        for n in range(args.commits):
            hook.unlink(missing_ok=True)
            change(repo, 1000 + n)
            plain.append(git(repo, "commit", "-q", "-am", f"Plain {n}"))
            install(store.root, repo)
            change(repo, 2000 + n)
            began = time.perf_counter()
            hooked.append(git(repo, "commit", "-q", "-am", f"Hooked {n}"))
            head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
            while head not in recorded_commits(store, key):
                time.sleep(0.01)
                if time.perf_counter() - began > 30:
                    log = (store.root / "logs" / "memory.log").read_text().splitlines()[-3:]
                    raise SystemExit("the hook did not record the commit within 30 s:\n" + "\n".join(log))
            background.append(time.perf_counter() - began)
            change(repo, 3000 + n)
            skipped.append(git(repo, "commit", "-q", "-am", f"Skipped {n}", env={**ENV, "GITMEM_HOOKS": "0"}))
        store.close()
        result = {
            "commits_per_kind": args.commits,
            "git_commit_without_hook_ms": round(statistics.median(plain) * 1000, 1),
            "git_commit_with_hook_ms": round(statistics.median(hooked) * 1000, 1),
            "added_by_hook_ms": round((statistics.median(hooked) - statistics.median(plain)) * 1000, 1),
            "git_commit_with_hook_p95_ms": round(sorted(hooked)[int(len(hooked) * 0.95) - 1] * 1000, 1),
            "git_commit_hook_disabled_ms": round(statistics.median(skipped) * 1000, 1),
            "commit_recorded_in_background_after_ms": round(statistics.median(background) * 1000, 1),
            "load_average": os.getloadavg()[0],
        }
    print_result(result, args.json)


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
