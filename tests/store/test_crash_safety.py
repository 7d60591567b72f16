"""What a killed process leaves behind is cleared by the next write, never by a person: stale git
lock files (but never a live one), temp files (never committed), and the stores of earlier
versions get the ignore line for temp files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitmem.store import gitgate
from gitmem.store.generated import GITIGNORE
from gitmem.store.store import Store
from gitmem.verbs.entries import remember
from support import Cli, git


def _events(root: Path, name: str) -> list[dict[str, object]]:
    log = root / "logs" / "memory.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [e for e in map(json.loads, lines) if e.get("event") == name]


def _age(path: Path, seconds: float = 30) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


@pytest.mark.parametrize("lock", ["index.lock", "refs/heads/main.lock", "HEAD.lock", "packed-refs.lock"])
def test_a_lock_file_left_by_a_dead_process_is_removed_and_logged(gm: Cli, lock: str) -> None:
    gm("remember", "first fact", "-l", "semantic")
    path = gm.root / ".git" / lock
    path.write_text("")
    _age(path)
    status = gm.json("status")
    assert f".git/{lock}:1: git lock file left by a killed process" in " ".join(status["leftovers"])  # type: ignore[index]
    result = gm("remember", "second fact", "-l", "semantic")
    assert result.exit_code == 0, result.output
    assert not path.exists()
    assert [e["path"] for e in _events(gm.root, "stale-lock-removed")] == [f".git/{lock}"]
    assert "second fact" in git(gm.root, "show", "HEAD:global/semantic/general.md")


def test_a_lock_file_a_running_git_holds_is_waited_for_never_removed(store: Store) -> None:
    # `git update-index --stdin` takes the index lock and holds it until its input ends.
    holder = subprocess.Popen(["git", "update-index", "--stdin"], cwd=store.root, stdin=subprocess.PIPE)
    lock = store.root / ".git" / "index.lock"
    deadline = time.monotonic() + 10
    while not lock.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    _age(lock)
    assert holder.stdin is not None
    writer = subprocess.Popen([sys.executable, "-m", "gitmem", "--root", str(store.root), "remember",
                               "written after git let go", "--layer", "semantic"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    assert lock.exists() and writer.poll() is None  # the writer waits; the lock is still git's
    holder.stdin.close()
    assert holder.wait(timeout=10) == 0  # git finished normally: nobody took its lock away
    out, err = writer.communicate(timeout=30)
    assert writer.returncode == 0, err
    assert out.strip() == "global-sem-0001"
    assert _events(store.root, "stale-lock-removed") == []


def test_a_lock_held_too_long_fails_the_write_with_a_message_to_retry(store: Store) -> None:
    holder = subprocess.Popen(["git", "update-index", "--stdin"], cwd=store.root, stdin=subprocess.PIPE)
    lock = store.root / ".git" / "index.lock"
    try:
        deadline = time.monotonic() + 10
        while not lock.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        with store.locked(), pytest.raises(Exception) as caught:
            gitgate.clear_stale_locks(store.root, store.git.git_dir, time.time(), wait=0.3)
        assert "held by a running git process (pid" in str(caught.value)
        assert "update-index" in str(caught.value) and "retry" in str(caught.value)
        assert lock.exists()
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)


def test_temp_files_are_never_committed_and_are_swept(store: Store) -> None:
    # What an earlier gitmem left beside a file, and what a killed write left in state/tmp.
    beside = store.root / "global" / "semantic" / ".facts.md.k3j9.tmp"
    beside.parent.mkdir(parents=True, exist_ok=True)
    beside.write_text("## copy of an entry\n**Id:** global-sem-0001\n")
    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True).stdout)
    swept = store.root / "state" / "tmp" / f"{dead}-0001-facts.md.tmp"
    swept.parent.mkdir(exist_ok=True)
    swept.write_text("half a file")
    remember(store, "a fact written after the crash", "semantic", topic="facts")
    assert ".tmp" not in git(store.root, "log", "--all", "--name-only", "--format=")
    assert not swept.exists() and beside.exists()  # the one beside is the person's to delete
    assert [e["path"] for e in _events(store.root, "temp-file-removed")] == [f"state/tmp/{swept.name}"]


def test_a_store_of_an_earlier_version_gets_the_ignore_line_for_temp_files(store: Store) -> None:
    gitignore = store.root / ".gitignore"
    gitignore.write_text("/index/\n/state/\n/digests/\n/logs/\nmy-own-line\n")
    git(store.root, "commit", "-qam", "an earlier gitignore")
    leftover = store.root / "global" / ".general.md.x1y2.tmp"
    leftover.write_text("copy")
    remember(store, "after the upgrade", "semantic")
    added = [line for line in GITIGNORE.splitlines() if not line.startswith("/")]
    assert gitignore.read_text() == "/index/\n/state/\n/digests/\n/logs/\nmy-own-line\n" + \
        "".join(f"{line}\n" for line in added)
    assert added[0] == ".*.tmp"
    assert git(store.root, "status", "--porcelain", "--ignored=no") == ""
    assert ".tmp" not in git(store.root, "log", "--all", "--name-only", "--format=")


def test_an_interrupted_write_is_committed_under_its_own_name(store: Store) -> None:
    remember(store, "before the crash", "semantic")
    (store.root / "state" / "journal.json").write_text(json.dumps(
        {"verb": "remember", "paths": ["global/semantic/general.md"]}))
    topic = store.root / "global" / "semantic" / "general.md"
    topic.write_text(topic.read_text().replace("before the crash", "before the crash, edited"))
    status = Cli(store.root, __import__("click.testing").testing.CliRunner()).json("status")
    assert any("a `remember` was interrupted" in item for item in status["leftovers"])  # type: ignore[index]
    remember(store, "after the crash", "semantic", topic="other")
    messages = git(store.root, "log", "--format=%s").splitlines()
    assert "remember: recovered after an interrupted write" in messages
    assert not (store.root / "state" / "journal.json").exists()


def test_a_write_commits_only_its_own_files_not_what_a_person_staged_meanwhile(store: Store) -> None:
    with store.writing("remember") as txn:
        store.write_file(txn, "global/semantic/mine.md", "# mine\n\n## Mine\nWritten by gitmem.\n")
        theirs = store.root / "global" / "procedural" / "theirs.md"
        theirs.parent.mkdir(parents=True, exist_ok=True)
        theirs.write_text("# theirs\n\n## Theirs\nStaged by a person for their own commit.\n")
        git(store.root, "add", "global/procedural/theirs.md")  # after the write absorbed hand edits
    committed = git(store.root, "show", "--name-only", "--format=", "HEAD").split()
    assert "global/semantic/mine.md" in committed and "global/procedural/theirs.md" not in committed
    assert git(store.root, "diff", "--cached", "--name-only").split() == ["global/procedural/theirs.md"]
