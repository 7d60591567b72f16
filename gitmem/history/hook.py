"""What the code repository's post-commit hook runs in the background:

    python -P -m gitmem.history.hook --root STORE --repo DIR [--workspace KEY]

One run at a time per store: a run that finds another in progress leaves a flag and exits, and the
running one goes round again, so a burst of commits is recorded without a queue of processes.
Never fails loudly: git has long moved on; problems go to logs/memory.log."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gitmem.errors import LockTimeoutError
from gitmem.fsio import file_lock, remove_file

HOOK_LIMIT = 200  # commits per round: a big rebase is finished by later commits or `gitmem history`
LOCK_FILE = "state/history-hook.lock"
AGAIN_FILE = "state/history-hook.again"
MAX_ROUNDS = 5


def run(root: Path, repo: Path, workspace: str | None = None) -> int:
    from gitmem.observe.record import record

    try:
        with file_lock(root / LOCK_FILE, 0.05, "the history hook"):
            for _ in range(MAX_ROUNDS):
                remove_file(root / AGAIN_FILE)
                _ingest(root, repo, workspace)
                if not (root / AGAIN_FILE).exists():
                    break
    except LockTimeoutError:
        (root / AGAIN_FILE).touch()  # the running pass goes round once more for this commit
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
