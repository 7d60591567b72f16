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
    reply = _exchange(root, op, legacy=False)
    # A server started before frames changed from JSON (protocol 1) drops ours; it must still
    # be reachable, or `serve --stop` could not stop it after an upgrade.
    return reply if reply is not None else _exchange(root, op, legacy=True)


def _exchange(root: Path, op: str, *, legacy: bool) -> dict[str, object] | None:
    try:
        sock = wire.connect(wire.socket_path(str(root)), 2.0)
    except OSError:
        return None
    try:
        if legacy:
            return _legacy_exchange(sock, op)
        wire.send(sock, {"op": op})
        return wire.receive(sock)
    except (OSError, ConnectionError):
        return None
    finally:
        sock.close()


def _legacy_exchange(sock: wire.Sock, op: str) -> dict[str, object] | None:
    """{"op": op} to a protocol-1 server, in its JSON frames; None when nothing sensible came back."""
    import json

    data = json.dumps({"op": op}).encode("utf-8")
    sock.sendall(len(data).to_bytes(4, "big") + data)
    size = int.from_bytes(wire.read_exactly(sock, 4), "big")
    if size > wire.MAX_FRAME:
        return None
    try:
        reply = json.loads(wire.read_exactly(sock, size).decode("utf-8"))
    except ValueError:
        return None
    return reply if isinstance(reply, dict) else None


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
