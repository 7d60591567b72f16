"""`gitmem web`'s side of the warm server: ask the store's server to serve the page, starting
one the way any call does when none runs (gitmem/serve/autostart.py).

None means "serve the page in this process": GITMEM_SERVE=off, no server and none may start
(`manual`, serve.autoStart false), a server that does not come up or does not answer in time,
or one of another gitmem. A refusal of the server (a busy port) is the same error the page
would raise in this process.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmem import caller
from gitmem.errors import GitmemError
from gitmem.serve import autostart, client, wire

CONNECT_SECONDS = 2.0
ANSWER_SECONDS = 30.0  # the server binds and starts uvicorn: under a second unless swamped
START_WAIT_SECONDS = 30.0  # a server started for this call: its imports, then it listens


@dataclass
class Hosted:
    """The page as the server serves it."""

    url: str  # with its token: printed once, to the person who asked
    pid: int
    reused: bool


class PageRefused(GitmemError):
    """The server could not serve the page (its exit code is the one it would have here)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.exit_code = code


def ask_to_host(root: Path, *, port: int, workspace: str | None, cwd: Path,
                notes: list[str]) -> Hosted | None:
    """The page served by the store's server, or None: serve it here. `notes` gets what
    happened (for -v)."""
    mode = client.serve_mode()
    if mode == "off":
        notes.append("GITMEM_SERVE is off: the page runs in this process")
        return None
    request = {"op": "web", "protocol": wire.PROTOCOL, "identity": client.identity(),
               "port": port, "workspace": workspace, "cwd": str(cwd), "env": caller.environ()}
    reply = _ask(root, request)
    if reply is None and mode == "auto" and _start(root, notes):
        reply = _ask(root, request)
    if reply is None:
        notes.append("no gitmem server serves this store: the page runs in this process")
        return None
    if not reply.get("ran"):
        notes.append(f"the gitmem server did not serve the page: {reply.get('reason')}")
        return None
    if reply.get("error"):
        raise PageRefused(str(reply["error"]), int(reply.get("code") or 1))
    return Hosted(str(reply["url"]), int(reply.get("pid") or 0), bool(reply.get("reused")))


def _ask(root: Path, request: dict[str, Any]) -> dict[str, Any] | None:
    """The server's reply to the request; None when none answers."""
    try:
        sock = wire.connect(wire.socket_path(str(root)), CONNECT_SECONDS)
    except OSError:
        return None
    try:
        wire.send(sock, request)
        sock.settimeout(ANSWER_SECONDS)
        return wire.receive(sock)
    except (OSError, ConnectionError, ValueError):
        return None
    finally:
        sock.close()


def _start(root: Path, notes: list[str]) -> bool:
    """Start a server in the background (or let the one being started come up); whether one
    now listens."""
    if not autostart.auto_start_allowed(str(root)):
        notes.append("serve.autoStart is false")
        return False
    notes.append(autostart.start_in_background(str(root)))
    deadline = time.monotonic() + START_WAIT_SECONDS
    while time.monotonic() < deadline:
        if _pinged(root):
            return True
        time.sleep(0.1)
    notes.append(f"no gitmem server came up within {START_WAIT_SECONDS:g} s")
    return False


def _pinged(root: Path) -> bool:
    from gitmem.serve.control import ping

    return ping(root) is not None
