"""What the code repository's post-commit hook runs in the background:

    python -P -m gitmem.history.hook --root STORE --repo DIR [--workspace KEY]

One pass at a time per store, and a burst of commits does not become a burst of passes: each
run first leaves a flag for its repository ("a commit waits"), then waits for the lock. The run holding the lock
clears the flag before each pass and goes round again while it finds the flag set; a run that
gets the lock and finds the flag already cleared knows its commit was covered and stops. Never
fails loudly: git has long moved on; problems go to logs/memory.log."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gitmem.errors import LockTimeoutError
from gitmem.fsio import file_lock, remove_file

HOOK_LIMIT = 200  # commits per pass: a big rebase is finished by later commits or `gitmem history`
LOCK_FILE = "state/history-hook.lock"
AGAIN_FLAG = "state/history-hook-{repo}.again"  # one flag per code repository
LOCK_WAIT = 120.0


def run(root: Path, repo: Path, workspace: str | None = None) -> int:
    import hashlib

    from gitmem.observe.record import record

    again = root / AGAIN_FLAG.format(repo=hashlib.sha1(str(repo.absolute()).encode()).hexdigest()[:12])
    try:
        again.parent.mkdir(parents=True, exist_ok=True)
        again.touch()
        with file_lock(root / LOCK_FILE, LOCK_WAIT, "the history hook lock"):
            while again.exists():
                remove_file(again)  # commits made from here on set it again
                _ingest(root, repo, workspace)
    except LockTimeoutError as exc:
        record(root, "hook-failed", count=("failures.hook",), hook="code-post-commit", repo=str(repo),
               error=str(exc), activity=f"history hook gave up waiting: {exc}")
    except Exception as exc:  # noqa: BLE001 - a background hook reports in the log, never to git
        record(root, "hook-failed", count=("failures.hook",), hook="code-post-commit", repo=str(repo),
               error=f"{type(exc).__name__}: {exc}", activity=f"history hook failed: {type(exc).__name__}: {exc}")
    return 0


def _ingest(root: Path, repo: Path, workspace: str | None) -> None:
    from gitmem.history.ingest import ingest
    from gitmem.observe.record import record
    from gitmem.store.store import Store

    store = Store(root, cwd=repo)
    try:
        report = ingest(store, repo, limit=HOOK_LIMIT, workspace=workspace)
    finally:
        store.close()
    record(root, "hook", count=("hooks.total", "hooks.code-post-commit"), hook="code-post-commit",
           repo=str(repo), recorded=report.recorded, exit=0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gitmem.history.hook")
    parser.add_argument("--root", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--workspace")
    args = parser.parse_args(argv)
    root = Path(args.root)
    if not (root / "memory.json").is_file():
        return 0  # the store moved or was removed: nothing to record into
    return run(root, Path(args.repo), args.workspace)


if __name__ == "__main__":
    sys.exit(main())
