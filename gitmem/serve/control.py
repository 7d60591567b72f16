"""Talking to a running server from outside: is it up, and stop it."""

from __future__ import annotations

import time
from pathlib import Path

from gitmem.serve import state, wire

STOP_WAIT_SECONDS = 10.0


def ping(root: Path) -> dict[str, object] | None:
    """The server's answer to a ping, or None when none answers."""
    return _ask(root, "ping")


def _ask(root: Path, op: str) -> dict[str, object] | None:
    try:
        sock = wire.connect(wire.socket_path(str(root)), 2.0)
    except OSError:
        return None
    try:
        wire.send(sock, {"op": op})
        return wire.receive(sock)
    except (OSError, ConnectionError):
        return None
    finally:
        sock.close()


def stop_server(root: Path) -> int | None:
    """Ask the server to stop and wait until it has; its pid, or None when none was running."""
    reply = _ask(root, "stop")
    if reply is None:
        return None
    pid = reply.get("pid")
    deadline = time.monotonic() + STOP_WAIT_SECONDS
    while time.monotonic() < deadline:
        data = state.read(root) or {}
        if data.get("pid") != pid:
            break
        time.sleep(0.05)
    return pid if isinstance(pid, int) else None
