"""Fixtures of the web page's tests: a store with two entries, and a signed-in page on it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support import copy_store, isolated_env, run_gitmem
from webpage import WebPage, start_web, stop_web


@pytest.fixture(scope="session")
def web_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store with two entries, built once per worker by the real CLI."""
    top = tmp_path_factory.mktemp("web-template")
    root = top / "store"
    for args in (("init",),
                 ("remember", "The staging database moved to db2 on Tuesday", "-l", "semantic", "-t", "infra"),
                 ("remember", "部署使用蓝绿发布，先切流量再下线旧版本", "-l", "procedural", "-t", "deploy")):
        done = run_gitmem("--root", str(root), *args, env=isolated_env(top / "home"))
        assert done.returncode == 0, done.stderr
    return root


@pytest.fixture
def web_store(tmp_path: Path, web_template: Path) -> Path:
    return copy_store(web_template, tmp_path / "store")


@pytest.fixture
def web(web_store: Path) -> Iterator[WebPage]:
    page = start_web(web_store)
    try:
        page.sign_in()
        yield page
    finally:
        stop_web(page)
