"""Atomic file writes that never follow a link, regular-file reads, and file locks (the
store-wide lock built on them is gitmem/store/lock.py).

Inside a store (a folder holding `.git` and `state/store.lock`), an atomic write puts its temp
file in `state/tmp/` (gitignored, same filesystem) and renames it into place through folder
handles opened without following links: a write can neither land outside the store through a
symbolic link nor leave a temp file where git would commit it. A temp file left by a killed
process is removed by `sweep_temp`, which every write runs under the store lock.

Files get the mode the umask gives (or keep the mode of the file they replace); secrets pass
`mode=0o600`. JSON is written one way (`json_text`): sorted keys, two-space indents, UTF-8."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gitmem.errors import LockTimeoutError, UnsafePathError

LOCK_FILE = "state/store.lock"
TEMP_DIR = "state/tmp"
TEMP_SUFFIX = ".tmp"
TEMP_MAX_AGE_SECONDS = 24 * 3600.0  # past this a temp file is swept even if its pid is alive again
_DIR_FDS = os.rename in os.supports_dir_fd and os.open in os.supports_dir_fd  # (os.replace too)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_roots: dict[str, Path] = {}  # folder -> the store it lies in (positive answers only)


# -- where a path lives ------------------------------------------------------------------------
def store_root_of(path: Path) -> Path | None:
    """The store a path lies in: its nearest parent holding `.git` and `state/store.lock`."""
    folder = Path(os.path.abspath(path)).parent
    cached = _roots.get(str(folder))
    if cached is not None:
        return cached
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate / LOCK_FILE) and os.path.lexists(candidate / ".git"):
            _roots[str(folder)] = candidate
            return candidate
    return None


def relative_name(root: Path, path: Path) -> str:
    return Path(os.path.abspath(path)).relative_to(root).as_posix()


def link_in_path(root: Path, relpath: str) -> str | None:
    """The first part of `relpath` (below `root`) that is a symbolic link, or None."""
    current = root
    parts = [p for p in relpath.split("/") if p]
    for number, part in enumerate(parts, 1):
        current = current / part
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return "/".join(parts[:number])
        except OSError:
            return None
    return None


def refuse_link(root: Path, relpath: str) -> None:
    """UnsafePathError when `relpath` or a folder on its way is a symbolic link."""
    link = link_in_path(root, relpath)
    if link is not None:
        raise UnsafePathError(link, relpath)


def _open_folder(root: Path, parts: list[str], relpath: str, *, create: bool) -> int:
    """A handle on root/parts..., each step opened without following a link (created if asked)."""
    fd = os.open(root, os.O_RDONLY | _DIRECTORY)
    try:
        for number, part in enumerate(parts, 1):
            try:
                child = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                child = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK) and stat.S_ISLNK(
                        os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
                    raise UnsafePathError("/".join(parts[:number]), relpath) from None
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


# -- atomic writes -----------------------------------------------------------------------------
def write_bytes_atomic(path: Path, data: bytes, *, durable: bool = True, mode: int | None = None) -> None:
    """Write via a temp file (+ fsync) + rename: readers see the old or the new file, never half.

    `mode`: the permission bits to give the file; by default a file being replaced keeps its
    own and a new one gets what the umask allows.
    """
    root = store_root_of(path)
    if root is None or not _DIR_FDS:
        if root is not None:
            refuse_link(root, relative_name(root, path))
        _write_beside(Path(path), data, durable, mode)
        return
    relpath = relative_name(root, path)
    *folders, name = relpath.split("/")
    parent = _open_folder(root, folders, relpath, create=True)
    try:
        tmp_dir = _open_folder(root, TEMP_DIR.split("/"), TEMP_DIR, create=True)
        try:
            _write_through(parent, tmp_dir, name, relpath, data, durable, mode)
        finally:
            os.close(tmp_dir)
    finally:
        os.close(parent)


def _write_through(parent: int, tmp_dir: int, name: str, relpath: str, data: bytes, durable: bool,
                   mode: int | None) -> None:
    try:
        current = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        current = None
    if current is not None and stat.S_ISLNK(current.st_mode):
        raise UnsafePathError(relpath, relpath)
    if mode is None and current is not None:
        mode = stat.S_IMODE(current.st_mode)
    try:
        _write_via(tmp_dir, f"{os.getpid()}-{secrets.token_hex(4)}-{name[:60]}{TEMP_SUFFIX}",
                   parent, name, data, durable, mode)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        # A filesystem mounted inside the store: the temp file goes beside the target instead,
        # under a name the store's .gitignore covers.
        _write_via(parent, f".{name}.{secrets.token_hex(4)}{TEMP_SUFFIX}", parent, name, data,
                   durable, mode)


def _write_via(tmp_dir: int, tmp: str, parent: int, name: str, data: bytes, durable: bool,
               mode: int | None) -> None:
    """Fill tmp_dir/tmp, then rename it over parent/name (both relative to folder handles)."""
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666, dir_fd=tmp_dir)
    try:
        _fill(fd, data, durable, mode)
        os.replace(tmp, name, src_dir_fd=tmp_dir, dst_dir_fd=parent)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=tmp_dir)
        raise


def _fill(fd: int, data: bytes, durable: bool, mode: int | None) -> None:
    """Write all of `data` to a fresh temp file, set its mode, flush it to disk when durable."""
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)


def _write_beside(path: Path, data: bytes, durable: bool, mode: int | None) -> None:
    """Outside a store: the temp file sits beside the target, hidden and named `.*.tmp`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        with contextlib.suppress(FileNotFoundError):
            mode = stat.S_IMODE(os.lstat(path).st_mode)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666)
    try:
        _fill(fd, data, durable, mode if sys.platform != "win32" else None)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text_atomic(path: Path, text: str, *, durable: bool = True, mode: int | None = None) -> None:
    write_bytes_atomic(path, text.encode("utf-8"), durable=durable, mode=mode)


def json_text(data: Any) -> str:
    """JSON as gitmem writes its files (and compares what it would write), with a final newline."""
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def write_json_atomic(path: Path, data: Any, *, durable: bool = True, mode: int | None = None) -> None:
    write_text_atomic(path, json_text(data), durable=durable, mode=mode)


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


def open_regular(path: Path, flags: int, mode: int = 0o666) -> int:
    """os.open for a file gitmem keeps appending to or rewriting (a log, the counters): never
    through a link, never waiting on a FIFO; NotRegularFileError for anything but a regular file."""
    fd = os.open(path, flags | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0), mode)
    kind = os.fstat(fd).st_mode
    if not stat.S_ISREG(kind):
        os.close(fd)
        raise NotRegularFileError(path, _file_kind(kind))
    return fd


def read_regular_text(path: Path) -> str:
    """The text of a regular UTF-8 file, exactly as stored; OSError (NotRegularFileError for a
    FIFO, folder or link) or UnicodeDecodeError otherwise."""
    return read_regular_file(path).decode("utf-8")


def load_json_object(path: Path) -> dict[str, Any]:
    """A machine-local JSON record (state/, index/) as a dict: {} when it is missing, not a
    regular file, not JSON or not an object. Such a file is only a record: a bad one is not an error."""
    try:
        data = json.loads(read_regular_file(path))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remove_file(path: Path) -> bool:
    try:
        path.unlink()
        return True
    except FileNotFoundError:
        return False


def remove_empty_folders(root: Path, folder: Path) -> None:
    """Remove `folder` and then each parent while empty, up to (never including) `root`."""
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()  # only an empty folder goes
        except OSError:
            return
        folder = folder.parent


# -- temp files left by killed processes -------------------------------------------------------
def is_temp_name(relpath: str) -> bool:
    """The name of an atomic write's temp file kept beside its target (`.name.<random hex>.tmp`)."""
    name = relpath.rsplit("/", 1)[-1]
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (on Windows: assumed, never probed)."""
    if pid <= 0 or sys.platform == "win32":
        return pid > 0
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def leftover_temp_files(root: Path, *, now: float | None = None) -> list[str]:
    """Temp files in state/tmp whose writer is gone (dead pid, or older than a day)."""
    folder = root / TEMP_DIR
    try:
        items = list(os.scandir(folder))
    except OSError:
        return []
    now = time.time() if now is None else now
    found = []
    for item in items:
        pid_text = item.name.split("-", 1)[0]
        try:
            age = now - item.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        alive = pid_text.isdigit() and pid_alive(int(pid_text))
        if not alive or age > TEMP_MAX_AGE_SECONDS:
            found.append(f"{TEMP_DIR}/{item.name}")
    return sorted(found)


def sweep_temp(root: Path) -> list[str]:
    """Remove the temp files of writers that are gone; returns what was removed."""
    removed = []
    for relpath in leftover_temp_files(root):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(root / relpath)
            removed.append(relpath)
    return removed


# -- locks -------------------------------------------------------------------------------------
class FileLock:
    """An exclusive advisory lock on a file: fcntl.flock on POSIX, msvcrt.locking on Windows.

    Hand-written rather than a dependency: the lock sits on the start-up path of every write
    verb, and the library we measured cost ~35 ms of imports for what is two system calls here.
    The lock dies with its process: a killed holder never leaves the store locked.
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o666)

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
def held(lock: FileLock, timeout: float, what: str) -> Iterator[None]:
    deadline = time.monotonic() + timeout
    delay = 0.001
    while not lock.try_acquire():
        if time.monotonic() >= deadline:
            os.close(lock.fd)
            raise LockTimeoutError(f"{what} was held by another process for over {timeout:.0f}s "
                                   f"({lock.path}); retry when it is done")
        time.sleep(delay)
        delay = min(delay * 2, 0.02)
    try:
        yield
    finally:
        lock.release()


def file_lock(lock_path: Path, timeout: float, what: str) -> contextlib.AbstractContextManager[None]:
    """Hold an exclusive lock on `lock_path`, waiting up to `timeout` seconds (polling, backing off)."""
    return held(FileLock(lock_path), timeout, what)
