"""A commit in the warm server leaves git's index write until the answer is sent
(gitmem/git/indexlater.py): nobody in the process sees the index behind HEAD meanwhile, plain
git's staged work is kept, and a process killed before the write loses nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gitmem.git import indexlater
from gitmem.store import aftercall
from gitmem.store.store import Store
from gitmem.verbs.entries import remember
from support import commit_count, git, run_gitmem

TOPIC = "global/semantic/general.md"


def _behind_head(root: Path) -> list[str]:
    """Paths whose index entry differs from HEAD (git's own view)."""
    return git(root, "diff", "--cached", "--name-only").split()


def test_the_index_is_written_after_the_answer_and_matches_head(store: Store) -> None:
    with aftercall.gathering() as steps:
        remember(store, "Deploys run at noon", layer="semantic")
        assert indexlater.pending(str(store.git.git_dir))
        assert TOPIC in _behind_head(store.root)  # the commit landed, the index file waits
        assert "Deploys run at noon" in git(store.root, "show", f"HEAD:{TOPIC}")
    for _root, action in steps:
        action()
    assert not indexlater.pending(str(store.git.git_dir))
    assert git(store.root, "status", "--porcelain") == ""


def test_outside_a_call_of_the_server_the_index_is_written_at_once(store: Store) -> None:
    remember(store, "Deploys run at noon", layer="semantic")
    assert not indexlater.pending(str(store.git.git_dir))
    assert git(store.root, "status", "--porcelain") == ""


def test_another_reader_in_the_process_writes_the_index_before_it_looks(store: Store) -> None:
    other = Store(store.root, cwd=store.root.parent)
    try:
        with aftercall.gathering() as steps:
            remember(store, "Deploys run at noon", layer="semantic")
            assert TOPIC in _behind_head(store.root)
            assert other.git.dirty_paths() == []  # settled for it, not shown as a hand edit
            assert _behind_head(store.root) == []
        for _root, action in steps:
            action()  # nothing left to do
        assert git(store.root, "status", "--porcelain") == ""
    finally:
        other.close()


def test_a_second_commit_in_the_same_call_writes_the_first_ones_index(store: Store) -> None:
    with aftercall.gathering() as steps:
        remember(store, "Deploys run at noon", layer="semantic")
        remember(store, "Builds run at night", layer="semantic", topic="builds")
        assert _behind_head(store.root) != []
    for _root, action in steps:
        action()
    assert git(store.root, "status", "--porcelain") == ""


def test_what_plain_git_staged_meanwhile_is_kept(store: Store) -> None:
    with aftercall.gathering() as steps:
        remember(store, "Deploys run at noon", layer="semantic")
        (store.root / "notes.txt").write_text("a file of the person's own\n", encoding="utf-8")
        git(store.root, "add", "notes.txt")  # git rewrites the index from the file
    for _root, action in steps:
        action()
    assert git(store.root, "diff", "--cached", "--name-only").split() == ["notes.txt"]
    assert TOPIC not in git(store.root, "status", "--porcelain")


KILLED = """
import os, sys
from pathlib import Path
from gitmem.store import aftercall
from gitmem.store.store import Store
from gitmem.verbs.entries import remember
store = Store(Path(sys.argv[1]), cwd=Path(sys.argv[1]).parent)
with aftercall.gathering():
    print(remember(store, "Deploys run at noon", layer="semantic").id, flush=True)
os._exit(0)  # killed once the answer is out: the index write never happens
"""


def test_a_process_killed_before_the_write_loses_nothing_and_commits_nothing_twice(store: Store) -> None:
    before = commit_count(store.root)
    done = subprocess.run([sys.executable, "-c", KILLED, str(store.root)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    entry_id = done.stdout.strip()
    assert commit_count(store.root) == before + 1
    assert TOPIC in _behind_head(store.root)  # what the kill left: the index behind HEAD
    later = run_gitmem("--root", str(store.root), "remember", "Builds run at night", "--layer", "semantic",
                       "--topic", "builds")
    assert later.returncode == 0, later.stderr
    assert commit_count(store.root) == before + 2  # its own commit only: no "hand edit" of ours
    assert git(store.root, "status", "--porcelain") == ""
    shown = run_gitmem("--root", str(store.root), "show", entry_id)
    assert "Deploys run at noon" in shown.stdout
