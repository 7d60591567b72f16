"""Fixtures of the warm-server tests: the server on (a call that finds none starts one), and
every server a test started, by hand or by a call, stopped at its end."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmem.serve.control import stop_server
from gitmem.store.serverstate import read
from gitmem.store.store import Store
from servers import QUIET, start_server, stop


@pytest.fixture(autouse=True)
def _servers_on_and_cleaned_up(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.delenv("GITMEM_SERVE", raising=False)
    yield
    stop_servers_under(tmp_path)


def stop_servers_under(folder: Path) -> None:
    """Stop every server whose store lies under `folder` (its state file names it)."""
    for state_file in folder.rglob("state/serve.json"):
        root = state_file.parent.parent
        pid = (read(root) or {}).get("pid")
        stop_server(root)
        if isinstance(pid, int) and _is_server_of(pid, root):
            os.kill(pid, signal.SIGKILL)  # it did not stop when asked (a stopped process, say)
            os.kill(pid, signal.SIGCONT)


def _is_server_of(pid: int, root: Path) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"serve" in cmdline and os.fsencode(str(root)) in cmdline


@pytest.fixture
def served(store: Store) -> Iterator[Path]:
    """The store's root with `gitmem serve` running for it (nothing scheduled)."""
    proc = start_server(store.root, *QUIET)
    try:
        yield store.root
    finally:
        stop(proc)
