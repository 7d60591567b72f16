"""The card trusts git status for files as committed (store/summaries.py, GitView) and catches up
once per card (store/catchup.py, one_look): every hand edit made before a card still shows in
it. Each card is compared with the card of a copy of the store read from scratch."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmem.store import catchup, parsecache, tree, warm
from gitmem.store.store import Store
from gitmem.store.summaries import DIFFERENT, SAME
from gitmem.verbs.context import build_card
from gitmem.verbs.entries import remember
from support import git

TOPIC = "global/decisions/pipeline.md"


@pytest.fixture(params=["one-shot", "warm"])
def mode(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each test runs as a one-shot process does and as the warm server does (caches on)."""
    if request.param == "warm":
        parsecache.enable()
        warm.enable()
    try:
        yield request.param
    finally:
        warm.disable()
        parsecache.disable()


@pytest.fixture
def filled(store: Store, mode: str) -> Store:
    for n in range(4):
        remember(store, f"Decision {n}: use tool {n} for the pipeline", "decisions", topic="pipeline")
        remember(store, f"Decision {n}: keep the gateway {n} small", "decisions", topic="gateway")
    return store


def _card(store: Store) -> str:
    return build_card(store, workspace=None).text


def _fresh(store: Store) -> str:
    """The card of a copy of the store with nothing kept: every file read."""
    copy = store.root.parent / f"copy-{time.time_ns()}"
    local = {"state", "index"}  # the store's own caches, not .git/index
    shutil.copytree(store.root, copy, symlinks=True,
                    ignore=lambda folder, names: local & set(names) if Path(folder) == store.root else set())
    other = Store(copy, cwd=copy.parent)
    try:
        return _card(other)
    finally:
        other.close()
        shutil.rmtree(copy)


def _marks(store: Store) -> dict[str, str]:
    """path -> how its summary compares with HEAD (SAME, DIFFERENT or '' when not checked)."""
    rows = store.summaries.db.execute("SELECT path, stamp FROM summary_files")
    return {path: "|" + stamp.partition("|")[2] if "|" in stamp else "" for path, stamp in rows}


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _age(path: Path, seconds: float = 3600) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_committed_files_are_verified_and_the_card_unchanged(filled: Store) -> None:
    first = _card(filled)
    assert "Decision 3: use tool 3" in first
    assert _marks(filled)[TOPIC] == SAME  # read from exactly what HEAD holds
    assert _card(filled) == first == _fresh(filled)


def test_a_hand_edit_shows_at_once_even_within_the_racy_window(filled: Store) -> None:
    _card(filled)
    path = filled.root / TOPIC
    _edit(path, "use tool 1 ", "use wand 1 ")  # same size, in the same second as the card
    assert "use wand 1" in _card(filled)
    _edit(path, "use wand 1 ", "use rope 1 ")
    assert "use rope 1" in (card := _card(filled))
    assert card == _fresh(filled)


def test_an_edit_that_puts_the_modification_time_back_shows(filled: Store) -> None:
    path = filled.root / TOPIC
    _age(path)
    _card(filled)
    before = os.stat(path)
    _edit(path, "use tool 2 ", "use wand 2 ")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert "use wand 2" in _card(filled)
    _age(path)
    assert "use wand 2" in (card := _card(filled))
    assert card == _fresh(filled)


def test_an_edit_undone_with_git_checkout_shows_the_committed_text(filled: Store) -> None:
    path = filled.root / TOPIC
    original = _card(filled)
    _edit(path, "use tool 0 ", "use wand 0 ")
    assert "use wand 0" in _card(filled)
    git(filled.root, "checkout", "--", TOPIC)
    assert _card(filled) == original
    _edit(path, "use tool 0 ", "use rope 0 ")  # and undone before any card saw it
    git(filled.root, "checkout", "--", TOPIC)
    assert _card(filled) == original == _fresh(filled)


def test_deleted_and_renamed_files(filled: Store) -> None:
    _card(filled)
    gateway = filled.root / "global/decisions/gateway.md"
    gateway.unlink()
    assert "keep the gateway" not in (card := _card(filled))
    assert card == _fresh(filled)
    git(filled.root, "checkout", "--", "global/decisions/gateway.md")
    assert "keep the gateway" in _card(filled)
    os.rename(filled.root / TOPIC, filled.root / "global/decisions/moved.md")
    _edit(filled.root / "global/decisions/moved.md", "use tool 3 ", "use wand 3 ")
    assert "use wand 3" in (card := _card(filled))
    assert card == _fresh(filled)
    git(filled.root, "add", "-A")
    git(filled.root, "commit", "-qm", "rename by hand")
    assert "use wand 3" in (card := _card(filled))
    assert card == _fresh(filled)
    assert _marks(filled).get(TOPIC) != SAME  # a file gone from HEAD is trusted no more


def test_plain_git_commits_checkouts_and_pulls(filled: Store, tmp_path: Path) -> None:
    path = filled.root / TOPIC
    _card(filled)
    _edit(path, "use tool 1 ", "use wand 1 ")
    git(filled.root, "commit", "-qam", "edit by hand")
    assert "use wand 1" in _card(filled)
    assert _marks(filled)[TOPIC] == SAME  # read again, and as the new HEAD holds it
    git(filled.root, "checkout", "-q", "HEAD~1")
    assert "use tool 1 " in (card := _card(filled)) and "use wand 1" not in card
    assert card == _fresh(filled)
    git(filled.root, "checkout", "-q", "-")
    assert "use wand 1" in _card(filled)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(filled.root), str(clone))
    _edit(clone / TOPIC, "use tool 2 ", "use wand 2 ")
    git(clone, "commit", "-qam", "edit on another machine")
    git(filled.root, "pull", "-q", "--no-rebase", str(clone), "HEAD")
    assert "use wand 2" in (card := _card(filled))
    assert card == _fresh(filled)


def test_a_summary_checked_against_an_older_head_is_checked_again(filled: Store) -> None:
    _card(filled)
    path = filled.root / TOPIC
    _edit(path, "use tool 1 ", "use wand 1 ")
    git(filled.root, "commit", "-qam", "edit by hand")
    _edit(path, "use wand 1 ", "use tool 1 ")
    git(filled.root, "commit", "-qam", "and back")  # the same bytes as the first card read
    assert _card(filled) == _fresh(filled)
    head = filled.git.head_oid()
    meta = dict(filled.summaries.db.execute("SELECT key, value FROM summary_meta"))
    assert meta["head"] == head


def test_ignored_topic_files_keep_the_stat_check(filled: Store) -> None:
    (filled.root / ".git/info/exclude").write_text("global/decisions/private-*.md\n", encoding="utf-8")
    private = filled.root / "global/decisions/private-notes.md"
    private.write_text("# notes\n\n<<<<<<< ours\n## A\nx\n=======\n## B\ny\n>>>>>>> theirs\n",
                       encoding="utf-8")
    assert "private-notes.md holds unresolved conflict markers" in _card(filled)
    assert _marks(filled)["global/decisions/private-notes.md"] == DIFFERENT  # not in HEAD
    private.write_text("# notes\n\n## A\nx\n", encoding="utf-8")
    assert "private-notes.md holds" not in _card(filled)
    private.write_text("# notes\n\n## A\n=======\n", encoding="utf-8")
    assert "private-notes.md holds" in _card(filled)


def test_a_summary_without_a_mark_is_checked_against_head(filled: Store) -> None:
    """Rows as an older gitmem writes them (no mark in the stamp) are not trusted on git's word."""
    path = filled.root / TOPIC
    _age(path)
    original = _card(filled)
    db = filled.summaries.db
    stamp = db.execute("SELECT stamp FROM summary_files WHERE path = ?", (TOPIC,)).fetchone()[0]
    assert stamp.endswith(SAME)
    db.execute("UPDATE summary_files SET stamp = ? WHERE path = ?", (stamp.partition("|")[0], TOPIC))
    db.execute("UPDATE summary_entries SET title = 'Stale title' WHERE path = ?", (TOPIC,))
    assert _card(filled) == original
    assert _marks(filled)[TOPIC] == SAME


def test_one_look_catches_up_once_and_a_write_ends_it(filled: Store) -> None:
    made = filled.root / "global/decisions/by-hand.md"
    with catchup.one_look(filled) as look:
        assert look is not None and look[0] == filled.git.head_oid() and look[1] == frozenset()
        made.write_text("# by hand\n\n## Made in an editor\nText.\n", encoding="utf-8")
        filled.catch_up_catalog()
        assert "global/decisions/by-hand.md" not in filled.catalog.files("global", "decisions")
        remember(filled, "A write inside the look", "semantic", topic="facts")
        filled.catch_up_catalog()
        assert "global/decisions/by-hand.md" in filled.catalog.files("global", "decisions")
    with catchup.one_look(filled) as look:
        assert look is not None and look[1] == frozenset()  # the write committed the hand edit


def test_a_warm_listing_sees_files_added_renamed_and_removed(tmp_path: Path) -> None:
    parsecache.enable()
    try:
        folder = tmp_path / "global" / "semantic"
        folder.mkdir(parents=True)
        (folder / "a.md").write_text("# a\n", encoding="utf-8")
        _age(folder)
        assert tree.all_topic_files(tmp_path) == ["global/semantic/a.md"]  # listed and kept
        (folder / "b.md").write_text("# b\n", encoding="utf-8")
        assert tree.all_topic_files(tmp_path) == ["global/semantic/a.md", "global/semantic/b.md"]
        _age(folder)
        os.rename(folder / "b.md", folder / "c.md")
        before = os.stat(folder)
        assert tree.all_topic_files(tmp_path) == ["global/semantic/a.md", "global/semantic/c.md"]
        _age(folder)
        tree.all_topic_files(tmp_path)
        before = os.stat(folder)
        (folder / "a.md").unlink()
        os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))  # its time put back
        assert tree.all_topic_files(tmp_path) == ["global/semantic/c.md"]
        (tmp_path / "workspaces" / "shop").mkdir(parents=True)
        _age(tmp_path / "workspaces")
        assert tree.scope_keys(tmp_path) == ["global", "shop"]
        (tmp_path / "workspaces" / "cart").mkdir()
        assert tree.scope_keys(tmp_path) == ["global", "cart", "shop"]
        _age(tmp_path / "workspaces")
        tree.scope_keys(tmp_path)
        os.rename(tmp_path / "workspaces" / "cart", tmp_path / "workspaces" / "till")
        assert tree.scope_keys(tmp_path) == ["global", "shop", "till"]
    finally:
        parsecache.disable()


def test_rows_kept_between_cards_follow_changes_made_by_another_process(filled: Store) -> None:
    """The summary rows a process keeps between cards are read again once another connection
    changed them: here another store re-read an edited file, and the edit was then undone."""
    path = filled.root / TOPIC
    original = _card(filled)  # this store keeps the rows it read
    _edit(path, "use tool 2 ", "use wand 2 ")
    other = Store(filled.root, cwd=filled.root.parent)
    try:
        assert "use wand 2" in _card(other)  # its summary of the edited text replaces ours
    finally:
        other.close()
    git(filled.root, "checkout", "--", TOPIC)
    assert _card(filled) == original
    filled.summaries.db.execute("DELETE FROM summary_entries")
    filled.summaries.db.execute("DELETE FROM summary_files")  # by hand, on our own connection
    assert _card(filled) == original
