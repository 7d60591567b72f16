"""gitmem/caller.py: each thread's call sees its own caller; a plain process is its own."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
from pathlib import Path

import click
import pytest

from gitmem import caller

ZONES = ["Pacific/Kiritimati", "Etc/GMT+12", ":Asia/Kolkata", "EST5EDT,M3.2.0,M11.1.0", "XYZ+3",
         "<+1345>-13:45", "UTC", "", "no-such-zone"]


@pytest.mark.parametrize("zone", ZONES)
def test_a_callers_time_zone_reads_as_the_c_library_reads_it(zone: str) -> None:
    """What the caller's TZ makes of a few moments equals what TZ=that does in its own process."""
    moments = [0, 1_700_000_000, 1_720_000_000, 1_735_689_599]
    code = ("import time, sys\nfor m in map(int, sys.argv[1:]):\n"
            "    print(time.strftime('%Y-%m-%d %H:%M:%S %z', time.localtime(m)))")
    own = subprocess.run([sys.executable, "-c", code, *map(str, moments)], capture_output=True,
                         text=True, check=True, env={**os.environ, "TZ": zone}).stdout.splitlines()
    env = {k: v for k, v in os.environ.items() if k != "TZ"}
    with caller.use(caller.Caller("/", {**env, "TZ": zone})):
        here = [caller.local_time(m).strftime("%Y-%m-%d %H:%M:%S %z") for m in moments]
    assert here == own


def test_without_a_caller_the_process_is_its_own() -> None:
    assert caller.current() is None
    assert caller.cwd() == os.getcwd()
    assert caller.env("HOME") == os.environ.get("HOME")
    assert caller.environ() == dict(os.environ)
    assert caller.tz() is None and caller.child_env() is None


def test_two_threads_each_see_their_own_caller(tmp_path: Path) -> None:
    folders = [tmp_path / "a", tmp_path / "b"]
    for folder in folders:
        folder.mkdir()
    both_inside = threading.Barrier(2)
    seen: dict[str, tuple[object, ...]] = {}

    def call(name: str, folder: Path, zone: str) -> None:
        out = io.BytesIO()
        who = caller.Caller(str(folder), {"GITMEM_X": name, "TZ": zone, "HOME": str(folder)},
                            (False, True, False), stdout=caller.stream(out, True))
        with caller.use(who):
            both_inside.wait()
            click.echo(f"from {name}")
            print(f"printed by {name}")
            sys.stdout.flush()
            both_inside.wait()
            seen[name] = (caller.cwd(), caller.env("GITMEM_X"), caller.expanduser("~/x"),
                          caller.now().utcoffset(), caller.local_time().utcoffset(),
                          sys.stdout.isatty(), caller.isatty(0), out.getvalue().decode())
        seen[name + " after"] = (caller.current(),)

    own = sys.stdout
    caller.install_streams()
    try:
        threads = [threading.Thread(target=call, args=("a", folders[0], "Pacific/Kiritimati")),
                   threading.Thread(target=call, args=("b", folders[1], "Etc/GMT+12"))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    finally:
        sys.stdin, sys.stdout, sys.stderr = (getattr(s, "_own", s) for s in (sys.stdin, sys.stdout, sys.stderr))
    assert sys.stdout is own
    a, b = seen["a"], seen["b"]
    assert a[:3] == (str(folders[0]), "a", str(folders[0] / "x"))
    assert b[:3] == (str(folders[1]), "b", str(folders[1] / "x"))
    assert a[4] is not None and a[4].total_seconds() == 14 * 3600
    assert b[4] is not None and b[4].total_seconds() == -12 * 3600
    assert a[5:7] == (True, False) and b[5:7] == (True, False)
    assert a[7] == "from a\nprinted by a\n" and b[7] == "from b\nprinted by b\n"
    assert seen["a after"] == (None,) and seen["b after"] == (None,)


def test_a_naive_time_is_read_in_the_callers_zone() -> None:
    from datetime import UTC, datetime

    with caller.use(caller.Caller("/", {"TZ": "Etc/GMT-3"})):
        local = caller.as_local(datetime(2026, 1, 2, 3, 4, 5))
        assert local.astimezone(UTC) == datetime(2026, 1, 2, 0, 4, 5, tzinfo=UTC)
        ahead = caller.now() - datetime.now(UTC).replace(tzinfo=None)
        assert round(ahead.total_seconds() / 3600) == 3


def test_a_long_socket_path_is_reached_without_moving_the_process(tmp_path: Path) -> None:
    import socket

    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    path = str(deep / "s.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    here = os.getcwd()
    try:
        caller.by_short_name(path, server.bind)
        server.listen(1)
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        caller.by_short_name(path, client.connect)
        client.close()
        assert os.getcwd() == here and Path(path).exists()
    finally:
        server.close()
