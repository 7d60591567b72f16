"""`gitmem web` while a warm server runs: the server serves the page from its own process, with
the same access rules, keeps it while it runs and counts its requests as use."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from gitmem.serve.control import ping
from gitmem.store.serverstate import read
from gitmem.store.store import Store
from servers import QUIET, start_server, stop, wait_for_server
from support import commit_count, run_gitmem
from webpage import WebPage, commits

START_LINE = re.compile(r"^http://127\.0\.0\.1:(\d+)/\?token=[\w-]{24,}$")


def _web(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str, str]:
    """`gitmem web --no-open ...`, which returns once a server serves the page (the test fails
    rather than hang if it serves the page itself)."""
    proc = subprocess.Popen([sys.executable, "-m", "gitmem", "--root", str(root), "web", "--no-open", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    try:
        out, err = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"gitmem web did not return: {out!r} {err!r}") from None
    return proc, out, err


def _hosted(root: Path) -> WebPage:
    proc, out, err = _web(root)
    assert proc.returncode == 0 and not err, (out, err)
    assert START_LINE.match(out.strip()), out
    return WebPage(proc, out.strip(), root)


def _status(root: Path) -> dict[str, object]:
    done = run_gitmem("--root", str(root), "serve", "--status", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _pid_alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def test_the_server_serves_the_page_and_web_returns_at_once(served: Path) -> None:
    page = _hosted(served)
    server_pid = ping(served)["pid"]  # type: ignore[index]
    # `gitmem web` has exited: whoever answers now is the server.
    assert page.get("/", cookie=False).status == 401
    assert page.get("/?token=not-the-token", cookie=False).status == 403
    assert page.get("/", headers={"Host": f"evil.example:{page.port}"}, cookie=False).status == 421
    page.sign_in()
    overview = page.get("/")
    assert overview.status == 200 and "Overview" in overview.text
    assert "default-src 'none'" in overview.headers["content-security-policy"]
    status = _status(served)
    assert status["up"] and status["pid"] == server_pid
    assert status["web"] == f"http://127.0.0.1:{page.port}/"
    token = page.start_url.split("token=", 1)[1]
    assert token not in (served / "state" / "serve.json").read_text()
    text = run_gitmem("--root", str(served), "status").stdout
    assert f"page: http://127.0.0.1:{page.port}/" in text and token not in text


def test_a_second_web_gets_the_same_page_and_a_busy_or_other_port_is_one_line(served: Path) -> None:
    first = _hosted(served)
    second = _hosted(served)
    assert second.start_url == first.start_url  # the same page, the same token
    again, out, err = _web(served, "--port", str(first.port + 1 if first.port < 65535 else 1))
    assert again.returncode == 2 and not out
    assert err.count("\n") == 1 and err.startswith("gitmem: error: the page of this store is served at")
    assert "Traceback" not in err


def test_a_busy_port_is_refused_in_one_line(served: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        proc, out, err = _web(served, "--port", str(port))
    assert proc.returncode == 2 and not out
    assert err == f"gitmem: error: cannot listen on 127.0.0.1:{port}: Address already in use\n"
    assert _status(served)["web"] is None
    assert START_LINE.match(_hosted(served).start_url)  # refused, not broken: the next one works


def test_a_write_from_the_hosted_page_is_one_commit(served: Path) -> None:
    done = run_gitmem("--root", str(served), "remember", "The staging database moved to db2",
                      "-l", "semantic", "--json")
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)["id"]
    page = _hosted(served)
    page.sign_in()
    before = commit_count(served)
    assert page.post("/entry/forget", {"id": entry}).status == 303
    assert commit_count(served) == before + 1
    assert commits(served)[0] == f"forget: {entry}"
    assert page.post("/entry/undo", {"id": entry}, origin="http://evil.example").status == 403
    assert page.post("/entry/undo", {"id": entry}, csrf="wrong").status == 403
    assert commit_count(served) == before + 1


def test_after_the_server_is_killed_web_starts_a_new_one(served: Path) -> None:
    old = _hosted(served)
    pid = ping(served)["pid"]  # type: ignore[index]
    assert isinstance(pid, int)
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    page = _hosted(served)
    new_pid = wait_for_server(served)["pid"]
    assert new_pid != pid
    assert page.start_url != old.start_url  # a new start: a new token
    page.sign_in()
    assert page.get("/").status == 200
    assert (read(served) or {}).get("autoStarted") is True


def test_page_requests_keep_an_idle_server_up_then_it_leaves(store: Store) -> None:
    store_root = store.root
    idle_minutes = 0.05  # three seconds without a call or a page request
    proc = start_server(store_root, *QUIET, "--idle-minutes", str(idle_minutes))
    try:
        page = _hosted(store_root)
        page.sign_in()
        until = time.monotonic() + idle_minutes * 60 * 2
        while time.monotonic() < until:  # well past the idle time, two requests a second
            assert page.get("/").status == 200
            assert proc.poll() is None
            time.sleep(0.5)
        proc.wait(timeout=idle_minutes * 60 + 30)  # no request now: it leaves when idle
        assert (read(store_root) or {}).get("reason") == "idle"
        assert _status(store_root)["web"] is None
    finally:
        stop(proc)


def test_with_the_server_off_web_serves_the_page_itself(served: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "gitmem", "--root", str(served), "web", "--no-open"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "GITMEM_SERVE": "off"})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert START_LINE.match(line), line
        page = WebPage(proc, line, served)
        page.sign_in()
        assert page.get("/").status == 200
        assert proc.poll() is None  # in the foreground, its own process
        assert _status(served)["web"] is None
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
