"""The server is its owner's only: modes of the socket and the state folder, the peer's user id
checked on every connection, and `status` trusting no pid it has not seen listening."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmem.caller import by_short_name
from gitmem.serve import wire
from gitmem.store.store import Store
from servers import QUIET, start_server, stop
from support import run_gitmem

NOBODY = 65534


def _ping_as(uid: int, path: str) -> str:
    """What a process of user `uid` gets when it pings the socket at `path` (a forked child
    that drops its privileges with os.setuid, then speaks the server's frames)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read_end)
        try:
            os.setuid(uid)
            result = _ping(path)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            result = f"child failed: {exc!r}"
        os.write(write_end, result.encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        result = pipe.read().decode()
    os.waitpid(pid, 0)
    return result


def _ping(path: str) -> str:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    try:
        sock.connect(path)
    except OSError as exc:
        return f"connect: {type(exc).__name__}"
    try:
        wire.send(sock, {"op": "ping"})
        return f"reply: {sorted(wire.receive(sock).items())}"
    except (OSError, ConnectionError):
        return "closed"
    finally:
        sock.close()


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_socket_and_the_state_folder_are_the_owners_only(served: Path) -> None:
    state = served / "state"
    assert _mode(state) == 0o700
    assert _mode(state / "serve.sock") == 0o600
    assert _mode(state / "serve.json") == 0o600


@pytest.fixture
def open_store_dir() -> Iterator[Path]:
    """A store in a folder every user may pass through (tmp_path is root's only)."""
    parent = Path(tempfile.mkdtemp(prefix="gitmem-peer-"))
    parent.chmod(0o711)
    try:
        yield parent
    finally:
        shutil.rmtree(parent, ignore_errors=True)


@pytest.mark.skipif(os.name != "posix" or os.getuid() != 0,
                    reason="dropping to another user needs root (the suite runs as root)")
def test_another_users_connection_is_refused(open_store_dir: Path) -> None:
    root = open_store_dir / "store"
    store = Store(root, cwd=open_store_dir)
    store.init()
    store.close()
    proc = start_server(root, *QUIET)
    sock = str(root / "state" / "serve.sock")

    def as_nobody() -> str:
        return _ping_as(NOBODY, sock)

    try:
        # The modes alone keep the other user out ...
        assert as_nobody() == "connect: PermissionError"
        # ... and when they are loosened by mistake, the server still answers its owner only.
        os.chmod(root, 0o711)
        os.chmod(root / "state", 0o711)
        os.chmod(sock, 0o666)
        refused = as_nobody()
        assert refused.startswith("reply:") and "refused" in refused, refused
        assert "pid" not in refused and "identity" not in refused
        log = (root / "logs" / "memory.log").read_text(encoding="utf-8")
        assert f'"event": "serve-refused", "uid": {NOBODY}' in log
        owner = run_gitmem("-v", "--root", str(root), "status")
        assert owner.returncode == 0 and "answered by the gitmem server" in owner.stderr
    finally:
        stop(proc)


def test_status_does_not_call_a_reused_pid_a_server(store: Store) -> None:
    """A killed server's state names a pid that now belongs to another process."""
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        path = wire.socket_path(str(store.root))
        leftover = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        by_short_name(path, leftover.bind)
        leftover.close()  # a socket file nobody listens on
        (store.root / "state" / "serve.json").write_text(json.dumps(
            {"pid": other.pid, "started": "2026-01-01T00:00:00+0000", "jobs": {}}), encoding="utf-8")
        status = run_gitmem("--root", str(store.root), "status", "--json",
                            env={"GITMEM_SERVE": "manual"})
        assert json.loads(status.stdout)["server"]["up"] is False
        # Someone listens, but it is not the process the state file names.
        squatter = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        os.unlink(path)
        by_short_name(path, squatter.bind)
        squatter.listen(1)
        try:
            status = run_gitmem("--root", str(store.root), "status", env={"GITMEM_SERVE": "manual"})
            assert "server: not running" in status.stdout
        finally:
            squatter.close()
    finally:
        other.kill()
        other.wait()


def test_status_names_the_server_that_listens(served: Path) -> None:
    pid = json.loads((served / "state" / "serve.json").read_text(encoding="utf-8"))["pid"]
    status = json.loads(run_gitmem("--root", str(served), "status", "--json",
                                   env={"GITMEM_SERVE": "off"}).stdout)
    assert status["server"]["up"] is True and status["server"]["pid"] == pid
