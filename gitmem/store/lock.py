"""The store-wide write lock (state/store.lock), taken in arrival order.

Every gitmem process that changes the store or its git repository holds it; the kernel lets go
of it when its holder dies, so a killed writer never leaves the store locked. A bare flock wakes
its waiters in no order, and under load some waited for tens of seconds: here each waiter holds
a place in line (a file named by its arrival time) and only the first live place's owner
tries the lock.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

from gitmem.errors import LockTimeoutError, ReadOnlyStoreError
from gitmem.fsio import LOCK_FILE, FileLock, pid_alive, refuse_link

LOCK_TIMEOUT_SECONDS = 120.0
QUEUE_DIR = "state/lockq"  # one place in line per process waiting for the lock
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def open_store_lock(root: Path) -> FileLock:
    """The store lock's file, opened (not yet held); refuses a link and a read-only store."""
    refuse_link(root, LOCK_FILE)
    try:
        return FileLock(root / LOCK_FILE)
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise ReadOnlyStoreError(root, exc.strerror or "permission denied") from None
        raise


@contextlib.contextmanager
def store_lock(root: Path, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[None]:
    """The store-wide write lock (state/store.lock): writers take it in the order they came."""
    lock = open_store_lock(root)
    _acquire_in_turn(lock, root / QUEUE_DIR, timeout)
    try:
        yield
    finally:
        lock.release()


@contextlib.contextmanager
def store_lock_if_free(root: Path) -> Iterator[bool]:
    """The store lock when nobody holds it or waits for it right now (yields True), else
    nothing (False): for a read, which never waits for a write or a sync."""
    lock = open_store_lock(root)
    try:
        queued = bool(os.listdir(root / QUEUE_DIR))
    except FileNotFoundError:
        queued = False
    if queued or not lock.try_acquire():
        os.close(lock.fd)
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def _acquire_in_turn(lock: FileLock, queue: Path, timeout: float) -> None:
    """Take the lock once every waiter that came earlier has had it."""
    with contextlib.suppress(FileNotFoundError):
        if not os.listdir(queue) and lock.try_acquire():
            return
    refuse_link(queue.parent.parent, QUEUE_DIR)
    queue.mkdir(parents=True, exist_ok=True)
    place = f"{time.time_ns():020d}-{os.getpid()}-{secrets.token_hex(3)}"
    os.close(os.open(queue / place, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666))
    deadline = time.monotonic() + timeout
    try:
        while True:
            first = _first_in_line(queue)
            if first in (None, place) and lock.try_acquire():
                return
            if time.monotonic() >= deadline:
                os.close(lock.fd)
                raise LockTimeoutError(f"the store lock was held by other processes for over "
                                       f"{timeout:.0f}s ({lock.path}); retry when they are done")
            time.sleep(0.002 if first == place else 0.005)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(queue / place)


def _first_in_line(queue: Path) -> str | None:
    """The oldest place of a live waiter (those of dead or long-gone waiters are removed)."""
    now = time.time_ns()
    for name in sorted(os.listdir(queue)):
        parts = name.split("-")
        alive = len(parts) == 3 and parts[1].isdigit() and pid_alive(int(parts[1]))
        if alive and parts[0].isdigit() and now - int(parts[0]) < 2 * LOCK_TIMEOUT_SECONDS * 1e9:
            return name
        with contextlib.suppress(OSError):
            os.unlink(queue / name)
    return None
