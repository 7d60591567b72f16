"""Starting the store's server from a call that found none: in the background, at most one.

Imported only on the path where no server answers (that call then runs the whole command line
itself), so its cost is not on the served path. The started process is detached (a session of
its own: no terminal, not in the caller's process group, so a Ctrl-C or a closed terminal does
not reach it), reads nothing, writes to state/serve.log, and exits after `serve.idleMinutes`
without a call. Of many calls that race, one starts it: each takes state/serve.start (flock)
without waiting, and the one that gets it hands the lock to the server it starts, which keeps it
until it listens; the others run their call themselves. A second server still could not serve
the store: `gitmem serve` takes state/serve.lock first.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys

from gitmem import caller
from gitmem.serve import wire

START_FILE = os.path.join(wire.STATE_DIR, "serve.start")
LOG_FILE = os.path.join(wire.STATE_DIR, "serve.log")
START_FD_ENV = "GITMEM_SERVE_START_FD"
_CHILD_START_FD = 3


def _is_store(root: str) -> bool:
    return os.path.isfile(os.path.join(root, "memory.json")) and \
        os.path.exists(os.path.join(root, ".git"))


def auto_start_allowed(root: str) -> bool:
    """The store's setting `serve.autoStart` (memory.json; default true)."""
    import json

    try:
        with open(os.path.join(root, "memory.json"), encoding="utf-8") as handle:
            data = json.load(handle)
        serve = (data.get("settings") or {}).get("serve") or {}
        return serve.get("autoStart", True) is not False
    except (OSError, ValueError, AttributeError):
        return True  # the call itself reports a broken memory.json


def start_in_background(root: str) -> str:
    """Start a server for the store unless one is starting; what happened, for `-v`."""
    if not _is_store(root) or not auto_start_allowed(root):
        return "no server started (no store here, or serve.autoStart is false)"
    state = os.path.join(root, wire.STATE_DIR)
    try:
        os.makedirs(state, mode=0o700, exist_ok=True)
        fd = os.open(os.path.join(root, START_FILE), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        return f"no server started ({exc.strerror or exc})"
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return "a server is being started by another call"
        pid = _spawn(root, fd)
    except OSError as exc:
        return f"no server started ({exc.strerror or exc})"
    finally:
        os.close(fd)  # the server holds its own copy of the lock until it listens
    return f"started a gitmem server in the background (pid {pid}) for the calls after this one"


def _spawn(root: str, lock_fd: int) -> int:
    """`python -m gitmem --root ROOT serve --auto`, detached; its pid."""
    log = os.path.join(root, LOG_FILE)
    argv = [sys.executable, "-m", "gitmem", "--root", root, "serve", "--auto"]
    env = {**caller.environ(), START_FD_ENV: str(_CHILD_START_FD)}
    env.pop("GITMEM_VERBOSE", None)
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600),
        (os.POSIX_SPAWN_DUP2, 1, 2),
        (os.POSIX_SPAWN_DUP2, lock_fd, _CHILD_START_FD),
    ]
    return os.posix_spawn(sys.executable, argv, env, file_actions=actions, setsid=True)


def replace(root: str) -> str:
    """Ask a server of another gitmem to stop and start one of this gitmem (which waits for
    the old one to let go of the store)."""
    try:
        sock = wire.connect(wire.socket_path(root), 2.0)
        try:
            wire.send(sock, {"op": "stop"})
            sock.settimeout(2.0)
            wire.receive(sock)
        finally:
            sock.close()
    except (OSError, ConnectionError):
        pass  # gone already, or too old to understand: the new server waits for the lock anyway
    return "the server runs another gitmem: asked it to stop; " + start_in_background(root)


def release_start_lock() -> None:
    """In the started server, once it listens: let the next starter through (after this, a call
    that finds no server is one that comes after this server has gone)."""
    value = caller.pop_process_env(START_FD_ENV)
    if value.isdigit():
        with contextlib.suppress(OSError):
            os.close(int(value))
