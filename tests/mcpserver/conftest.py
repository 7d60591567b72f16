"""One real `gitmem mcp` server per test module, driven by the MCP SDK's own stdio client.

The client lives on an event loop in a background thread, so plain (synchronous) tests can call
tools one after another against the same long-lived server process, as an agent does.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Coroutine, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from gitmem.store.store import Store
from gitmem.verbs.workspaces import associate
from support import GIT_ENV, git


class McpClient:
    """A connected ClientSession, callable from synchronous tests."""

    def __init__(self, params: StdioServerParameters, errlog: Path) -> None:
        self.params = params
        self.errlog = errlog
        self.loop = asyncio.new_event_loop()
        self.session: ClientSession | None = None
        self._ready: Future[None] = Future()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self.loop.run_until_complete, args=(self._main(),),
                                        daemon=True)
        self._thread.start()
        self._ready.result(timeout=60)

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        try:
            with self.errlog.open("w") as errors:
                async with stdio_client(self.params, errlog=errors) as (read, write), \
                        ClientSession(read, write) as session:
                    await session.initialize()
                    self.session = session
                    self._ready.set_result(None)
                    await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting test
            if not self._ready.done():
                self._ready.set_exception(exc)
            else:
                raise

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=120)

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        assert self.session is not None
        return self.run(self.session.call_tool(name, arguments or {}))

    def ok(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """A tool's structured result; the call must succeed."""
        result = self.call(name, arguments)
        assert not result.is_error, result.content[0].text
        return result.structured_content

    def close(self) -> None:
        assert self._stop is not None
        self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=30)


def server_env(home: Path, **extra: str) -> dict[str, str]:
    # No warm server: `gitmem mcp` would start one for the store, left running after the test.
    env = {**GIT_ENV, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "GITMEM_SERVE": "off", **extra}
    return {k: v for k, v in env.items()}


def start(root: Path, cwd: Path, home: Path, errlog: Path, *args: str,
          env: dict[str, str] | None = None) -> McpClient:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "gitmem", "--root", str(root), "mcp", *args],
        env=server_env(home, **(env or {})), cwd=str(cwd))
    return McpClient(params, errlog)


class World:
    """A store, a workspace repository associated with it, and a server answering from both."""

    def __init__(self, base: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.base = base
        self.home = base / "home"
        self.home.mkdir()
        self.root = base / "store"
        self.project = base / "project"
        self.project.mkdir()
        saved = os.environ.copy()
        os.environ.update(server_env(self.home))
        os.environ.pop("GITMEM_SUBAGENT", None)
        try:
            store = Store(self.root, cwd=base)
            store.init()
            git(self.project, "init", "-q", "-b", "main")
            (self.project / "app.py").write_text("print('hi')\n")
            git(self.project, "add", "app.py")
            git(self.project, "commit", "-q", "-m", "First commit of the app")
            associate(store, "proj", "The project", self.project.resolve())
            store.close()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        self.client = start(self.root, self.project, self.home, base / "server.log", *args, env=env)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    made = World(tmp_path_factory.mktemp("mcp"))
    yield made
    made.client.close()


@pytest.fixture(scope="module")
def subagent_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """A server started with --subagent."""
    made = World(tmp_path_factory.mktemp("mcp-subagent"), "--subagent")
    yield made
    made.client.close()
