"""`gitmem sync --dry-run`: fetch, report what a sync would do (commits, files, fast-forward or
merge, conflicts and renumberings), and leave the work tree, index, branch and sync record alone.
Each prediction is checked against the real sync that follows it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gitmem.cli import cli
from gitmem.format.markdown import render_topic_file
from gitmem.store.store import Store
from gitmem.sync.dryrun import dry_run
from gitmem.sync.remote import init_store
from gitmem.sync.run import sync
from gitmem.verbs.entries import remember
from support import git


def gm(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--root", str(root), *args], catch_exceptions=False)


def machine(tmp_path: Path, name: str, remote: Path) -> Store:
    store = Store(tmp_path / name, cwd=tmp_path)
    init_store(store, remote=str(remote), branch="main")
    return store


@pytest.fixture
def pair(tmp_path: Path, bare_remote: Path) -> Iterator[tuple[Store, Store]]:
    a = machine(tmp_path, "a", bare_remote)
    assert sync(a).result == "pushed"
    b = machine(tmp_path, "b", bare_remote)
    yield a, b
    a.close()
    b.close()


def snapshot(store: Store) -> tuple[str, ...]:
    """Everything a dry run must leave as it was: branch, index, work tree, sync record."""
    root = store.root
    files = sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts
                   and p.parts[len(root.parts)] not in ("logs", "index")
                   and p.name not in ("catalog.sqlite", "catalog.sqlite-wal", "catalog.sqlite-shm"))
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return (git(root, "rev-parse", "HEAD"), git(root, "symbolic-ref", "HEAD"),
            git(root, "ls-files", "-s"), git(root, "status", "--porcelain"), digest.hexdigest())


def set_body(store: Store, entry_id: str, body: str) -> str:
    found = store.locate(entry_id)
    topic = store.read_file(found.path)
    assert topic is not None
    index = topic.find(entry_id)
    assert index is not None
    topic.entries[index] = topic.entries[index].with_body(body)
    (store.root / found.path).write_text(render_topic_file(topic), encoding="utf-8")
    return found.path


def test_up_to_date_push_and_fast_forward(pair: tuple[Store, Store], bare_remote: Path) -> None:
    a, b = pair
    assert dry_run(b).action == "up-to-date"
    remember(a, "Only on a so far", "semantic", topic="news")
    remote_before = git(bare_remote, "rev-parse", "main")
    before = snapshot(a)
    report = dry_run(a)
    assert report.action == "push" and report.ahead == 1 and report.behind == 0
    assert report.outgoing_files == ["SYSTEM.md", "global/semantic.md", "global/semantic/news.md"]
    assert [c.subject for c in report.outgoing_commits] == [git(a.root, "log", "-1", "--format=%s").strip()]
    assert snapshot(a) == before and git(bare_remote, "rev-parse", "main") == remote_before
    sync(a)

    before = snapshot(b)
    report = dry_run(b)
    assert report.action == "fast-forward" and report.behind == 1 and not report.conflicts
    assert report.incoming_files == ["SYSTEM.md", "global/semantic.md", "global/semantic/news.md"]
    assert snapshot(b) == before
    real = sync(b)
    assert real.result == "fast-forward" and real.incoming == report.incoming_files


def test_a_merge_with_a_conflict_is_predicted_and_nothing_changes(pair: tuple[Store, Store]) -> None:
    a, b = pair
    entry = remember(a, "The build takes five minutes", "semantic", topic="build").id or ""
    sync(a)
    sync(b)
    relpath = set_body(a, entry, "The build takes three minutes (a)")
    sync(a)
    set_body(b, entry, "The build takes eight minutes (b)")
    gm(b.root, "check", "--fix")  # commit b's edit, as a sync would first
    remember(b, "Unrelated fact on b", "semantic", topic="other")
    sync_record = (b.root / "state" / "sync.json").read_text()
    before = snapshot(b)

    result = gm(b.root, "sync", "--dry-run", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["action"] == "merge" and report["changed"] is False
    assert report["ahead"] >= 1 and report["behind"] == 1
    assert [(c["path"], c["entry_id"]) for c in report["conflicts"]] == [(relpath, entry)]
    assert relpath in report["incoming_files"] and relpath in report["outgoing_files"]
    assert snapshot(b) == before
    assert (b.root / "state" / "sync.json").read_text() == sync_record
    assert not (b.root / "state" / "CONFLICT.md").exists()
    text = gm(b.root, "sync", "--dry-run").stdout
    assert "nothing was changed" in text and f"would conflict: {relpath} {entry}" in text

    real = sync(b)
    assert [(c.path, c.entry_id) for c in real.conflicts] == [(relpath, entry)]


def test_renumbering_is_predicted_and_the_catalog_is_left_as_it_was(pair: tuple[Store, Store]) -> None:
    a, b = pair
    ida = remember(a, "Alpha lives in topic one", "semantic", topic="one").id
    idb = remember(b, "Beta lives in topic two", "semantic", topic="two").id
    assert ida == idb == "global-sem-0001"
    sync(a)
    report = dry_run(b)
    assert report.action == "merge" and report.renumbered == {"global-sem-0001": "global-sem-0002"}
    assert (b.root / "global/semantic/two.md").read_text().count("global-sem-0001") == 1
    # the catalog still describes b's own files: the next Id on b follows b's entries
    assert remember(b, "Gamma written after the dry run", "semantic", topic="two").id == "global-sem-0002"
    real = sync(b)
    assert real.result == "merged" and "global-sem-0001" in real.renumbered


def test_pending_hand_edits_are_listed_not_committed(pair: tuple[Store, Store]) -> None:
    _a, b = pair
    path = b.root / "global" / "semantic" / "by-hand.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("## Typed in an editor\nNot committed yet.\n")
    before = snapshot(b)
    report = dry_run(b)
    assert report.pending == ["global/semantic/by-hand.md"] and report.action == "push"
    assert "would first commit 1 pending file(s)" in report.text()
    assert snapshot(b) == before and path.read_text() == "## Typed in an editor\nNot committed yet.\n"


def test_first_push_and_failures(tmp_path: Path, store: Store, bare_remote: Path) -> None:
    result = gm(store.root, "sync", "--dry-run")
    assert result.exit_code == 3 and "no remote is configured" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    gm(store.root, "remote", "set", str(bare_remote))
    report = dry_run(store)
    assert report.action == "first-push" and report.ahead == len(git(store.root, "log", "--format=%H").split())
    assert "memory.json" in report.outgoing_files
    assert git(bare_remote, "for-each-ref") == ""  # nothing pushed


def test_a_pending_hand_edit_is_predicted_as_the_merge_the_sync_will_make(pair: tuple[Store, Store]) -> None:
    """An uncommitted edit of an entry the remote changed: the sync commits it first and then
    merges, so the dry run says merge (not fast-forward) and names the conflict, leaving the
    store as it was; the real sync then stops on that very conflict."""
    a, b = pair
    entry = remember(a, "The build takes five minutes", "semantic", topic="build").id or ""
    sync(a)
    sync(b)
    relpath = set_body(a, entry, "The build takes three minutes (a)")
    sync(a)
    set_body(b, entry, "The build takes eight minutes (b)")  # typed, not committed
    before = snapshot(b)
    report = dry_run(b)
    assert report.pending == [relpath] and report.action == "merge", report.text()
    assert [(c["path"], c["entry_id"]) for c in report.conflicts] == [(relpath, entry)]
    assert snapshot(b) == before
    real = sync(b)
    assert [(c.path, c.entry_id) for c in real.conflicts] == [(relpath, entry)]
