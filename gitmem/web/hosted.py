"""The page hosted by the store's warm server: the same guarded app as `gitmem web` on its own,
served by uvicorn on a thread of the server's process, from the first `gitmem web` that asks
until the server stops.

The server's socket answers its owner only, so whoever asks is the person the page is for: a
second `gitmem web` gets the page already served, with its token (a tab signed in before stays
signed in). Each request runs for the caller of the `gitmem web` that started the page (its
environment and folder: gitmem/caller.py), as it would in that call's own process, and counts
as the server's use, so a server that exits when idle stays while the page is used.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from gitmem import caller
from gitmem.errors import GitmemError, InvalidInputError

InUse = Callable[[], AbstractContextManager[None]]
START_SECONDS = 15.0  # uvicorn is up in well under a second; a swamped machine gets this long
STOP_SECONDS = 5.0


class ForCaller:
    """ASGI middleware: each request runs for `who` and counts as the server's use."""

    def __init__(self, app: Any, who: caller.Caller, in_use: InUse) -> None:
        self.app, self.who, self.in_use = app, who, in_use

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # The view threads (Starlette's thread pool) copy this context: the caller goes along.
        with caller.use(self.who), self.in_use():
            await self.app(scope, receive, send)


class HostedPage:
    """At most one page per server; `host` starts it or hands back the one that runs."""

    def __init__(self, root: Path, in_use: InUse) -> None:
        self.root, self.in_use = root, in_use
        self._lock = threading.Lock()
        self._url: str | None = None
        self._port = 0
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def host(self, request: dict[str, Any]) -> dict[str, Any]:
        """{"url", "address", "reused"} or {"error", "code"} for one `gitmem web` request."""
        port = int(request.get("port") or 0)
        with self._lock:
            try:
                if self._running():
                    return self._reuse(port)
                self._start(request, port)
            except GitmemError as exc:
                return {"error": str(exc), "code": exc.exit_code}
            return {"url": self._url, "address": self.address(), "reused": False}

    def address(self) -> str | None:
        """The page's address without its token (for `gitmem status`); None when none runs."""
        return f"http://127.0.0.1:{self._port}/" if self._running() else None

    def close(self) -> None:
        """Stop serving the page (the server is stopping)."""
        with self._lock:
            if self._server is not None:
                self._server.should_exit = True
            if self._thread is not None:
                self._thread.join(STOP_SECONDS)
            self._server = self._thread = self._url = None

    def _running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and self._url is not None

    def _reuse(self, port: int) -> dict[str, Any]:
        if port and port != self._port:
            raise InvalidInputError(
                f"the page of this store is served at {self.address()} by its gitmem server; "
                "`gitmem serve --stop` ends it, then `gitmem web --port` serves it elsewhere")
        return {"url": self._url, "address": self.address(), "reused": True}

    def _start(self, request: dict[str, Any], port: int) -> None:
        from gitmem.web.access import Access
        from gitmem.web.app import build
        from gitmem.web.serve import http_server, loopback_sockets

        who = caller.Caller(str(request.get("cwd") or self.root),
                            {str(k): str(v) for k, v in dict(request.get("env") or {}).items()})
        workspace = request.get("workspace")
        sockets = loopback_sockets(port)
        chosen = sockets[0].getsockname()[1]
        try:
            with caller.use(who):
                app, access = build(self.root, port=chosen, cwd=Path(who.cwd), access=Access(chosen),
                                    workspace=str(workspace) if workspace else None)
            server = http_server(ForCaller(app, who, self.in_use))
            thread = threading.Thread(target=_run, args=(server, sockets), name="gitmem-web",
                                      daemon=True)
            thread.start()
            _wait_started(server, thread)
        except BaseException:
            for sock in sockets:
                sock.close()
            raise
        self._server, self._thread, self._port, self._url = server, thread, chosen, access.start_url()


def _run(server: Any, sockets: list[Any]) -> None:
    try:
        server.run(sockets=sockets)
    finally:
        for sock in sockets:
            sock.close()


def _wait_started(server: Any, thread: threading.Thread) -> None:
    """Return once uvicorn listens; a server that failed or hangs is stopped and reported."""
    deadline = time.monotonic() + START_SECONDS
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    if not server.started:
        server.should_exit = True
        thread.join(STOP_SECONDS)
        raise GitmemError("the page did not start in the gitmem server (its log: state/serve.log)")
