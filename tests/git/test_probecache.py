"""git's answers about a code repository, kept between calls, follow every change at once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmem.git import probecache
from gitmem.git.workrepo import origin_url, toplevel
from support import git


@pytest.fixture
def keeping(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    probecache.enable()
    try:
        yield
    finally:
        probecache.disable()


@pytest.mark.parametrize("settle_ns", [0, probecache.SETTLE_NS])
def test_a_changed_origin_and_a_new_repository_are_seen(tmp_path: Path, keeping: None, settle_ns: int,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probecache, "SETTLE_NS", settle_ns)  # 0: every answer is kept
    repo = tmp_path / "shop"
    (repo / "src").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", "git@example.com:acme/shop.git")
    assert origin_url(repo) == "git@example.com:acme/shop.git"
    assert toplevel(repo / "src") == repo.resolve()
    git(repo, "remote", "set-url", "origin", "git@example.com:acme/store.git")
    assert origin_url(repo) == "git@example.com:acme/store.git"
    git(repo / "src", "init", "-q", "-b", "main")  # a repository nested inside
    assert toplevel(repo / "src") == (repo / "src").resolve()
    git(repo, "remote", "remove", "origin")
    assert origin_url(repo) is None
