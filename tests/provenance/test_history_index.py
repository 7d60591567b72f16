"""The per-entry history index gives the changes a full walk of history gives: on a real store
with edits and moves between files, merges from two clones, HEAD reset to an older commit and
moved sideways, a deleted, corrupt or foreign cache file; and the commit at a date."""

from __future__ import annotations

import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.provenance.index import HistoryIndex
from gitmem.provenance.trace import EntryTrace
from gitmem.store.store import Store
from gitmem.verbs.entries import remember
from support import GIT_ENV, git

ID_RE = re.compile(r"\*\*Id:\*\* (\S+)")
DAY = 86_400
BASE = 1_893_456_000  # 2030-01-01 UTC


def commit_at(root: Path, message: str, when: int) -> str:
    """Commit everything with plain git at epoch `when`; returns the oid."""
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": f"@{when} +0000", "GIT_COMMITTER_DATE": f"@{when} +0000"}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=root, check=True, env=env)
    return git(root, "rev-parse", "HEAD").strip()


def walked(store: Store, entry_id: str) -> list[tuple[str, str, str]]:
    """The changes as a walk of every commit from HEAD finds them (git's rule for `git log PATH`)."""
    trace = EntryTrace(store.git, entry_id)
    out = []
    for commit in store.git.walk():
        here = trace.versions_at(commit.oid)
        before = [trace.versions_at(p, near=commit.oid) for p in commit.parents]
        keys = sorted(v.key for v in here)
        if before and any(sorted(v.key for v in b) == keys for b in before):
            continue
        prev = next((b for b in before if b), ())
        if here or prev:
            out.append((commit.oid, "created" if not prev else "removed" if not here else "changed"))
    return [(oid, kind, "") for oid, kind in out]


def indexed(store: Store, entry_id: str) -> list[tuple[str, str, str]]:
    try:
        changes = EntryTrace(store.git, entry_id).changes()
    except Exception:  # noqa: BLE001 - no change at all: the walk finds none either
        return []
    return [(c.commit.oid, c.kind, "") for c in changes]


def every_id(store: Store) -> set[str]:
    """Every Id any commit of the store ever held."""
    found: set[str] = set()
    for commit in store.git.walk():
        for path in store.git.list_files_at(commit.oid, "global"):
            found |= set(ID_RE.findall((store.git.read_file_at(commit.oid, path) or b"").decode()))
    return found


def assert_same(store: Store) -> None:
    ids = every_id(store)
    assert ids
    for entry_id in sorted(ids):
        assert indexed(store, entry_id) == walked(store, entry_id), entry_id
    times = {c.time for c in store.git.walk()}
    with HistoryIndex(store.git) as index:
        for when in sorted(times | {t - 1 for t in times} | {t + 1 for t in times}):
            walked_at = store.git.commit_before(when)
            assert index.commit_before(when) == (walked_at.oid if walked_at else None), when


def edit(root: Path, path: str, old: str, new: str) -> None:
    target = root / path
    target.write_text(target.read_text().replace(old, new))


def move(root: Path, source: str, target: str, title: str) -> None:
    """Move the entry headed `title` from one topic file to another."""
    text = (root / source).read_text()
    start = re.search(rf"^##\s+{re.escape(title)}", text, re.MULTILINE).start()  # type: ignore[union-attr]
    end = text.find("\n## ", start + 3)
    block = text[start:] if end < 0 else text[start:end + 1]
    (root / source).write_text(text.replace(block, ""))
    (root / target).parent.mkdir(parents=True, exist_ok=True)
    existing = (root / target).read_text() if (root / target).exists() else f"# {Path(target).stem}\n\n"
    (root / target).write_text(existing.rstrip("\n") + "\n\n" + block)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """A store with three entries, edited, moved between files and reformatted by hand."""
    made = Store(tmp_path / "store", cwd=tmp_path)
    made.init()
    for text, topic in (("Staging listens on 5432", "staging"), ("Builds run on two cores", "ci"),
                        ("Staging runs in eu-west-1", "staging")):
        remember(made, text, "semantic", topic=topic)
    root = made.root
    edit(root, "global/semantic/staging.md", "5432", "5433")
    commit_at(root, "port", BASE)
    move(root, "global/semantic/staging.md", "global/semantic/databases.md", "Staging listens on 5433")
    commit_at(root, "move", BASE + DAY)
    edit(root, "global/semantic/ci.md", "two cores", "four cores")
    commit_at(root, "ci", BASE + 2 * DAY)
    edit(root, "global/semantic/databases.md", "## Staging listens on 5433", "##   Staging listens on 5433  ")
    commit_at(root, "reformat only", BASE + 3 * DAY)
    move(root, "global/semantic/databases.md", "global/semantic/staging.md", "Staging listens on 5433")
    commit_at(root, "move back", BASE + 4 * DAY)
    return made


def test_edits_moves_and_reformatting_match_the_walk(store: Store) -> None:
    assert_same(store)
    assert [k for _oid, k, _s in indexed(store, "global-sem-0001")] == ["changed", "changed", "changed",
                                                                       "created"]


def test_one_new_commit_extends_the_index_and_a_reset_cuts_it_back(store: Store) -> None:
    root = store.root
    assert_same(store)
    with HistoryIndex(store.git) as index:
        tip = index.tip()
        assert tip == store.git.head_oid()
    edit(root, "global/semantic/ci.md", "four cores", "eight cores")
    commit_at(root, "ci again", BASE + 5 * DAY)
    assert_same(store)
    git(root, "reset", "-q", "--hard", "HEAD~3")  # back past the last edit and the moves
    assert_same(store)
    with HistoryIndex(store.git) as index:
        assert index.tip() == store.git.head_oid()
        count = index.db.execute("SELECT COUNT(*) FROM commits").fetchone()[0]
    assert count == len(list(store.git.walk()))
    edit(root, "global/semantic/staging.md", "eu-west-1", "eu-central-1")  # sideways: a new line
    commit_at(root, "region", BASE + 6 * DAY)
    assert_same(store)
    edit(root, "global/semantic/staging.md", "eu-central-1", "eu-north-1")
    commit_at(root, "region, on a clock set wrong", BASE - 30 * DAY)
    assert_same(store)
    git(root, "reset", "-q", "--hard", "HEAD~1")
    assert_same(store)


def test_a_deleted_corrupt_or_foreign_cache_only_costs_time(store: Store, tmp_path: Path) -> None:
    assert_same(store)
    cache = store.root / "state" / "history.sqlite"
    cache.unlink()
    assert_same(store)
    cache.write_bytes(b"not a database at all" * 100)
    for name in ("history.sqlite-wal", "history.sqlite-shm"):
        (store.root / "state" / name).unlink(missing_ok=True)
    assert_same(store)
    other = Store(tmp_path / "other", cwd=tmp_path)
    other.init()
    remember(other, "Other store's note", "semantic", topic="other")
    (other.root / "state").mkdir(exist_ok=True)
    shutil.copyfile(cache, other.root / "state" / "history.sqlite")  # a tip this repo does not hold
    assert_same(other)
    other.close()


def test_merges_from_two_clones_match_the_walk(store: Store, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(store.root), str(remote))
    clones = []
    for name in ("a", "b"):
        git(tmp_path, "clone", "-q", str(remote), name)
        clones.append(tmp_path / name)
    a, b = clones
    edit(b, "global/semantic/ci.md", "four cores", "six cores")
    commit_at(b, "b: ci", BASE + 10 * DAY)
    edit(a, "global/semantic/staging.md", "eu-west-1", "us-east-1")
    commit_at(a, "a: region", BASE + 11 * DAY)
    move(b, "global/semantic/staging.md", "global/semantic/servers.md", "Staging listens on 5433")
    commit_at(b, "b: move the port", BASE - 5 * DAY)  # a clock set wrong: older than its parent
    ci_file = a / "global/semantic/ci.md"
    ci_file.write_text(re.sub(r"\*\*Verified:\*\* \S+", "**Verified:** 2030-01-14", ci_file.read_text()))
    commit_at(a, "a: ci", BASE + 13 * DAY)
    git(b, "push", "-q", "origin", "HEAD:main")
    git(a, "fetch", "-q", "origin")
    merged = Store(a, cwd=tmp_path)
    assert_same(merged)  # indexed before the merge: the merge extends it
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": f"@{BASE + 14 * DAY} +0000",
           "GIT_COMMITTER_DATE": f"@{BASE + 14 * DAY} +0000"}
    subprocess.run(["git", "merge", "-q", "--no-edit", "origin/main"], cwd=a, check=True, env=env)
    assert len(git(a, "log", "-1", "--format=%P").split()) == 2
    assert_same(merged)
    ci = indexed(merged, "global-sem-0002")
    # Both sides changed it, so the merge did too; then newest first across both lines.
    assert [git(a, "log", "-1", "--format=%s", oid).strip() for oid, _k, _s in ci][1:4] == \
        ["a: ci", "b: ci", "ci"]
    git(a, "reset", "-q", "--hard", "HEAD~1")  # the merge undone: b's commits leave the index
    assert_same(merged)
    merged.close()


def test_the_commit_at_a_date_is_the_walks(store: Store) -> None:
    with HistoryIndex(store.git) as index:
        for when in (BASE - 1, BASE, BASE + DAY // 2, BASE + 3 * DAY, BASE + 100 * DAY):
            walked_at = store.git.commit_before(when)
            assert index.commit_before(when) == (walked_at.oid if walked_at else None)
    first = next(iter(reversed(list(store.git.walk()))))
    with HistoryIndex(store.git) as index:
        assert index.commit_before(first.time - 1) is None


def test_an_index_made_by_another_version_is_made_anew(store: Store) -> None:
    import sqlite3

    (store.root / "state").mkdir(exist_ok=True)
    db = sqlite3.connect(store.root / "state" / "history.sqlite")
    db.executescript("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                     "INSERT INTO meta VALUES ('schema', '0'), ('tip', 'feedface');"
                     "CREATE TABLE changes (id TEXT, oid TEXT);")
    db.commit()
    db.close()
    assert_same(store)


def test_read_in_batches_the_index_is_the_same(store: Store, tmp_path: Path) -> None:
    """Many commits are read oldest first, a transaction per batch: merges and a clock set
    wrong included, the index says what a full walk says."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(store.root), str(remote))
    git(tmp_path, "clone", "-q", str(remote), "b")
    b = tmp_path / "b"
    edit(b, "global/semantic/ci.md", "four cores", "six cores")
    commit_at(b, "b: ci", BASE + 10 * DAY)
    move(b, "global/semantic/staging.md", "global/semantic/servers.md", "Staging listens on 5433")
    commit_at(b, "b: move the port", BASE - 5 * DAY)
    git(b, "push", "-q", "origin", "HEAD:main")
    root = store.root
    git(root, "remote", "add", "origin", str(remote))
    edit(root, "global/semantic/staging.md", "eu-west-1", "us-east-1")
    commit_at(root, "a: region", BASE + 11 * DAY)
    git(root, "fetch", "-q", "origin")
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": f"@{BASE + 14 * DAY} +0000",
           "GIT_COMMITTER_DATE": f"@{BASE + 14 * DAY} +0000"}
    subprocess.run(["git", "merge", "-q", "--no-edit", "origin/main"], cwd=root, check=True, env=env)
    seen: list[tuple[int, int]] = []
    with HistoryIndex(store.git, lambda done, total: seen.append((done, total)), batch=2) as index:
        index.update()
    total = len(list(store.git.walk()))
    assert seen[-1] == (total, total) and len(seen) == total
    assert_same(store)
    graph = store.git.commit_graph(("global", "workspaces"))
    nodes = list(graph.commits(store.git.head_oid() or ""))
    assert any(len(node.parents) == 2 for node in nodes) and any(not node.parents for node in nodes)
    # Many commits are diffed by one git process: what it finds is what libgit2 finds.
    assert graph.changes_of(nodes) == [graph.changes(node.oid) for node in nodes]


KILLER = """
import os, signal, sys
from pathlib import Path
from gitmem.store.store import Store
from gitmem.provenance.index import HistoryIndex

def read(done, total):
    if done == int(sys.argv[2]):
        os.kill(os.getpid(), signal.SIGKILL)

root = Path(sys.argv[1])
HistoryIndex(Store(root, cwd=root).git, read, batch=3).update()
"""


def killed_while_reading(root: Path, after: int) -> None:
    """Read history into the index in a process killed with SIGKILL after `after` commits."""
    done = subprocess.run([sys.executable, "-c", KILLER, str(root), str(after)], capture_output=True)
    assert done.returncode == -signal.SIGKILL, done.stderr


def test_a_reading_killed_with_sigkill_goes_on_where_it_stopped(store: Store) -> None:
    root = store.root
    for n in range(6):
        edit(root, "global/semantic/ci.md", f"{n + 4} cores" if n else "four cores", f"{n + 5} cores")
        commit_at(root, f"ci {n}", BASE + (5 + n) * DAY)
    total = len(list(store.git.walk()))
    assert total > 9
    killed_while_reading(root, after=8)  # two batches of three stored, the third lost
    db = sqlite3.connect(root / "state" / "history.sqlite")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("SELECT COUNT(*) FROM commits").fetchone()[0] == 6
    assert db.execute("SELECT value FROM meta WHERE key='building'").fetchone()[0] == store.git.head_oid()
    db.close()
    seen: list[tuple[int, int]] = []
    with HistoryIndex(store.git, lambda done, todo: seen.append((done, todo)), batch=3) as index:
        index.update()
    assert seen[0] == (1, total - 6) and seen[-1] == (total - 6, total - 6)  # only what was left
    assert_same(store)


def test_a_killed_reading_then_a_new_commit_leaves_no_trace(store: Store) -> None:
    root = store.root
    for n in range(6):
        edit(root, "global/semantic/ci.md", f"{n + 4} cores" if n else "four cores", f"{n + 5} cores")
        commit_at(root, f"ci {n}", BASE + (5 + n) * DAY)
    killed_while_reading(root, after=5)
    edit(root, "global/semantic/staging.md", "eu-west-1", "eu-central-1")
    commit_at(root, "region", BASE + 20 * DAY)  # HEAD moved: what was stored toward the old one goes
    assert_same(store)
    for name in ("history.sqlite", "history.sqlite-wal", "history.sqlite-shm"):
        (root / "state" / name).unlink(missing_ok=True)
    git(root, "reset", "-q", "--hard", "HEAD~4")
    killed_while_reading(root, after=4)  # a first reading, toward HEAD~4
    git(root, "reset", "-q", "--hard", "ORIG_HEAD")  # and back: it starts again toward this HEAD
    assert_same(store)
