"""The server under stress: clients that vanish, a store that vanishes, two servers, long jobs."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmem.cli import cli
from gitmem.cli.serve import make_runner
from gitmem.serve import wire
from gitmem.serve.client import identity
from gitmem.serve.server import Server
from gitmem.store.store import Store
from servers import QUIET, start_server, stop
from support import run_gitmem

ANSWERED = "answered by the gitmem server"


def _raw(root: Path) -> wire._socket.socket:
    return wire.connect(wire.socket_path(str(root)), 5.0)


def test_clients_that_vanish_mid_request_do_not_hurt_the_server(store: Store) -> None:
    proc = start_server(store.root, *QUIET)
    try:
        half = _raw(store.root)  # a frame announced and never finished
        half.sendall((1000).to_bytes(4, "big") + b'{"op": "ru')
        half.close()
        garbage = _raw(store.root)
        garbage.sendall(b"\x00\x00\x00\x05hello")
        garbage.close()
        for _ in range(3):  # a full request whose caller is gone before the answer comes
            gone = _raw(store.root)
            wire.send(gone, {"op": "run", "protocol": wire.PROTOCOL, "identity": identity(),
                             "argv": ["--root", str(store.root), "context"], "cwd": str(store.root),
                             "env": {}, "stdin": "", "tty": [False, False, False]})
            gone.close()
        killed = subprocess.Popen([sys.executable, "-m", "gitmem", "--root", str(store.root),
                                   "context"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.05)
        killed.kill()
        killed.wait()
        done = run_gitmem("-v", "--root", str(store.root), "remember", "Still serving", "--layer", "semantic")
        assert done.returncode == 0 and ANSWERED in done.stderr, done.stderr
        assert proc.poll() is None
    finally:
        stop(proc)


def test_the_server_stops_when_its_store_is_deleted(store: Store) -> None:
    proc = start_server(store.root, *QUIET)
    try:
        shutil.rmtree(store.root)
        assert proc.wait(timeout=15) == 0
        moved_on = run_gitmem("-v", "--root", str(store.root), "search", "x")
        assert moved_on.returncode == 2 and "no gitmem store" in moved_on.stderr
    finally:
        stop(proc)


def test_of_two_servers_started_at_once_exactly_one_serves(store: Store) -> None:
    procs = [start_server(store.root, *QUIET, wait=False) for _ in range(2)]
    try:
        deadline = time.monotonic() + 30
        while all(p.poll() is None for p in procs) and time.monotonic() < deadline:
            time.sleep(0.05)
        losers = [p for p in procs if p.poll() is not None]
        assert len(losers) == 1
        assert losers[0].returncode == 3
        assert losers[0].stderr is not None and "already serves" in losers[0].stderr.read()
        winner = next(p for p in procs if p is not losers[0])
        done = run_gitmem("-v", "--root", str(store.root), "status")
        assert done.returncode == 0 and f"pid {winner.pid}" in done.stdout
        again = run_gitmem("--root", str(store.root), "serve", *QUIET)
        assert again.returncode == 3 and f"pid {winner.pid}" in again.stderr
    finally:
        for proc in procs:
            stop(proc)


@pytest.fixture
def in_thread(store: Store) -> Iterator[Server]:
    """A server in this process (so a test can hold the store's lock while it serves)."""
    server = Server(store.root, make_runner(cli), identity())
    server.claim()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stop()
        thread.join(timeout=20)


def test_a_read_during_a_write_answers_and_the_write_waits_its_turn(in_thread: Server) -> None:
    """While a writer (here: this test) holds the store lock, a read through the server is
    answered at once from the store as it stands; a write waits for the lock, then lands."""
    from gitmem.store.lock import store_lock

    root = in_thread.root
    assert run_gitmem("--root", str(root), "remember", "Staging listens on port 5433",
                      "--layer", "semantic", env={"GITMEM_SERVE": "off"}).returncode == 0
    with store_lock(root):
        writer = subprocess.Popen([sys.executable, "-m", "gitmem", "-v", "--root", str(root), "remember",
                                   "Written after the lock", "--layer", "semantic"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        read = run_gitmem("-v", "--root", str(root), "search", "staging port")
        assert read.returncode == 0 and ANSWERED in read.stderr, read.stderr
        assert "5433" in read.stdout
        assert writer.poll() is None  # it cannot have written: the lock is still held here
    out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0 and ANSWERED in err, err
    assert out.startswith("global-sem-")
    assert "Written after the lock" in run_gitmem("--root", str(root), "search", "written lock").stdout


def test_stop_ends_the_server(store: Store) -> None:
    proc = start_server(store.root, *QUIET)
    try:
        done = run_gitmem("--root", str(store.root), "serve", "--stop")
        assert done.returncode == 0 and f"pid {proc.pid}" in done.stdout
        assert proc.wait(timeout=15) == 0
        assert not (store.root / "state" / "serve.sock").exists()
        status = run_gitmem("--root", str(store.root), "status", env={"GITMEM_SERVE": "manual"})
        assert "server: not running" in status.stdout
        again = run_gitmem("--root", str(store.root), "serve", "--stop")
        assert again.returncode == 0 and "no gitmem server runs" in again.stdout
    finally:
        stop(proc)


@pytest.mark.parametrize("how", ["stop", "signal"])
def test_a_stop_wakes_the_server_without_waiting_for_its_poll(
        store: Store, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """A stop request, or SIGTERM, ends the accept loop at once: with the poll made an hour long,
    the server still leaves (before, it noticed only at its next poll, half a second later)."""
    import os
    import signal

    from gitmem.serve import server as served

    monkeypatch.setattr(served, "POLL_SECONDS", 3600.0)
    server = Server(store.root, make_runner(cli), identity())
    server.claim()
    if how == "signal":  # the handler runs on the main thread, so the loop must run there too
        previous = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}
        server.stop_on_signals()
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM))
        timer.start()
        try:
            server.serve_forever()
        finally:
            timer.cancel()
            for signum, handler in previous.items():
                signal.signal(signum, handler)
    else:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        time.sleep(0.3)
        server.stop()
        thread.join(timeout=30)
        assert not thread.is_alive()
    assert not (store.root / "state" / "serve.sock").exists()


def test_a_server_whose_files_pass_a_thousand_still_answers(store: Store) -> None:
    """A long-lived server holds many files (index segments, caches, calls' sockets): its socket
    and wake-up numbers above select()'s limit of 1024 still wait and answer."""
    import os
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1400:
        pytest.skip(f"this machine allows {hard} open files, fewer than the test needs")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1400), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    server = Server(store.root, make_runner(cli), identity())
    try:
        server.claim()
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        found = run_gitmem("-v", "--root", str(store.root), "search", "nothing-here")
        assert found.returncode == 1 and ANSWERED in found.stderr, found.stderr
        server.stop()
        thread.join(timeout=30)
        assert not thread.is_alive()
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
