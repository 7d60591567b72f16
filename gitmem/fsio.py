"""Atomic file writes and the store-wide lock."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gitmem.errors import LockTimeoutError

LOCK_TIMEOUT_SECONDS = 120.0


def write_text_atomic(path: Path, text: str, *, durable: bool = True) -> None:
    """Write via a temp file in the same folder (+ fsync) + rename: readers see old or new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_json_atomic(path: Path, data: Any, *, durable: bool = True) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    write_text_atomic(path, text, durable=durable)


def read_text(path: Path) -> str:
    """A file's text exactly as stored (no newline translation)."""
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


class NotRegularFileError(OSError):
    """A path that is not a regular file (a symbolic link, a FIFO, a folder, a device)."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(f"{path}: not a regular file ({kind})")
        self.kind = kind


def _file_kind(mode: int) -> str:
    for test, kind in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISDIR, "a folder"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "a device"


def read_regular_file(path: Path) -> bytes:
    """The bytes of a regular file, never following a symbolic link and never blocking (a FIFO
    named like a file is refused, not opened for a read that waits forever).

    Raises NotRegularFileError for anything else, and OSError (FileNotFoundError ...) as usual."""
    mode = os.lstat(path).st_mode
    if not stat.S_ISREG(mode):
        raise NotRegularFileError(path, _file_kind(mode))
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(fd).st_mode  # replaced between the lstat and the open
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(path, _file_kind(mode))
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def remove_file(path: Path) -> bool:
    try:
        path.unlink()
        return True
    except FileNotFoundError:
        return False


class _FileLock:
    """An exclusive advisory lock on a file: fcntl.flock on POSIX, msvcrt.locking on Windows.

    Hand-written rather than a dependency: the lock sits on the start-up path of every write
    verb, and the library we measured cost ~35 ms of imports for what is two system calls here.
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)

    def try_acquire(self) -> bool:
        try:
            if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
                import msvcrt

                msvcrt.locking(self.fd, msvcrt.LK_NBLCK, 1)
            else:
                import fcntl

                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        return True

    def release(self) -> None:
        try:
            if sys.platform == "win32":  # pragma: no cover
                import msvcrt

                msvcrt.locking(self.fd, msvcrt.LK_UNLCK, 1)
            else:
                import fcntl

                fcntl.flock(self.fd, fcntl.LOCK_UN)
        finally:
            os.close(self.fd)


@contextlib.contextmanager
def file_lock(lock_path: Path, timeout: float, what: str) -> Iterator[None]:
    """Hold an exclusive lock on `lock_path`, waiting up to `timeout` seconds (polling, backing off)."""
    lock = _FileLock(lock_path)
    deadline = time.monotonic() + timeout
    delay = 0.001
    while not lock.try_acquire():
        if time.monotonic() >= deadline:
            os.close(lock.fd)
            raise LockTimeoutError(f"{what} was held by another process for over {timeout:.0f}s ({lock_path})")
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
    try:
        yield
    finally:
        lock.release()


def store_lock(root: Path, timeout: float = LOCK_TIMEOUT_SECONDS) -> contextlib.AbstractContextManager[None]:
    """The store-wide write lock (state/store.lock): writers queue behind each other."""
    return file_lock(root / "state" / "store.lock", timeout, "the store lock")
