"""state/journal.json: which files a write is about to change, so that a crash is recovered
under that write's own name instead of being mistaken for a hand edit."""

from __future__ import annotations

import json
from pathlib import Path

from gitmem.fsio import read_regular_file, remove_file, write_json_atomic

JOURNAL = "state/journal.json"


def record(root: Path, verb: str, paths: list[str]) -> None:
    """Written before the first byte of a write changes (not fsynced: a lost journal only
    means the crash is committed as a hand edit)."""
    write_json_atomic(root / JOURNAL, {"verb": verb, "paths": paths}, durable=False)


def clear(root: Path) -> None:
    remove_file(root / JOURNAL)


def pending(root: Path) -> tuple[str, list[str]] | None:
    """(verb, paths) of a write that did not finish, or None."""
    path = root / JOURNAL
    if not path.exists():
        return None
    try:
        data = json.loads(read_regular_file(path))
        return str(data.get("verb", "write")), [str(p) for p in data.get("paths", [])]
    except (ValueError, AttributeError, OSError):  # a FIFO in its place is never opened
        return "write", []
