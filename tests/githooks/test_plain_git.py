"""gitmem writers and plain `git commit` in one store, with the store's hooks installed: a plain
commit waits briefly and lands, or fails with a message that says to retry; gitmem never moves
HEAD under a running commit."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitmem.store import gitgate
from gitmem.store.lock import store_lock
from gitmem.store.store import Store
from support import GIT_ENV, git

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_concurrency  # noqa: E402

RETRY = "run the same `git commit` again"


@pytest.fixture
def hooked(store: Store) -> Store:
    subprocess.run([sys.executable, "-m", "gitmem", "--root", str(store.root), "hooks", "install"],
                   check=True, capture_output=True)
    return store


def plain_commit(root: Path, name: str, *extra: str, env: dict[str, str] | None = None,
                 wait: bool = True) -> subprocess.Popen[str]:
    path = root / "global" / "procedural" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {name}\n\n## {name} by hand\nCommitted with plain git.\n")
    git(root, "add", str(path))
    proc = subprocess.Popen(["git", "commit", "-q", "-m", f"plain {name}", *extra], cwd=root, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, **GIT_ENV, **(env or {})})
    if wait:
        proc.wait(timeout=60)
    return proc


def gitmem(root: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "gitmem", "--root", str(root), *args], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_a_plain_commit_waits_for_the_store_lock_and_lands(hooked: Store) -> None:
    before = git(hooked.root, "rev-parse", "HEAD").strip()
    with store_lock(hooked.root):
        proc = plain_commit(hooked.root, "waited", wait=False)
        deadline = time.monotonic() + 20
        while not gitgate.announcements(hooked.root) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert gitgate.announcements(hooked.root), "the hook never asked for the store"
        time.sleep(0.3)  # room for a hook that did not wait to let its commit through
        assert proc.poll() is None  # the commit waits while the store is held...
        assert git(hooked.root, "rev-parse", "HEAD").strip() == before
    assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""  # ...and then lands
    assert git(hooked.root, "log", "-1", "--format=%s").strip() == "plain waited"
    assert "**Id:** global-pro-0001" in git(hooked.root, "show", "HEAD:global/procedural/waited.md")


def test_a_gitmem_write_waits_for_a_commit_in_its_editor(hooked: Store) -> None:
    # The editor keeps `git commit` running after its pre-commit hook: HEAD must not move meanwhile.
    commit = plain_commit(hooked.root, "edited", "-e", env={"GIT_EDITOR": "sleep 1.5; true"}, wait=False)
    deadline = time.monotonic() + 20
    while not gitgate.announcements(hooked.root) and time.monotonic() < deadline:
        time.sleep(0.02)
    writer = gitmem(hooked.root, "remember", "written while the editor was open", "--layer", "semantic")
    out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err
    assert commit.wait(timeout=60) == 0, commit.stderr.read() if commit.stderr else ""
    subjects = git(hooked.root, "log", "--format=%s").splitlines()
    assert subjects[0].startswith("remember") and subjects[1] == "plain edited"  # after the commit
    assert out.strip() in git(hooked.root, "show", "HEAD:global/semantic/general.md")


def test_a_commit_whose_head_moved_while_it_waited_is_refused_with_a_retry_message(hooked: Store) -> None:
    with store_lock(hooked.root):
        commit = plain_commit(hooked.root, "late", wait=False)
        deadline = time.monotonic() + 20
        while not gitgate.announcements(hooked.root) and time.monotonic() < deadline:
            time.sleep(0.02)
        # Something moves HEAD without asking (here: plain plumbing standing in for a writer).
        tree = git(hooked.root, "rev-parse", "HEAD^{tree}").strip()
        moved = git(hooked.root, "commit-tree", tree, "-p", "HEAD", "-m", "moved").strip()
        git(hooked.root, "update-ref", "refs/heads/main", moved)
    _, err = commit.communicate(timeout=60)
    assert commit.returncode == 1 and RETRY in err
    assert git(hooked.root, "rev-parse", "HEAD").strip() == moved
    retry = subprocess.run(["git", "commit", "-q", "-m", "plain late"], cwd=hooked.root, text=True,
                           capture_output=True, env={**os.environ, **GIT_ENV})
    assert retry.returncode == 0, retry.stderr


def test_a_commit_a_writer_flagged_as_started_under_its_move_is_refused(hooked: Store, tmp_path: Path) -> None:
    # The writer's note (state/commits/<pid>.moved) reaches the hook of that very commit.
    chained = hooked.git.git_dir / "hooks" / "pre-commit.gitmem-chained"
    flag = tmp_path / "paused"
    chained.write_text(f"#!/bin/sh\ntouch {flag}\nsleep 1\n")
    chained.chmod(0o755)
    commit = plain_commit(hooked.root, "flagged", wait=False)
    deadline = time.monotonic() + 20
    while not flag.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    gitgate.note_head_moved(hooked.root)
    _, err = commit.communicate(timeout=60)
    assert commit.returncode == 1 and RETRY in err
    chained.unlink()


def test_writers_and_plain_commits_at_the_same_time_all_land(tmp_path: Path) -> None:
    root = tmp_path / "store"
    bench_concurrency.make_store(root)
    result = bench_concurrency.run(root, writers=3, writes=6, commits=4, pause=0.15)
    assert bench_concurrency.verify(root, result) == []
    for record in result["plain"]:  # type: ignore[union-attr]
        for error in record["errors"]:
            assert RETRY in error or "try again" in error, error


def test_a_commit_all_whose_hook_waits_for_a_writer_holding_the_store_lands(hooked: Store) -> None:
    # `git commit -a` holds .git/index.lock while its hook waits for the store: the writer that
    # holds the store must let the hook work (a grant) instead of waiting for the index lock.
    tracked = hooked.root / "global" / "procedural" / "tracked.md"
    tracked.parent.mkdir(parents=True, exist_ok=True)
    tracked.write_text("# tracked\n\n## Tracked\nFirst version.\n")
    git(hooked.root, "add", str(tracked))
    git(hooked.root, "commit", "-qm", "tracked")
    tracked.write_text("# tracked\n\n## Tracked\nSecond version, committed with -a.\n")
    from gitmem.verbs.entries import remember

    with hooked.locked():
        commit = subprocess.Popen(["git", "commit", "-q", "-a", "-m", "plain all"], cwd=hooked.root,
                                  text=True, stderr=subprocess.PIPE, env={**os.environ, **GIT_ENV})
        deadline = time.monotonic() + 20
        while not gitgate.announcements(hooked.root) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert (hooked.git.git_dir / "index.lock").exists()
        written = remember(hooked, "written while git commit -a waited", "semantic")
    _, err = commit.communicate(timeout=60)
    assert commit.returncode == 0, err
    assert "Second version" in git(hooked.root, "show", "HEAD:global/procedural/tracked.md")
    assert written.id and written.id in git(hooked.root, "show", "HEAD:global/semantic/general.md")


def test_a_commit_of_a_hand_edited_system_doc_says_it_is_generated(hooked: Store) -> None:
    system = hooked.root / "SYSTEM.md"
    system.write_text(system.read_text() + "\nMy own note.\n")
    git(hooked.root, "add", "SYSTEM.md")
    done = subprocess.run(["git", "commit", "-q", "-m", "system by hand"], cwd=hooked.root, text=True,
                          capture_output=True, env={**os.environ, **GIT_ENV})
    assert done.returncode == 0, done.stderr
    assert "SYSTEM.md is generated" in done.stderr and "global/INDEX.md" in done.stderr
    assert "My own note." in git(hooked.root, "show", "HEAD:SYSTEM.md")  # kept in history


def test_a_bad_verified_date_committed_with_plain_git_gets_a_hint(hooked: Store) -> None:
    path = hooked.root / "global" / "semantic" / "dated.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# dated\n\n## Dated by hand\ntext\n\n**Verified:** not-a-date\n")
    git(hooked.root, "add", str(path))
    done = subprocess.run(["git", "commit", "-q", "-m", "dated"], cwd=hooked.root, text=True,
                          capture_output=True, env={**os.environ, **GIT_ENV})
    assert done.returncode == 0, done.stderr
    assert "bad Verified 'not-a-date': not a date (use YYYY-MM-DD)" in done.stderr
