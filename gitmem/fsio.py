"""Atomic file writes and the store-wide lock."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import LockTimeoutError

LOCK_TIMEOUT_SECONDS = 120.0


def write_text_atomic(path: Path, text: str) -> None:
    """Write via a temp file in the same folder + fsync + rename: readers see old or new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_json_atomic(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n")


def read_text(path: Path) -> str:
    """A file's text exactly as stored (no newline translation)."""
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


def remove_file(path: Path) -> bool:
    try:
        path.unlink()
        return True
    except FileNotFoundError:
        return False


@contextlib.contextmanager
def store_lock(root: Path, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[None]:
    """Hold the store-wide write lock (state/store.lock); processes queue behind each other."""
    import filelock

    lock_path = root / "state" / "store.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(str(lock_path), timeout=timeout)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise LockTimeoutError(
            f"another gitmem process held the store lock for over {timeout:.0f}s ({lock_path})"
        ) from None
    try:
        yield
    finally:
        lock.release()
