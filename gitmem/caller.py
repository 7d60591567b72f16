"""Who gitmem runs for right now: the caller's folder, environment, time zone and standard streams.

A normal gitmem process is its own caller: every function here answers from the process (its
os.environ, its working folder, its local time, its streams). The warm server answers many
callers at once, each on a thread of its own, so it changes none of the process's state; it
runs each call inside `use(Caller(...))` instead, and everything gitmem reads of its
surroundings comes through here: `env()`/`environ()` for settings, `cwd()` for the folder
relative paths and the workspace start from, `now()`/`tz()` for dates, `isatty()` and the
standard streams (`install_streams()`: one object per stream for the server's lifetime, writing
to the stream of the call whose thread writes).

This is the one module of gitmem that reads os.environ or the working folder
(tests/test_architecture.py holds the others to it). Kept to modules built into the
interpreter: the warm server's client imports it on every CLI call.
"""

from __future__ import annotations

import io
import os
import sys
import time
from _contextvars import ContextVar

TYPE_CHECKING = False  # `typing` is not imported at run time: see gitmem/__init__.py
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from datetime import date, datetime, tzinfo
    from typing import Any, TextIO, TypeVar

    T = TypeVar("T")


class CallerStream(io.TextIOWrapper):
    """One standard stream of a call, over bytes, answering isatty() as the caller's did."""

    tty = False

    def isatty(self) -> bool:
        return self.tty


def stream(data: io.BytesIO, tty: bool) -> CallerStream:
    """A text stream over `data` (UTF-8, undecodable bytes kept as they are)."""
    made = CallerStream(data, encoding="utf-8", errors="surrogateescape", write_through=True)
    made.tty = tty
    return made


class Caller:
    """One call's surroundings (never changed once made): its folder, its environment (a copy),
    whether its stdin, stdout and stderr are terminals, and its standard streams."""

    __slots__ = ("cwd", "env", "stderr", "stdin", "stdout", "tty")

    def __init__(self, cwd: str, env: Mapping[str, str], tty: tuple[bool, bool, bool] = (False,) * 3,
                 stdin: TextIO | None = None, stdout: TextIO | None = None,
                 stderr: TextIO | None = None) -> None:
        self.cwd = os.path.abspath(cwd)
        self.env = {str(k): str(v) for k, v in env.items()}
        self.tty = tuple(bool(t) for t in tty)
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr


_current: ContextVar[Caller | None] = ContextVar("gitmem_caller", default=None)


class use:  # noqa: N801 - used as `with caller.use(...)`, like a function
    """`with use(caller):` the code in the block (on this thread) runs for `caller`."""

    def __init__(self, caller: Caller) -> None:
        self.caller = caller
        self._token: Any = None

    def __enter__(self) -> Caller:
        self._token = _current.set(self.caller)
        return self.caller

    def __exit__(self, *_exc: object) -> None:
        _current.reset(self._token)


def current() -> Caller | None:
    """The caller of the call under way on this thread; None: the process is its own caller."""
    return _current.get()


# -- environment and folder --------------------------------------------------------------------
def env(name: str, default: str | None = None) -> str | None:
    """One environment variable of the caller."""
    who = _current.get()
    return (who.env if who is not None else os.environ).get(name, default)


def environ() -> dict[str, str]:
    """A copy of the caller's whole environment (for a child process, say)."""
    who = _current.get()
    return dict(who.env if who is not None else os.environ)


def child_env() -> dict[str, str] | None:
    """The environment a child process gets: None (inherit the process's own) unless a call
    of another caller is under way."""
    who = _current.get()
    return dict(who.env) if who is not None else None


def cwd() -> str:
    """The caller's working folder (OSError when the process's own folder is gone)."""
    who = _current.get()
    return who.cwd if who is not None else os.getcwd()


def absolute(path: str) -> str:
    """`path` made absolute against the caller's folder (not normalized, as Path.absolute)."""
    return path if os.path.isabs(path) else os.path.join(cwd(), path)


def home() -> str:
    """The caller's home folder: HOME, else the user database's."""
    value = env("HOME")
    if value:
        return value
    import pwd

    return pwd.getpwuid(os.getuid()).pw_dir


def expanduser(path: str) -> str:
    """os.path.expanduser with the caller's HOME (`~user` from the user database)."""
    if path == "~" or path.startswith("~/"):
        return (home().rstrip("/") + path[1:]) or "/"
    return os.path.expanduser(path) if path.startswith("~") else path


def isatty(fd: int) -> bool:
    """Whether the caller's stdin (0), stdout (1) or stderr (2) is a terminal."""
    who = _current.get()
    if who is not None:
        return who.tty[fd]
    try:
        return bool((sys.stdin, sys.stdout, sys.stderr)[fd].isatty())
    except (AttributeError, OSError, ValueError):
        return False


# -- process-wide state: only at a process's start, before any call ------------------------------
def move_process(folder: str) -> None:
    """The process's own working folder (a server that outlives the folder it started in)."""
    os.chdir(folder)


def set_process_env(name: str, value: str) -> None:
    """Set a variable for this process and every child it starts (`gitmem mcp --subagent`)."""
    os.environ[name] = value


def pop_process_env(name: str) -> str:
    """Take a variable out of this process's environment (one meant for it alone); its value."""
    return os.environ.pop(name, "")


def by_short_name(path: str, action: Callable[[str], T]) -> T:
    """action(a name for `path` short enough for a socket address: sun_path holds 104-108
    bytes). A longer path is reached through its folder: /proc/self/fd where there is one
    (the working folder stays as it is, for every thread), else from the folder itself."""
    if len(os.fsencode(path)) <= _MAX_SOCKET_PATH:
        return action(path)
    folder, name = os.path.split(path)
    if os.path.isdir("/proc/self/fd"):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            return action(f"/proc/self/fd/{fd}/{name}")
        finally:
            os.close(fd)
    here = os.open(".", os.O_RDONLY)
    os.chdir(folder)
    try:
        return action(name)
    finally:
        os.fchdir(here)
        os.close(here)


_MAX_SOCKET_PATH = 100


# -- time ----------------------------------------------------------------------------------------
_zones: dict[str, tzinfo] = {}


def tz() -> tzinfo | None:
    """The caller's time zone; None: the process's own local time is the caller's."""
    who = _current.get()
    if who is None or who.env.get("TZ") == os.environ.get("TZ"):
        return None
    key = who.env.get("TZ")
    zone = _zones.get(key if key is not None else "\0local")
    if zone is None:
        zone = _zones.setdefault(key if key is not None else "\0local", _zone(key))
    return zone


def now() -> datetime:
    """The caller's local time, naive (as datetime.now() in its own process)."""
    from datetime import datetime

    zone = tz()
    return datetime.now() if zone is None else datetime.now(zone).replace(tzinfo=None)


def today() -> date:
    return now().date()


def local_time(epoch: float | None = None) -> datetime:
    """A moment (default: now) in the caller's time zone, with its offset."""
    from datetime import datetime

    moment = time.time() if epoch is None else epoch
    zone = tz()
    return datetime.fromtimestamp(moment).astimezone() if zone is None \
        else datetime.fromtimestamp(moment, zone)


def local_date(epoch: float) -> date:
    """The caller's calendar day of a moment."""
    return local_time(epoch).date()


def as_local(moment: datetime) -> datetime:
    """A datetime with the caller's offset; a naive one is read as the caller's local time."""
    zone = tz()
    if zone is None:
        return moment.astimezone()
    return moment.replace(tzinfo=zone) if moment.tzinfo is None else moment.astimezone(zone)


def _zone(value: str | None) -> tzinfo:
    """What the C library makes of TZ=value: a zone name, a zone file, a POSIX rule; else UTC."""
    import zoneinfo
    from datetime import UTC, timedelta, timezone

    if value is None:
        return _zone_file("/etc/localtime") or UTC
    name = value[1:] if value.startswith(":") else value
    if not name:
        return UTC
    if os.path.isabs(name):
        return _zone_file(name) or timezone(timedelta(0), name)
    try:
        return zoneinfo.ZoneInfo(name)
    except (ValueError, OSError, zoneinfo.ZoneInfoNotFoundError):
        pass
    try:
        return zoneinfo.ZoneInfo.from_file(io.BytesIO(_posix_tzif(name)), key=name)
    except (ValueError, OSError):
        return timezone(timedelta(0), name)


def _zone_file(path: str) -> tzinfo | None:
    import zoneinfo

    try:
        with open(path, "rb") as handle:
            return zoneinfo.ZoneInfo.from_file(handle)
    except (OSError, ValueError):
        return None


def _posix_tzif(rule: str) -> bytes:
    """A zone file with no transitions whose footer is the POSIX rule (e.g. `EST5EDT,M3.2.0,M11.1.0`)."""
    import struct

    if "\n" in rule:
        raise ValueError("not a TZ rule")
    header = b"TZif2" + b"\0" * 15 + struct.pack(">6l", 0, 0, 0, 0, 1, 1)
    block = header + struct.pack(">lBB", 0, 0, 0) + b"\0"
    return block + block + b"\n" + rule.encode("ascii") + b"\n"


# -- standard streams ------------------------------------------------------------------------------
class _Dispatch:
    """sys.stdin, sys.stdout or sys.stderr of a server: the current call's stream of that kind,
    or the process's own outside any call."""

    def __init__(self, kind: str, own: TextIO) -> None:
        self._kind, self._own = kind, own

    def _target(self) -> TextIO:
        who = _current.get()
        found = getattr(who, self._kind) if who is not None else None
        return found if found is not None else self._own

    def isatty(self) -> bool:
        return self._target().isatty()

    def write(self, text: str) -> int:
        return self._target().write(text)

    def flush(self) -> None:
        self._target().flush()

    @property
    def buffer(self) -> Any:
        return self._target().buffer

    @property
    def encoding(self) -> str:
        return self._target().encoding

    @property
    def errors(self) -> str | None:
        return self._target().errors

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target(), name)

    def __iter__(self) -> Any:
        return iter(self._target())


def install_streams() -> None:
    """Make sys.stdin/stdout/stderr follow the call under way (once, at a server's start)."""
    for kind in ("stdin", "stdout", "stderr"):
        own = getattr(sys, kind)
        if not isinstance(own, _Dispatch):
            setattr(sys, kind, _Dispatch(kind, own))
