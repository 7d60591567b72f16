"""Running the page: loopback sockets only (127.0.0.1 and, when the machine has it, ::1), in
this process in the foreground (`gitmem web` on its own) or on a thread of the store's warm
server (gitmem/web/hosted.py): both build the same guarded app (web/app.build) and the same
uvicorn server."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gitmem.errors import InvalidInputError
from gitmem.web.access import Access

GRACEFUL_SECONDS = 2  # an open keep-alive connection does not hold a stopping page longer


def loopback_sockets(port: int) -> list[socket.socket]:
    """127.0.0.1:port (port 0 picks one), then ::1 on the same port when it can be had."""
    four = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    four.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        four.bind(("127.0.0.1", port))
    except OSError as exc:
        four.close()
        raise InvalidInputError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from exc
    sockets = [four]
    chosen = four.getsockname()[1]
    if socket.has_ipv6:
        six = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        try:
            six.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            six.bind(("::1", chosen))
            sockets.append(six)
        except OSError:  # no IPv6 loopback here: 127.0.0.1 alone serves
            six.close()
    for sock in sockets:
        sock.listen(64)
        sock.set_inheritable(True)
    return sockets


def http_server(app: Any) -> Any:
    """The uvicorn server of the page (quiet: no access log, no lifespan events)."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            timeout_graceful_shutdown=GRACEFUL_SECONDS)
    return uvicorn.Server(config)


def serve(root: Path, *, port: int, workspace: str | None, cwd: Path,
          announce: Callable[[str], None]) -> None:
    """Serve until interrupted; `announce` gets the start address (with its token) once bound.

    The address is announced before the app is built: the sockets listen already, so a browser
    opened on it (or any client) connects at once and its request waits in the listen queue
    while the web stack is imported, instead of the browser starting only after that."""
    sockets = loopback_sockets(port)
    chosen = sockets[0].getsockname()[1]
    access = Access(chosen)
    try:
        announce(access.start_url())
        from gitmem.web.app import build

        app, _access = build(root, port=chosen, workspace=workspace, cwd=cwd, access=access)
        server = http_server(app)
        server.run(sockets=sockets)
    finally:
        for sock in sockets:
            sock.close()
