"""The background half of `gitmem capture --hook`:

    python -m gitmem.integrate.capturejob --root STORE --transcript FILE [--cwd DIR] [--workspace KEY]

Runs one capture of the transcript and exits. Nothing is lost when it fails: the capture's
watermark only moves past what was kept, so the next hook (or `gitmem capture FILE`) reads the
same events again, material a model failed on is kept by the capture itself, and the failure is
recorded in logs/memory.log and counted under failures.hook (`gitmem status` shows it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gitmem.store.store import Store


def run(root: Path, transcript: Path, cwd: Path | None, workspace: str | None) -> int:
    from gitmem.capture.pipeline import capture
    from gitmem.observe.record import record
    from gitmem.store.store import Store

    try:
        store = Store(root, workspace=workspace, cwd=cwd)
        try:
            report = capture(store, transcript)
            record(root, "hook", count=("hooks.total", "hooks.agent-capture"), hook="agent-capture",
                   transcript=str(transcript), result=report.result, exit=0)
            native_after(store, cwd)  # after the capture, whose result stands whatever this does
        finally:
            store.close()
        return 0
    except Exception as exc:  # noqa: BLE001 - nobody waits on this process: the log is its voice
        record(root, "hook-failed", count=("failures.hook",), hook="agent-capture",
               transcript=str(transcript), error=f"{type(exc).__name__}: {exc}",
               activity=f"capture hook failed: {type(exc).__name__}: {exc}")
        return 1


def native_after(store: Store, cwd: Path | None) -> None:
    """A project that keeps Claude Code's auto memory in step gets its pass after the capture,
    so what Claude Code wrote during the session comes in and MEMORY.md shows what was kept; a
    pass that fails is recorded in logs/memory.log, and the next hook or scheduled pass tries again."""
    from gitmem import caller
    from gitmem.imports.native import is_enabled, run_pass
    from gitmem.observe.record import record

    if cwd is None or not is_enabled(store.root, cwd):
        return
    try:
        run_pass(store, cwd, Path(caller.home()))
    except Exception as exc:  # noqa: BLE001 - as in run: nobody waits on this process
        record(store.root, "hook-failed", count=("failures.hook",), hook="native-memory",
               error=f"{type(exc).__name__}: {exc}",
               activity=f"native memory pass failed: {type(exc).__name__}: {exc}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gitmem.integrate.capturejob")
    parser.add_argument("--root", required=True)
    parser.add_argument("--transcript", required=True)
    parser.add_argument("--cwd")
    parser.add_argument("--workspace")
    args = parser.parse_args(argv)
    root = Path(args.root)
    if not (root / "memory.json").is_file():
        return 0  # the store moved or was removed: nothing to capture into
    return run(root, Path(args.transcript), Path(args.cwd) if args.cwd else None, args.workspace)


if __name__ == "__main__":
    sys.exit(main())
