"""Fixtures of the web page's tests: a store with two entries, and a signed-in page on it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support import run_gitmem
from webpage import WebPage, start_web, stop_web


@pytest.fixture
def web_store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    for args in (("init",),
                 ("remember", "The staging database moved to db2 on Tuesday", "-l", "semantic", "-t", "infra"),
                 ("remember", "部署使用蓝绿发布，先切流量再下线旧版本", "-l", "procedural", "-t", "deploy")):
        done = run_gitmem("--root", str(root), *args, env={"GITMEM_SERVE": "off"})
        assert done.returncode == 0, done.stderr
    return root


@pytest.fixture
def web(web_store: Path) -> Iterator[WebPage]:
    page = start_web(web_store)
    try:
        page.sign_in()
        yield page
    finally:
        stop_web(page)
