"""The thin client: which calls it hands over, how it finds the store, what it imports."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.serve import wire
from gitmem.serve.client import _parse, store_root
from gitmem.store.paths import locate_root
from gitmem.store.store import Store


def test_only_plain_global_options_before_a_routed_verb_are_handed_over() -> None:
    assert _parse(["search", "x"]) == (None, "search", False)
    assert _parse(["--root", "/s", "-w", "shop", "-v", "show", "id"]) == ("/s", "show", True)
    assert _parse(["--root=/s", "--workspace=shop", "list"]) == ("/s", "list", False)
    assert _parse(["--help"]) is None and _parse(["--root"]) is None and _parse([]) is None
    assert _parse(["--bogus", "search", "x"]) is None


@pytest.mark.parametrize("how", ["explicit", "env", "walk", "default"])
def test_the_store_is_found_where_the_cli_finds_it(store: Store, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    deep = store.root / "global" / "semantic"
    deep.mkdir(parents=True, exist_ok=True)
    cwd = {"explicit": tmp_path, "env": tmp_path, "walk": deep, "default": tmp_path}[how]
    explicit = "store/../store" if how == "explicit" else None
    if how == "env":
        monkeypatch.setenv("GITMEM_ROOT", "~/elsewhere")
    monkeypatch.chdir(cwd)
    expected = locate_root(explicit, cwd)[0]
    assert os.path.realpath(store_root(explicit, str(cwd))) == os.path.realpath(expected)


def test_a_socket_path_too_long_for_an_address_still_works(tmp_path: Path) -> None:
    folder = tmp_path / ("deep-" * 20) / "state"
    folder.mkdir(parents=True)
    path = str(folder / "serve.sock")
    assert len(path) > 110
    here = os.getcwd()
    server = wire.bind(path)
    try:
        assert os.stat(path).st_mode & 0o777 == 0o600
        client = wire.connect(path, 5.0)
        conn, _ = server.accept()
        wire.send(client, {"op": "ping", "bytes": wire.pack(bytes(range(256)))})
        got = wire.receive(conn)
        assert wire.unpack(got["bytes"]) == bytes(range(256))
        client.close()
        conn.close()
    finally:
        server.close()
    assert os.getcwd() == here


def test_the_client_path_loads_no_heavy_library(store: Store) -> None:
    """What a call pays to find no server (not starting one: that call then loads the whole
    command line anyway): no click, pygit2, whoosh, markdown-it."""
    code = ("import sys; from gitmem.serve.client import forward\n"
            f"forward(['--root', {str(store.root)!r}, 'search', 'x'])\n"
            "print(sorted(m for m in ('click', 'pygit2', 'whoosh', 'markdown_it', 'typing', 'socket',"
            " 'json', 're', 'contextlib') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "GITMEM_SERVE": "manual"})
    assert done.stdout.strip().splitlines()[-1] == "[]"
