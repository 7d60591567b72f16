"""A gitmem process killed (SIGKILL) while it may hold git's index lock: the lock it left is
known to be nobody's (the owner record beside it names a dead process), the next gitmem command
of any kind removes it, and a plain `git commit` works again. A live holder's lock is kept."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitmem.store import gitgate
from gitmem.store.store import Store
from gitmem.verbs.entries import remember
from support import git, run_gitmem

# The child: a real remember that stops (and waits to be killed) while it holds the lock.
# `where` is "gitmem" (gitmem's own hold of index.lock while it reads and changes the index)
# or "libgit2" (libgit2's hold of it while it writes the index).
CHILD = r"""
import contextlib, pathlib, sys, time
import pygit2
import gitmem.git.worktree as worktree
root, ready, where = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]

def stop_here():
    ready.write_text("holding")
    time.sleep(20)

if where == "gitmem":
    held = worktree.index_held
    @contextlib.contextmanager
    def stopping(git_dir):
        with held(git_dir):
            stop_here()
            yield
    worktree.index_held = stopping
else:
    def write(self):
        lock = pathlib.Path(root) / ".git" / "index.lock"
        lock.write_bytes(b"DIRC half written")  # what libgit2 has written so far
        stop_here()
    pygit2.Index.write = write

from gitmem.store import gitgate
from gitmem.store.store import Store
from gitmem.verbs.entries import remember
remember(Store(root), "killed mid-write", "semantic", topic="killed")
"""


def _start_and_stop(root: Path, tmp_path: Path, where: str) -> subprocess.Popen[bytes]:
    ready = tmp_path / f"ready-{where}"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(root), str(ready), where],
                             env={**os.environ, "GITMEM_SERVE": "off"})
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert child.poll() is None, "the child ended before it held the lock"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return child


def _kill(child: subprocess.Popen[bytes]) -> None:
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)


def _plain_commit(root: Path, name: str) -> subprocess.CompletedProcess[str]:
    (root / name).write_text("a plain file\n")
    subprocess.run(["git", "add", name], cwd=root, capture_output=True, check=False)
    return subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "commit", "-qm", name],
                          cwd=root, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("where", ["gitmem", "libgit2"])
def test_a_lock_left_by_a_killed_write_goes_at_the_next_gitmem_command(
        store: Store, tmp_path: Path, where: str) -> None:
    remember(store, "A fact", "semantic", topic="notes")
    lock = store.root / ".git/index.lock"
    child = _start_and_stop(store.root, tmp_path, where)
    _kill(child)
    assert lock.exists()  # what kill -9 leaves
    refused = _plain_commit(store.root, "before.txt")
    assert refused.returncode != 0 and "index.lock" in refused.stderr
    done = run_gitmem("--root", str(store.root), "status", env={"GITMEM_SERVE": "off"})
    assert done.returncode == 0, done.stderr
    assert not lock.exists()
    assert not (store.root / ".git/gitmem-index.owner").exists()
    committed = _plain_commit(store.root, "after.txt")
    assert committed.returncode == 0, committed.stderr
    assert "after.txt" in git(store.root, "show", "--name-only", "--format=", "HEAD")
    assert "stale-lock-removed" in (store.root / "logs/memory.log").read_text()


def test_the_lock_of_a_live_gitmem_write_is_kept(store: Store, tmp_path: Path) -> None:
    remember(store, "A fact", "semantic", topic="notes")
    lock = store.root / ".git/index.lock"
    child = _start_and_stop(store.root, tmp_path, "gitmem")
    try:  # what every gitmem command runs first (a read would wait for the writer's store lock)
        assert gitgate.clear_orphaned_index_lock(store.root, store.root / ".git") is None
        assert lock.exists()
    finally:
        _kill(child)
    run_gitmem("--root", str(store.root), "list", env={"GITMEM_SERVE": "off"})
    assert not lock.exists()


def test_a_finished_write_leaves_no_owner_record(store: Store) -> None:
    remember(store, "A fact", "semantic", topic="notes")
    assert not (store.root / ".git/gitmem-index.owner").exists()
    assert not (store.root / ".git/index.lock").exists()
