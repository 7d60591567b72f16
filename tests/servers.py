"""Starting and stopping real `gitmem serve` processes for the tests."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from gitmem.serve.control import ping

QUIET = ["--sync-every", "0", "--history-every", "0", "--consolidate-every", "0", "--refresh-every", "0"]


def start_server(root: Path, *extra: str, wait: bool = True) -> subprocess.Popen[str]:
    """`gitmem --root ROOT serve ...` in the background; returns once it answers."""
    proc = subprocess.Popen([sys.executable, "-m", "gitmem", "--root", str(root), "serve", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ})
    if wait:
        wait_until_up(root, proc)
    return proc


def wait_until_up(root: Path, proc: subprocess.Popen[str], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ping(root) is not None:
            return
        if proc.poll() is not None:
            raise AssertionError(f"the server exited {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
        time.sleep(0.05)
    raise AssertionError("the server did not come up")


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def wait_for_server(root: Path, timeout: float = 30.0) -> dict[str, object]:
    """The ping reply of the store's server, once one answers (one a call started, say)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reply = ping(root)
        if reply is not None:
            return reply
        time.sleep(0.05)
    raise AssertionError("no server came up")
