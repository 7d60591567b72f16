"""A call that finds no server starts one: one per store under races, detached, gone when idle,
replacing a server of another gitmem, and never started when turned off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from gitmem.cli import cli
from gitmem.cli.serve import make_runner
from gitmem.serve import wire
from gitmem.serve.client import identity
from gitmem.serve.server import Server
from gitmem.store.serverstate import read
from gitmem.store.store import Store
from servers import QUIET, start_server, stop, wait_for_server
from support import git, run_gitmem

ANSWERED = "answered by the gitmem server"


def _serve_starts(root: Path) -> int:
    log = (root / "logs" / "memory.log").read_text(encoding="utf-8")
    return sum(1 for line in log.splitlines() if '"event": "serve-start"' in line)


def _servers_of(root: Path) -> list[int]:
    """Pids of the live `gitmem ... serve` processes of this store."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            status = (entry / "status").read_text()
        except OSError:
            continue
        if b"serve" in cmdline and os.fsencode(str(root)) in cmdline and "State:\tZ" not in status:
            found.append(int(entry.name))
    return found


def _set_serve_setting(root: Path, **values: object) -> None:
    path = root / "memory.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data.setdefault("settings", {})["serve"] = values
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    git(root, "commit", "-qam", "serve settings")


def _wait_until(predicate: object, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError("timed out")


def test_ten_calls_at_once_start_one_server_and_the_next_call_is_served(store: Store) -> None:
    root = store.root
    calls = [subprocess.Popen([sys.executable, "-m", "gitmem", "--root", str(root), "search", "anything"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(10)]
    results = [(call.wait(timeout=120), call.communicate()) for call in calls]
    assert all(code == 1 and not err for code, (_out, err) in results), results
    reply = wait_for_server(root)
    # A second server, had one been started, stops at once on the store's serve lock: wait until
    # only the one answering is left (a loaded machine may take a while to let it go).
    _wait_until(lambda: _servers_of(root) == [reply["pid"]], timeout=20)
    assert _serve_starts(root) == 1
    served = run_gitmem("-v", "--root", str(root), "search", "anything")
    assert served.returncode == 1 and f"{ANSWERED} (pid {reply['pid']}" in served.stderr
    status = json.loads(run_gitmem("--root", str(root), "status", "--json").stdout)["server"]
    assert status["up"] and status["autoStarted"] is True and status["idleMinutes"] == 30
    assert status["jobs"]["sync"]["next"] is None  # a server nobody asked for syncs nothing
    # Detached: a session of its own, so the caller's terminal and process group do not reach it.
    assert os.getsid(int(reply["pid"])) == int(reply["pid"])


def test_a_server_started_by_a_call_exits_when_idle_and_one_started_by_hand_stays(store: Store) -> None:
    root = store.root
    # 3 s: several times a CLI call's start on a loaded machine, so the second call finds it up
    # (the ping that saw it up counts as use).
    _set_serve_setting(root, idleMinutes=0.05)
    first = run_gitmem("-v", "--root", str(root), "status")
    assert first.returncode == 0 and "started a gitmem server in the background" in first.stderr
    pid = int(wait_for_server(root)["pid"])
    served = run_gitmem("-v", "--root", str(root), "status")
    assert ANSWERED in served.stderr
    _wait_until(lambda: pid not in _servers_of(root))
    assert (read(root) or {}).get("reason") == "idle"
    assert not (root / "state" / "serve.sock").exists()
    by_hand = start_server(root, *QUIET)
    try:
        time.sleep(4.0)  # past the idle time that ended the server started by a call
        assert by_hand.poll() is None
        assert ANSWERED in run_gitmem("-v", "--root", str(root), "status").stderr
    finally:
        stop(by_hand)


def test_off_and_the_setting_start_no_server(store: Store) -> None:
    root = store.root
    off = run_gitmem("-v", "--root", str(root), "status", env={"GITMEM_SERVE": "off"})
    assert off.returncode == 0 and "server" not in off.stderr
    manual = run_gitmem("-v", "--root", str(root), "status", env={"GITMEM_SERVE": "manual"})
    assert manual.returncode == 0 and "started" not in manual.stderr
    _set_serve_setting(root, autoStart=False)
    told = run_gitmem("-v", "--root", str(root), "status")
    assert told.returncode == 0 and "serve.autoStart is false" in told.stderr
    # posix_spawn opens the server's log before the call returns: no log, no server.
    assert not (root / "state" / "serve.log").exists()
    assert _servers_of(root) == []


def test_no_server_is_started_for_a_folder_that_holds_no_store(tmp_path: Path) -> None:
    missing = tmp_path / "nothing"
    done = run_gitmem("-v", "--root", str(missing), "search", "x")
    assert done.returncode == 2 and "no gitmem store" in done.stderr
    assert not missing.exists()


def test_a_server_of_another_version_is_replaced(store: Store) -> None:
    old = Server(store.root, make_runner(cli), "0.0.1 /elsewhere")
    old.claim()
    thread = threading.Thread(target=old.serve_forever, daemon=True)
    thread.start()
    try:
        done = run_gitmem("-v", "--root", str(store.root), "remember", "-", "--layer", "semantic",
                          input_text="Read from standard input once\n")
        assert done.returncode == 0, done.stderr
        assert "the server runs gitmem 0.0.1 /elsewhere" in done.stderr and ANSWERED not in done.stderr
        assert "asked it to stop" in done.stderr
        thread.join(timeout=20)
        assert not thread.is_alive() and old.requests == 0
    finally:
        old.stop()
        thread.join(timeout=20)
    shown = run_gitmem("--root", str(store.root), "show", done.stdout.strip(), env={"GITMEM_SERVE": "off"})
    assert "Read from standard input once" in shown.stdout
    _wait_until(lambda: (read(store.root) or {}).get("identity") == identity())
    new = wait_for_server(store.root)
    assert new["identity"] == identity() and new["pid"] != os.getpid()
    assert ANSWERED in run_gitmem("-v", "--root", str(store.root), "status").stderr


def test_a_killed_server_is_replaced_by_the_next_call(store: Store) -> None:
    """kill -9 while a call waits on it: that call answers itself, the next starts a server."""
    proc = start_server(store.root, *QUIET)
    try:
        os.kill(proc.pid, 19)  # SIGSTOP: the call below is sure to be under way when the kill comes
        call = subprocess.Popen([sys.executable, "-m", "gitmem", "-v", "--root", str(store.root), "status"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        proc.kill()
        proc.wait(timeout=20)
        out, err = call.communicate(timeout=120)
        assert call.returncode == 0 and ANSWERED not in err, err
        assert (store.root / "state" / "serve.sock").exists()  # what the kill left behind
    finally:
        stop(proc)
    nxt = run_gitmem("-v", "--root", str(store.root), "status")
    assert nxt.returncode == 0 and "started a gitmem server" in nxt.stderr, nxt.stderr
    pid = wait_for_server(store.root)["pid"]
    assert pid != proc.pid
    assert ANSWERED in run_gitmem("-v", "--root", str(store.root), "status").stderr


def test_a_stopped_server_holds_no_call_and_runs_no_abandoned_write(store: Store) -> None:
    proc = start_server(store.root, *QUIET)
    try:
        os.kill(proc.pid, 19)  # SIGSTOP
        done = run_gitmem("-v", "--root", str(store.root), "search", "anything")
        # The client's own wait ran out (its message), rather than hanging on the stopped server.
        assert done.returncode == 1 and "the server did not answer" in done.stderr, done.stderr
        # A remember whose client is gone (killed) while the server was stopped.
        sock = wire.connect(wire.socket_path(str(store.root)), 5.0)
        wire.send(sock, {"op": "run", "protocol": wire.PROTOCOL, "identity": identity(),
                         "argv": ["--root", str(store.root), "remember", "Abandoned fact here",
                                  "--layer", "semantic"],
                         "cwd": str(store.root), "env": dict(os.environ), "stdin": "",
                         "tty": [False, False, False]})
        sock.close()
        os.kill(proc.pid, 18)  # SIGCONT
        after = run_gitmem("-v", "--root", str(store.root), "list", "--json")
        assert ANSWERED in after.stderr
        time.sleep(0.5)
        assert "Abandoned" not in run_gitmem("--root", str(store.root), "list", "--json").stdout
        assert "Abandoned" not in git(store.root, "log", "-p")
    finally:
        os.kill(proc.pid, 18)
        stop(proc)


def test_an_agent_hook_that_finds_no_server_starts_one(store: Store) -> None:
    payload = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s1",
                          "prompt": "which port does staging listen on?"})
    first = run_gitmem("--root", str(store.root), "search", "--hook", input_text=payload)
    assert first.returncode == 0 and not first.stderr
    pid = wait_for_server(store.root)["pid"]
    again = run_gitmem("-v", "--root", str(store.root), "search", "--hook", input_text=payload)
    assert again.returncode == 0 and f"{ANSWERED} (pid {pid}" in again.stderr
    assert again.stdout == first.stdout


def _mcp_process(root: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """`gitmem mcp` as an agent starts it, its stdin held open (no request sent yet)."""
    return subprocess.Popen([sys.executable, "-m", "gitmem", "--root", str(root), "mcp"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, **(env or {})})


def _close(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()  # the client went away: the MCP server ends
    proc.wait(timeout=60)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def test_an_mcp_server_starts_the_store_server_for_the_agents_other_calls(store: Store) -> None:
    root = store.root
    mcp = _mcp_process(root)
    try:
        reply = wait_for_server(root, timeout=60)
        # The agent's shell call after it is answered by that server, not by a process of its own.
        served = run_gitmem("-v", "--root", str(root), "search", "anything")
        assert served.returncode == 1 and f"{ANSWERED} (pid {reply['pid']}" in served.stderr
        assert (read(root) or {}).get("autoStarted") is True
    finally:
        _close(mcp)
    # A second MCP server finds that one up and starts no other.
    again = _mcp_process(root)
    try:
        _wait_until(lambda: (root / "logs" / "memory.log").exists())
        time.sleep(1.0)
        assert _servers_of(root) == [int(reply["pid"])]
        assert _serve_starts(root) == 1
    finally:
        _close(again)


def test_an_mcp_server_starts_none_when_serving_is_off(store: Store) -> None:
    root = store.root
    mcp = _mcp_process(root, env={"GITMEM_SERVE": "off"})
    try:
        time.sleep(2.0)  # longer than a start takes to open the server's log
        assert not (root / "state" / "serve.log").exists()
        assert _servers_of(root) == []
    finally:
        _close(mcp)
