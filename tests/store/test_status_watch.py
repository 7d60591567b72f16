"""The warm server keeps git status between calls while nothing changed (store/statuswatch.py):
a hand edit, a plain git commit, a change to git's index alone, a pull, a folder made by hand and
an edit made while a write runs are each seen by the very next call."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from gitmem.store import warm
from gitmem.store.statuswatch import StatusWatch
from gitmem.store.store import Store, open_store
from gitmem.verbs.entries import remember
from support import git

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
T = TypeVar("T")
FACT = "global/semantic/facts.md"


def call(root: Path, action: Callable[[Store], T]) -> T:
    """One call of the warm server: a fresh store borrowing the kept parts."""
    store = open_store(root)
    warm.adopt(store)
    try:
        return action(store)
    finally:
        warm.settle()


def kept(store: Store) -> bool:
    """Whether the store's git status came from what was kept (nothing ran git status)."""
    keeper = store.git.status_keeper
    return isinstance(keeper, StatusWatch) and keeper._status is not None


def warmed(root: Path) -> None:
    """Two writes and a read: the status is kept from here on."""
    call(root, lambda s: remember(s, "Deploys run from the main branch", "semantic", topic="facts"))
    call(root, lambda s: remember(s, "Staging runs on port 8080", "semantic", topic="facts"))
    assert call(root, lambda s: (s.git.dirty_paths(), kept(s))) == ([], True)


def test_a_hand_edit_between_two_calls_is_committed_by_the_next_write(store: Store, caching: None) -> None:
    warmed(store.root)
    path = store.root / FACT
    path.write_text(path.read_text("utf-8") + "\n## Edited by hand\nThe queue is RabbitMQ.\n", "utf-8")
    assert call(store.root, lambda s: s.git.dirty_paths()) == [FACT]
    call(store.root, lambda s: remember(s, "Logs go to loki", "semantic", topic="other"))
    assert "hand edit" in git(store.root, "log", "-2", "--format=%s")
    assert "RabbitMQ" in git(store.root, "show", f"HEAD:{FACT}")
    assert call(store.root, lambda s: (s.git.dirty_paths(), kept(s))) == ([], True)


def test_a_plain_git_commit_and_a_change_to_the_index_alone_are_seen(store: Store, caching: None) -> None:
    warmed(store.root)
    path = store.root / FACT
    path.write_text(path.read_text("utf-8").replace("port 8080", "port 9090"), "utf-8")
    git(store.root, "commit", "-qam", "by hand")
    assert call(store.root, lambda s: s.git.dirty_paths()) == []
    assert call(store.root, kept)
    git(store.root, "rm", "-q", "--cached", FACT)  # the index changes, the work tree does not
    assert call(store.root, lambda s: s.git.dirty_paths()) == [FACT]


def test_a_pull_between_two_calls_is_seen(store: Store, caching: None, tmp_path: Path) -> None:
    warmed(store.root)
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(store.root), str(other))
    (other / "global" / "semantic" / "pulled.md").write_text(
        "# Pulled\n\n## Pulled from elsewhere\nThe cache is redis.\n\n**Id:** global-sem-0099\n", "utf-8")
    git(other, "add", "-A")
    git(other, "commit", "-qm", "elsewhere")
    git(store.root, "pull", "-q", "--no-rebase", str(other), "HEAD")
    assert call(store.root, lambda s: (s.git.dirty_paths(), s.locate("global-sem-0099").path)) == \
        ([], "global/semantic/pulled.md")


def test_a_folder_made_by_hand_is_seen_and_watched(store: Store, caching: None) -> None:
    warmed(store.root)
    folder = store.root / "workspaces" / "shop" / "semantic"
    folder.mkdir(parents=True)
    (folder / "db.md").write_text("# Db\n\n## The shop uses postgres\nVersion 16.\n", "utf-8")
    made = "workspaces/shop/semantic/db.md"
    assert call(store.root, lambda s: s.git.dirty_paths()) == [made]
    git(store.root, "add", made)
    git(store.root, "commit", "-qm", "shop by hand")
    assert call(store.root, lambda s: s.git.dirty_paths()) == []
    (folder / "db.md").write_text("# Db\n\n## The shop uses mysql\nVersion 8.\n", "utf-8")
    assert call(store.root, lambda s: s.git.dirty_paths()) == [made]


def test_an_edit_made_while_a_write_runs_is_still_seen(store: Store, caching: None) -> None:
    warmed(store.root)
    path = store.root / FACT

    def write_while_edited(s: Store) -> None:
        assert s.git.dirty_paths() == [] and kept(s)
        (s.root / "global" / "semantic" / "mine.md").write_text("# Mine\n\n## Mine\nMine.\n", "utf-8")
        path.write_text(path.read_text("utf-8") + "\n## Meanwhile\nEdited during the write.\n", "utf-8")
        s.git.commit_paths(["global/semantic/mine.md"], "mine")

    call(store.root, write_while_edited)
    assert call(store.root, lambda s: s.git.dirty_paths()) == [FACT]
