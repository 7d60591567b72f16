"""`gitmem sync` between machines: each machine is a store of its own, cloned from one bare
repository on disk (or served over loopback HTTP), exactly as two laptops would share GitHub."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from gitmem.cli.main import cli, every_command
from gitmem.cli.sync import COMMANDS
from gitmem.errors import ConflictError, GitLayerError, InvalidInputError, SyncError
from gitmem.format import layers as L
from gitmem.format.markdown import render_topic_file
from gitmem.git.repo import GitRepo, PushRejectedError
from gitmem.githooks.driver import configure_merge_driver, merge_driver_command, run_merge_driver
from gitmem.store.store import Store
from gitmem.sync.remote import init_store, remote_set
from gitmem.sync.run import sync
from gitmem.verbs.entries import forget, remember
from gitmem.verbs.moves import move_entry
from gitmem.verbs.system import write_system_doc
from gitmem.verbs.workspaces import associate
from gitserver import serve_git_http
from support import GIT_ENV, git

WIRED = type(cli)(name=cli.name, params=cli.params, callback=cli.callback,
                  commands={**every_command(), **{c.name: c for c in COMMANDS if c.name}})
MARKER_RE = re.compile(r"^(<{7}|={7}|>{7})", re.MULTILINE)
BLOCK_RE = re.compile(r"<<<<<<< [^\n]*\n(.*?)=======\n(.*?)>>>>>>> [^\n]*\n", re.DOTALL)


# -- helpers --------------------------------------------------------------------------------
def run(root: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    """`gitmem --root ROOT ARGS` in-process, with the sync commands wired in."""
    return CliRunner().invoke(WIRED, ["--root", str(root), *args], env=env, catch_exceptions=False)


def machine(tmp_path: Path, name: str, remote: str | Path) -> Store:
    """A machine: `gitmem init --remote` into its own folder."""
    store = Store(tmp_path / name, cwd=tmp_path)
    init_store(store, remote=str(remote), branch="main")
    return store


def head(store: Store) -> str:
    return git(store.root, "rev-parse", "HEAD").strip()


def tree(store: Store) -> str:
    return git(store.root, "rev-parse", "HEAD^{tree}").strip()


def clean(store: Store) -> bool:
    return git(store.root, "status", "--porcelain") == ""


def text(store: Store, relpath: str) -> str:
    return (store.root / relpath).read_text(encoding="utf-8")


def all_ids(store: Store) -> list[str]:
    ids = []
    for relpath in store.all_topic_files():
        topic = store.read_file(relpath)
        assert topic is not None
        ids += [e.id for e in topic.entries if e.id]
    return ids


def set_body(store: Store, entry_id: str, body: str) -> str:
    """Edit an entry's body by hand (left uncommitted, as an editor would)."""
    found = store.locate(entry_id)
    topic = store.read_file(found.path)
    assert topic is not None
    index = topic.find(entry_id)
    assert index is not None
    topic.entries[index] = topic.entries[index].with_body(body)
    (store.root / found.path).write_text(render_topic_file(topic), encoding="utf-8")
    return found.path


def drop_entry(store: Store, entry_id: str) -> str:
    """Delete an entry by hand."""
    found = store.locate(entry_id)
    topic = store.read_file(found.path)
    assert topic is not None
    index = topic.find(entry_id)
    assert index is not None
    del topic.entries[index]
    (store.root / found.path).write_text(render_topic_file(topic), encoding="utf-8")
    return found.path


def append(store: Store, relpath: str, chunk: str) -> None:
    with open(store.root / relpath, "a", encoding="utf-8") as handle:
        handle.write(chunk)


def keep_side(path: Path, side: int) -> None:
    """Resolve every conflict block by keeping one side (1 = ours, 2 = theirs)."""
    path.write_text(BLOCK_RE.sub(lambda m: m.group(side), path.read_text()), encoding="utf-8")


def last_log(store: Store) -> dict[str, object]:
    lines = (store.root / "logs" / "memory.log").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[-1])
    assert isinstance(record, dict)
    return record


def sync_state(store: Store) -> dict[str, object]:
    data = json.loads((store.root / "state" / "sync.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def pair(tmp_path: Path, bare_remote: Path) -> Iterator[tuple[Store, Store]]:
    """Machine a created the memory and pushed it; machine b cloned it."""
    a = machine(tmp_path, "a", bare_remote)
    assert sync(a).result == "pushed"
    b = machine(tmp_path, "b", bare_remote)
    yield a, b
    a.close()
    b.close()


# -- init --remote, remote set ----------------------------------------------------------------
def test_init_with_an_empty_remote_then_a_second_machine_clones_it(
        tmp_path: Path, bare_remote: Path) -> None:
    a = Store(tmp_path / "a", cwd=tmp_path)
    assert init_store(a, remote=str(bare_remote), branch="main") is True
    assert git(bare_remote, "for-each-ref") == ""  # nothing is pushed before the first sync
    assert a.registry.git["remote"] == str(bare_remote) and a.registry.git["branch"] == "main"
    driver = git(a.root, "config", "--get", "merge.gitmem.driver").strip()
    assert driver == merge_driver_command(a.root) == (
        f"{sys.executable} -m gitmem --root {a.root} merge-driver %O %A %B %P")
    alpha = remember(a, "Deploys go through staging first", "procedural", topic="deploy").id
    report = sync(a)
    assert report.result == "pushed" and report.ahead == 0 and report.behind == 0
    assert git(bare_remote, "rev-parse", "main").strip() == head(a)

    b = Store(tmp_path / "b", cwd=tmp_path)
    assert init_store(b, remote=str(bare_remote), branch="main") is True
    assert head(b) == head(a) and clean(b)  # nothing to add on top of a complete store
    assert b.locate(alpha or "").path == "global/procedural/deploy.md"
    assert git(b.root, "config", "--get", "merge.gitmem.driver").strip() == merge_driver_command(b.root)
    assert sync(b).result == "up-to-date"
    assert init_store(b, remote=str(bare_remote), branch="main") is False  # idempotent


def test_init_remote_with_history_refuses_a_non_empty_folder(tmp_path: Path, pair: tuple[Store, Store]) -> None:
    folder = tmp_path / "busy"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n")
    remote = pair[0].git.remote_url()
    assert remote is not None
    with pytest.raises(InvalidInputError, match="not empty"):
        init_store(Store(folder), remote=remote, branch="main")
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


def test_init_remote_with_history_on_another_branch_names_it(tmp_path: Path, pair: tuple[Store, Store]) -> None:
    remote = str(pair[0].git.remote_url())
    target = tmp_path / "elsewhere"
    with pytest.raises(InvalidInputError, match="has no branch 'trunk' but has main"):
        init_store(Store(target), remote=remote, branch="trunk")
    assert not target.exists()


def test_init_remote_that_cannot_be_reached_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "new"
    with pytest.raises(SyncError, match="cannot reach remote"):
        init_store(Store(target), remote=f"http://127.0.0.1:{unused_port()}/mem.git", branch="main")
    assert not target.exists()
    srv = tmp_path / "srv"
    srv.mkdir()
    with serve_git_http(srv) as base, pytest.raises(SyncError, match="not found"):
        init_store(Store(target), remote=base + "absent.git", branch="main")
    assert not target.exists()


def test_remote_set_keeps_the_token_out_of_every_committed_file(
        tmp_path: Path, store: Store, bare_remote: Path) -> None:
    token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    result = run(store.root, "remote", "set", f"https://x-access-token:{token}@example.invalid/o/r.git")
    assert result.exit_code == 0, result.output
    assert token not in result.output and "mode 600" in result.output
    saved = store.root / "state" / "git-token"
    assert saved.read_text().strip() == token
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    for relpath in ("memory.json", "SYSTEM.md", ".git/config"):
        assert token not in (store.root / relpath).read_text()
    assert json.loads(text(store, "memory.json"))["git"]["remote"] == (
        "https://x-access-token@example.invalid/o/r.git")
    assert token not in git(store.root, "log", "-p")
    bare_token = "glpat-0123456789abcdefghij"
    assert run(store.root, "remote", "set", f"https://{bare_token}@example.invalid/o/r.git").exit_code == 0
    assert store.git.remote_url() == "https://example.invalid/o/r.git"
    assert saved.read_text().strip() == bare_token


def test_remote_set_branch_syncs_that_branch(store: Store, bare_remote: Path) -> None:
    result = run(store.root, "remote", "set", str(bare_remote), "--branch", "trunk", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["branch"] == "trunk"
    assert store.git.branch() == "trunk"
    assert run(store.root, "sync").exit_code == 0
    assert git(bare_remote, "rev-parse", "trunk").strip() == head(store)


# -- merge cases ------------------------------------------------------------------------------
def test_same_new_id_in_two_topics_is_renumbered_on_the_unpublished_side(pair: tuple[Store, Store]) -> None:
    a, b = pair
    ida = remember(a, "Alpha lives in topic one", "semantic", topic="one").id
    idb = remember(b, "Beta lives in topic two", "semantic", topic="two").id
    assert ida == idb == "global-sem-0001"
    assert sync(a).result == "pushed"
    report = sync(b)
    assert report.result == "merged" and report.renumbered == {"global-sem-0001": "global-sem-0002"}
    assert sync(a).result == "fast-forward"
    assert head(a) == head(b) and tree(a) == tree(b) and clean(a) and clean(b)
    assert "**Id:** global-sem-0001" in text(a, "global/semantic/one.md")  # published: unchanged
    assert "**Id:** global-sem-0002" in text(a, "global/semantic/two.md")
    assert sorted(all_ids(a)) == ["global-sem-0001", "global-sem-0002"]
    index = text(a, "global/semantic.md")
    assert "semantic/one.md" in index and "semantic/two.md" in index and not MARKER_RE.search(index)


def test_new_entries_on_both_sides_of_one_topic_are_all_kept(pair: tuple[Store, Store]) -> None:
    a, b = pair
    first = remember(a, "Shared first fact", "semantic", topic="t").id
    assert sync(a).result == "pushed" and sync(b).result == "fast-forward"
    ida = [remember(a, f"From a number {i}", "semantic", topic="t").id for i in range(2)]
    idb = [remember(b, f"From b number {i}", "semantic", topic="t").id for i in range(2)]
    sync(a)
    report = sync(b)
    assert report.result == "merged"
    assert report.renumbered == {idb[0]: "global-sem-0004", idb[1]: "global-sem-0005"}
    assert idb == ida  # both machines allocated 0002 and 0003
    sync(a)
    assert tree(a) == tree(b)
    merged = text(a, "global/semantic/t.md")
    for i in range(2):
        assert f"From a number {i}" in merged and f"From b number {i}" in merged
    ids = all_ids(a)
    assert len(ids) == len(set(ids)) == 5 and first in ids and set(ida) <= set(ids)
    assert "5 entries" in text(a, "global/semantic.md")


def test_an_edit_on_one_side_wins_over_no_edit(pair: tuple[Store, Store]) -> None:
    a, b = pair
    entry = remember(a, "Cache lifetime: ten minutes", "semantic", topic="cache",
                     title="Cache lifetime").id or ""
    sync(a)
    sync(b)
    set_body(b, entry, "The cache holds fifteen minutes now")
    assert sync(b).committed == ["global/semantic/cache.md"]
    remember(a, "Another cache fact", "semantic", topic="cache")
    assert sync(a).result == "merged"
    sync(b)
    merged = text(a, "global/semantic/cache.md")
    assert "fifteen minutes" in merged and "ten minutes" not in merged
    assert "Another cache fact" in merged and not MARKER_RE.search(merged)
    assert tree(a) == tree(b)


def test_a_deletion_on_one_side_applies_and_the_other_edits_stay(pair: tuple[Store, Store]) -> None:
    a, b = pair
    gone = remember(a, "Obsolete fact to delete", "semantic", topic="t").id or ""
    kept = remember(a, "Fact that gets edited", "semantic", topic="t").id or ""
    sync(a)
    sync(b)
    drop_entry(b, gone)
    set_body(a, kept, "Fact that gets edited, edited on a")
    sync(b)
    assert sync(a).result == "merged"
    sync(b)
    merged = text(b, "global/semantic/t.md")
    assert "Obsolete fact" not in merged and "edited on a" in merged
    assert tree(a) == tree(b)


def test_edit_against_delete_keeps_the_edit(pair: tuple[Store, Store]) -> None:
    a, b = pair
    entry = remember(a, "Contested fact", "semantic", topic="t").id or ""
    sync(a)
    sync(b)
    set_body(a, entry, "Contested fact, refined on a")
    drop_entry(b, entry)
    sync(a)
    report = sync(b)
    assert report.result == "merged" and not report.conflicts
    assert any("kept the edit" in note for note in report.notes)
    assert "refined on a" in text(b, "global/semantic/t.md")
    sync(a)
    assert tree(a) == tree(b)


def test_topic_deleted_on_one_side_while_written_on_the_other_keeps_the_writes(
        pair: tuple[Store, Store]) -> None:
    a, b = pair
    remember(a, "Old topic fact", "semantic", topic="old")
    sync(a)
    sync(b)
    (b.root / "global/semantic/old.md").unlink()
    remember(a, "Added to the old topic meanwhile", "semantic", topic="old")
    sync(b)
    sync(a)
    sync(b)
    assert "Added to the old topic meanwhile" in text(b, "global/semantic/old.md")
    assert tree(a) == tree(b)


def test_same_entry_edited_on_both_sides_conflicts_until_resolved(pair: tuple[Store, Store]) -> None:
    a, b = pair
    entry = remember(a, "The build takes five minutes", "semantic", topic="build").id or ""
    other = remember(a, "An untouched neighbour", "semantic", topic="build").id or ""
    sync(a)
    sync(b)
    relpath = set_body(a, entry, "The build takes three minutes (measured on a)")
    set_body(b, entry, "The build takes eight minutes (measured on b)")
    assert run(a.root, "sync").exit_code == 0

    result = run(b.root, "sync")
    assert result.exit_code == 3
    assert len(result.stderr.strip().splitlines()) == 1 and "CONFLICT.md" in result.stderr
    content = text(b, relpath)
    assert content.count("<<<<<<< ") == 1 and content.count(">>>>>>> ") == 1
    assert "three minutes" in content and "eight minutes" in content
    block = BLOCK_RE.search(content)
    assert block is not None and other not in block.group(0)  # markers around that entry only
    listing = text(b, "state/CONFLICT.md")
    assert relpath in listing and entry in listing
    here = git(b.root, "rev-parse", "--short=12", "HEAD^1").strip()
    there = git(b.root, "rev-parse", "--short=12", "HEAD^2").strip()
    assert f"(this machine), commit {here}" in listing and f", commit {there}" in listing
    state = sync_state(b)
    assert state["result"] == "conflicts" and state["conflicts"] and state["error"] is None
    status = json.loads(run(b.root, "status", "--json").stdout)
    assert status["conflicts"] == [relpath] and status["sync"]["result"] == "conflicts"
    listed = json.loads(run(b.root, "conflicts", "--json").stdout)
    assert [(c["path"], c["entry_id"]) for c in listed] == [(relpath, entry)]
    assert git(b.root, "rev-parse", "origin/main").strip() == head(b)  # pushed with markers
    hits = json.loads(run(b.root, "search", "build minutes", "--json").stdout)
    assert any(h["conflicted"] and h["path"] == relpath for h in hits)
    assert relpath in run(b.root, "context").stdout  # the card's Conflicts section

    again = run(b.root, "sync")  # nothing resolved yet: still exit 3, nothing lost
    assert again.exit_code == 3 and head(b) == git(b.root, "rev-parse", "origin/main").strip()
    on_a = run(a.root, "sync")  # a receives the markers too and is told about them
    assert on_a.exit_code == 3 and text(a, relpath) == content
    arrived = text(a, "state/CONFLICT.md")  # described from the marker lines, as on b
    assert f"commit {here}" in arrived and f"commit {there}" in arrived and entry in arrived

    half = re.sub(r">>>>>>> [^\n]*\n", "", content, count=1)
    (b.root / relpath).write_text(half)
    before = head(b)
    held = run(b.root, "sync")  # the file being resolved is left out; markers remain: exit 3
    assert held.exit_code == 3 and "left uncommitted" in held.stderr and f"{relpath}:" in held.stderr
    assert head(b) == before and text(b, relpath) == half

    (b.root / relpath).write_text(content)
    keep_side(b.root / relpath, 2)  # keep a's version
    assert run(b.root, "sync").exit_code == 0
    assert not (b.root / "state/CONFLICT.md").exists() and sync_state(b)["conflicts"] == []
    assert run(a.root, "sync").exit_code == 0
    assert not (a.root / "state/CONFLICT.md").exists()
    assert tree(a) == tree(b) and "three minutes" in text(a, relpath)
    assert not MARKER_RE.search(text(a, relpath))
    assert run(b.root, "conflicts").exit_code == 1


def test_an_unresolved_conflict_arriving_in_a_merge_stays_one_block(pair: tuple[Store, Store]) -> None:
    a, b = pair
    entry = remember(a, "Timeout is thirty seconds", "semantic", topic="net").id or ""
    neighbour = remember(a, "Retries are three", "semantic", topic="net").id or ""
    sync(a)
    sync(b)
    relpath = set_body(a, entry, "Timeout is forty seconds (a, first)")
    sync(a)
    set_body(b, entry, "Timeout is sixty seconds (b)")
    assert sync(b).conflicts  # pushed with markers
    block = BLOCK_RE.search(text(b, relpath))
    assert block is not None
    set_body(a, neighbour, "Retries are five")  # a edits another entry before syncing
    assert sync(a).conflicts
    merged = text(a, relpath)
    assert block.group(0) in merged and "Retries are five" in merged  # the block, byte for byte
    assert merged.count("<<<<<<<") == 1

    assert sync(b).result == "conflicts" and text(b, relpath) == merged
    keep_side(a.root / relpath, 2)
    assert not sync(a).conflicts and not sync(b).conflicts
    assert tree(a) == tree(b) and "forty seconds" in text(b, relpath)


def test_an_entry_edited_again_against_an_incoming_conflict_is_one_flat_block(
        pair: tuple[Store, Store]) -> None:
    a, b = pair
    entry = remember(a, "The queue holds 100 jobs", "semantic", topic="queue").id or ""
    sync(a)
    sync(b)
    relpath = set_body(a, entry, "The queue holds 200 jobs (a, first)")
    sync(a)
    set_body(b, entry, "The queue holds 300 jobs (b)")
    assert sync(b).conflicts
    set_body(a, entry, "The queue holds 250 jobs (a, second)")  # a never saw b's version
    report = sync(a)
    assert report.result == "conflicts"
    merged = text(a, relpath)
    assert merged.count("<<<<<<<") == 1 and merged.count(">>>>>>>") == 1
    assert "250 jobs" in merged and "300 jobs" in merged
    assert "200 jobs" not in merged  # a's first version was the base of its second: superseded
    keep_side(a.root / relpath, 1)
    assert not sync(a).conflicts and not sync(b).conflicts
    assert tree(a) == tree(b) and "250 jobs" in text(b, relpath)


def test_a_failed_merge_commit_leaves_the_store_and_its_catalog_intact(
        pair: tuple[Store, Store], monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = pair
    remember(a, "Incoming while the merge fails", "semantic", topic="in")
    sync(a)
    remember(b, "Local on b", "semantic", topic="local")
    before = head(b)

    def broken(self: GitRepo, *args: object) -> str:
        raise GitLayerError("merge commit failed: disk full")

    monkeypatch.setattr(GitRepo, "commit_merge", broken)
    with pytest.raises(GitLayerError, match="disk full"):
        sync(b)
    assert head(b) == before and clean(b)
    assert not (b.root / "global/semantic/in.md").exists()
    monkeypatch.undo()
    assert b.catalog.files("global", "semantic") == ["global/semantic/local.md"] or b.catalog.is_empty()
    assert sync(b).result == "merged"
    assert sorted(all_ids(b)) == ["global-sem-0001", "global-sem-0002"]
    assert b.catalog.files("global", "semantic") == ["global/semantic/in.md", "global/semantic/local.md"]


def test_hand_written_entries_without_ids_on_both_sides(pair: tuple[Store, Store]) -> None:
    a, b = pair
    remember(a, "Seed entry", "learnings", topic="notes")
    sync(a)
    sync(b)
    append(a, "global/learnings/notes.md", "\n## Written by hand on a\nNo id yet.\n")
    append(b, "global/learnings/notes.md", "\n## Written by hand on b\nNo id here either.\n")
    sync(a)
    report = sync(b)
    assert report.committed and report.renumbered
    sync(a)
    merged = text(a, "global/learnings/notes.md")
    assert "Written by hand on a" in merged and "Written by hand on b" in merged
    ids = all_ids(a)
    assert len(ids) == 3 and len(set(ids)) == 3 and tree(a) == tree(b)


def test_generated_files_are_regenerated_not_merged(pair: tuple[Store, Store]) -> None:
    a, b = pair
    for store, name, count in ((a, "one", 1), (b, "two", 2)):
        for i in range(count):
            remember(store, f"Fact {i} for topic {name}", "procedural", topic=name)
        assert not write_system_doc(store)  # every write keeps SYSTEM.md current
    sync(a)
    report = sync(b)
    assert report.result == "merged" and not report.conflicts
    index = text(b, "global/procedural.md")
    assert index == L.render_layer_index("global", "procedural", b.catalog.topics("global", "procedural"))
    assert "procedural/one.md" in index and "procedural/two.md" in index
    system = text(b, "SYSTEM.md")
    assert not MARKER_RE.search(system) and system == b.render_system_doc()
    assert "| global | procedural | 2 | 3 |" in system
    sync(a)
    assert tree(a) == tree(b)
    remember(a, "A fact only one machine wrote", "procedural", topic="one")
    sync(a)
    with (b.root / "global" / "INDEX.md").open("a", encoding="utf-8") as handle:
        handle.write("\nA note of b's own.\n")
    git(b.root, "commit", "-qam", "index note")
    assert sync(b).result == "merged"  # only a changed SYSTEM.md: it still describes the merge
    assert "| global | procedural | 2 | 4 |" in text(b, "SYSTEM.md") and clean(b)


def test_memory_json_merges_by_key(pair: tuple[Store, Store], tmp_path: Path) -> None:
    a, b = pair
    associate(a, "alpha", "Alpha project", tmp_path)
    associate(b, "beta", "Beta project", tmp_path)
    sync(a)
    assert sync(b).result == "merged"
    sync(a)
    registry = json.loads(text(a, "memory.json"))
    assert set(registry["workspaces"]) == {"alpha", "beta"}
    assert tree(a) == tree(b)


def test_other_files_fall_back_to_a_line_merge(pair: tuple[Store, Store]) -> None:
    a, b = pair
    path = "global/INDEX.md"
    lines = text(a, path).splitlines(keepends=True)
    (a.root / path).write_text("".join(["# Global memory, edited on a\n", *lines[1:]]))
    (b.root / path).write_text("".join([*lines, "- a line added on b\n"]))
    sync(a)
    assert sync(b).result == "merged"
    merged = text(b, path)
    assert merged.startswith("# Global memory, edited on a\n") and merged.endswith("- a line added on b\n")

    (a.root / path).write_text(merged.replace("edited on a", "edited again on a"))
    (b.root / path).write_text(merged.replace("edited on a", "edited on b too"))
    sync(a)
    result = run(b.root, "sync")
    assert result.exit_code == 3
    assert "edited again on a" in text(b, path) and "edited on b too" in text(b, path)
    assert path in text(b, "state/CONFLICT.md") and "| lines |" in text(b, "state/CONFLICT.md")
    keep_side(b.root / path, 1)
    assert run(b.root, "sync").exit_code == 0 and run(a.root, "sync").exit_code == 0
    assert tree(a) == tree(b)


# -- push rejected, retry bound ---------------------------------------------------------------
def test_push_rejected_because_a_third_machine_pushed_first_is_retried(
        tmp_path: Path, bare_remote: Path, pair: tuple[Store, Store], monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = pair
    c = machine(tmp_path, "c", bare_remote)
    remember(b, "Written on b", "semantic", topic="b")
    original = GitRepo.push
    calls: list[Path] = []

    def racing_push(self: GitRepo, **kwargs: str) -> None:
        calls.append(self.root)
        if len(calls) == 1:  # c gets in between b's fetch and b's push
            remember(c, "Written on c", "semantic", topic="c")
            assert sync(c).result == "pushed"
        original(self, **kwargs)

    monkeypatch.setattr(GitRepo, "push", racing_push)
    report = sync(b)
    assert report.attempts == 2 and report.result == "merged" and report.pushed
    assert "Written on c" in text(b, "global/semantic/c.md")
    log = (b.root / "logs/memory.log").read_text()
    assert '"event": "sync-retry"' in log
    monkeypatch.setattr(GitRepo, "push", original)
    for store in (a, c):
        sync(store)
    assert tree(a) == tree(b) == tree(c)


def test_push_rejection_is_retried_a_bounded_number_of_times(
        pair: tuple[Store, Store], monkeypatch: pytest.MonkeyPatch) -> None:
    _a, b = pair
    remember(b, "Never accepted", "semantic")
    attempts: list[int] = []

    def rejected(self: GitRepo, **kwargs: str) -> None:
        attempts.append(1)
        raise PushRejectedError("push rejected: fetch first")

    monkeypatch.setattr(GitRepo, "push", rejected)
    with pytest.raises(SyncError, match="rejected 3 times"):
        sync(b)
    assert len(attempts) == 3
    assert "rejected 3 times" in str(sync_state(b)["error"])


# -- failures: one line, logged, recorded, non-zero, store intact -----------------------------
def assert_failed(store: Store, result: Result, before: str, needle: str, *secrets: str) -> None:
    assert result.exit_code == 3, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and needle in result.stderr, result.stderr
    state = sync_state(store)
    assert state["result"] == "failed" and needle in str(state["error"]) and state["lastAttempt"]
    record = last_log(store)
    assert record["event"] == "sync" and record["result"] == "failed" and needle in str(record["error"])
    assert head(store) == before and clean(store)
    for secret in secrets:
        for where in (result.stdout, result.stderr, text(store, "logs/memory.log"),
                      text(store, "state/sync.json"), text(store, ".git/config"),
                      text(store, "memory.json")):
            assert secret not in where


def test_no_network(pair: tuple[Store, Store]) -> None:
    _a, b = pair
    remember(b, "Stays safe locally", "semantic")
    remote_set(b, f"http://user:hunter2secret@127.0.0.1:{unused_port()}/mem.git")
    before = head(b)
    assert_failed(b, run(b.root, "sync"), before, "cannot reach remote", "hunter2secret")
    assert "Stays safe locally" in text(b, "global/semantic/general.md")


def test_auth_refused_never_shows_the_token(tmp_path: Path, store: Store) -> None:
    srv = tmp_path / "srv"
    srv.mkdir()
    git(tmp_path, "init", "--bare", "-q", "-b", "main", str(srv / "mem.git"))
    with serve_git_http(srv, token="the-right-token-42") as base:
        remote_set(store, base + "mem.git")
        before = head(store)
        wrong = "wrong-token-xyz-987"
        result = run(store.root, "sync", env={"GITMEM_GIT_TOKEN": wrong})
        assert_failed(store, result, before, "authentication refused", wrong)
        missing = run(store.root, "sync")
        assert_failed(store, missing, before, "requires authentication")
        token_url = base.replace("http://", "http://x-access-token:the-right-token-42@") + "mem.git"
        done = run(store.root, "remote", "set", token_url)
        assert done.exit_code == 0 and "the-right-token-42" not in done.output
        pushed = run(store.root, "sync", "--json")
        assert pushed.exit_code == 0, pushed.output
        assert json.loads(pushed.stdout)["result"] == "pushed"
        for where in (pushed.stdout, text(store, "logs/memory.log"), text(store, "state/sync.json"),
                      text(store, ".git/config"), text(store, "memory.json")):
            assert "the-right-token-42" not in where


def test_remote_missing(tmp_path: Path, store: Store) -> None:
    gone = tmp_path / "gone.git"
    git(tmp_path, "init", "--bare", "-q", "-b", "main", str(gone))
    remote_set(store, str(gone))
    shutil.rmtree(gone)  # the remote disappeared after it was set
    assert_failed(store, run(store.root, "sync"), head(store), "not found")


def test_no_remote_configured(store: Store) -> None:
    assert_failed(store, run(store.root, "sync"), head(store), "no remote is configured")


def test_unrelated_histories_change_nothing(tmp_path: Path, pair: tuple[Store, Store]) -> None:
    a, _b = pair
    other = Store(tmp_path / "other", cwd=tmp_path)
    (tmp_path / "other").mkdir()
    git(other.root, "init", "-q", "-b", "main")
    (other.root / "notes.txt").write_text("a memory started elsewhere\n")
    git(other.root, "add", "notes.txt")
    git(other.root, "commit", "-qm", "elsewhere")
    other.init()
    remember(other, "An independent memory", "semantic")
    remote_set(other, str(a.git.remote_url()))
    assert_failed(other, run(other.root, "sync"), head(other), "unrelated histories")
    assert git(a.root, "ls-remote", str(a.git.remote_url()), "main").split()[0] == head(a)


def test_corrupt_remote(tmp_path: Path, pair: tuple[Store, Store]) -> None:
    a, b = pair
    remember(a, "Pushed just before the damage", "semantic")
    sync(a)
    remote = Path(str(a.git.remote_url()))
    for path in (remote / "objects").rglob("*"):
        if path.is_file() and path.parent.name not in ("info",):
            path.chmod(0o644)
            path.write_bytes(b"\0garbage\0" * 4)
    before = head(b)
    result = run(b.root, "sync")
    assert result.exit_code == 3
    assert_failed(b, result, before, "is damaged")


def test_rewritten_remote_history_is_merged_never_forced(tmp_path: Path, pair: tuple[Store, Store]) -> None:
    a, b = pair
    remember(a, "Kept on b after the rewrite", "semantic", topic="x")
    sync(a)
    sync(b)
    remember(b, "Local work on b", "semantic", topic="y")
    rewrite = tmp_path / "rewrite"
    git(tmp_path, "clone", "-q", str(a.git.remote_url()), str(rewrite))
    git(rewrite, "reset", "-q", "--hard", "HEAD~1")
    (rewrite / "global/semantic/z.md").parent.mkdir(parents=True, exist_ok=True)
    (rewrite / "global/semantic/z.md").write_text("## Written after a rewrite\nBody.\n\n**Id:** global-sem-0009\n")
    git(rewrite, "add", ".")
    git(rewrite, "commit", "-qm", "rewritten")
    git(rewrite, "push", "-q", "--force", "origin", "main")
    report = sync(b)
    assert report.result == "merged"
    for phrase in ("Kept on b after the rewrite", "Local work on b", "Written after a rewrite"):
        assert any(phrase in (b.root / p).read_text() for p in b.all_topic_files())


# -- the merge driver and plain git pull ------------------------------------------------------
LAUNCHER = """import sys
from gitmem.cli.main import cli
from gitmem.cli.sync import COMMANDS
for command in COMMANDS:
    if command.name not in cli.commands:
        cli.add_command(command)
cli(prog_name="gitmem")
"""


def test_plain_git_pull_merges_entry_by_entry(tmp_path: Path, pair: tuple[Store, Store]) -> None:
    a, b = pair
    remember(a, "Shared before the pull", "semantic", topic="t")
    sync(a)
    sync(b)
    launcher = tmp_path / "gitmem_launcher.py"
    launcher.write_text(LAUNCHER)
    configure_merge_driver(b.root)
    official = git(b.root, "config", "--get", "merge.gitmem.driver").strip()
    assert official == merge_driver_command(b.root)
    # The same command, through a launcher that has the sync commands whether or not cli.py does.
    git(b.root, "config", "merge.gitmem.driver", official.replace(" -m gitmem ", f" {launcher} "))
    remember(a, "Pulled from a", "semantic", topic="t")
    sync(a)
    mine = remember(b, "Committed on b", "semantic", topic="t").id
    pulled = subprocess.run(["git", "pull", "-q", "--no-rebase", "--no-edit", "origin", "main"],
                            cwd=b.root, capture_output=True, text=True, env={**os.environ, **GIT_ENV})
    assert pulled.returncode == 0, pulled.stderr
    merged = text(b, "global/semantic/t.md")
    assert "Pulled from a" in merged and "Committed on b" in merged and not MARKER_RE.search(merged)
    ids = re.findall(r"\*\*Id:\*\* (\S+)", merged)
    assert len(ids) == 3 == len(set(ids))
    topic = b.read_file("global/semantic/t.md")
    assert topic is not None
    by_title = {e.title: e.id for e in topic.entries}
    assert by_title["Pulled from a"] == mine  # published on a: kept
    assert by_title["Committed on b"] == "global-sem-0003"  # b's unpublished entry renumbered
    assert len(git(b.root, "rev-list", "--parents", "-1", "HEAD").split()) == 3
    assert sync(b).result in ("pushed", "up-to-date")  # the layer index is repaired and pushed


def test_merge_driver_contract(tmp_path: Path) -> None:
    def side(name: str, body: str) -> str:
        path = tmp_path / name
        path.write_text(body)
        return str(path)

    entry = "## Fact\n{}\n\n**Id:** global-sem-0001\n"
    base = side("O", entry.format("base"))
    ours = side("A", entry.format("ours"))
    theirs = side("B", entry.format("theirs"))
    assert run_merge_driver(base, ours, theirs, "global/semantic/t.md", tmp_path) == 1
    assert Path(ours).read_text().count("<<<<<<< ") == 1

    ours = side("A", entry.format("base") + "\n## Mine\nx\n\n**Id:** global-sem-0002\n")
    theirs = side("B", entry.format("theirs"))
    assert run_merge_driver(base, ours, theirs, "global/semantic/t.md", tmp_path) == 0
    assert "theirs" in Path(ours).read_text() and "## Mine" in Path(ours).read_text()

    index = "# Semantic\n- [t](semantic/t.md) — {} entries\n"
    ours = side("A", index.format(2))
    assert run_merge_driver(side("O", index.format(1)), ours, side("B", index.format(3)),
                            "global/semantic.md", tmp_path) == 0
    assert not MARKER_RE.search(Path(ours).read_text())


def test_the_driver_opens_the_repository_only_to_label_a_conflict(tmp_path: Path) -> None:
    """git starts the driver once per file both sides changed: a clean merge (most of them)
    never loads pygit2; a conflict's markers name each side's machine and commit."""
    store = Store(tmp_path / "store", cwd=tmp_path)
    store.init()
    store.close()
    probe = ("import runpy, sys\n"
             "sys.argv = ['gitmem', *sys.argv[1:]]\n"
             "try:\n    runpy.run_module('gitmem', run_name='__main__')\n"
             "finally:\n    print('pygit2' in sys.modules, file=sys.stderr)\n")

    def driver(ours_body: str) -> tuple[int, str, str]:
        files = []
        for name, body in (("O", "## Fact\nbase\n\n**Id:** global-sem-0001\n"), ("A", ours_body),
                           ("B", "## Fact\ntheirs\n\n**Id:** global-sem-0001\n")):
            (tmp_path / name).write_text(body)
            files.append(str(tmp_path / name))
        done = subprocess.run([sys.executable, "-c", probe, "--root", str(store.root), "merge-driver", *files,
                               "global/semantic/t.md"], capture_output=True, text=True,
                              env={**os.environ, "GITMEM_SERVE": "off", "GITMEM_MACHINE": "laptop"})
        return done.returncode, done.stderr.strip().splitlines()[-1], (tmp_path / "A").read_text()

    code, loaded, merged = driver("## Fact\nbase\n\n**Id:** global-sem-0001\n\n## Mine\nx\n")
    assert (code, loaded) == (0, "False") and "theirs" in merged and "## Mine" in merged
    code, loaded, merged = driver("## Fact\nours\n\n**Id:** global-sem-0001\n")
    head = git(store.root, "rev-parse", "HEAD").strip()
    assert (code, loaded) == (1, "True")
    assert f"<<<<<<< laptop {head[:12]}" in merged and "ours" in merged and "theirs" in merged


def test_merge_driver_in_a_rebase_renumbers_the_replayed_local_entry(tmp_path: Path) -> None:
    from gitmem.githooks.driver import merge_texts

    base = "# t\n"
    upstream = base + "\n## Upstream\nu\n\n**Id:** global-sem-0001\n"
    local = base + "\n## Local\nl\n\n**Id:** global-sem-0001\n"
    merged = merge_texts("global/semantic/t.md", base, upstream, local, rebase=True)
    assert merged.renumbered == {"global-sem-0001": "global-sem-0002"}
    assert "## Upstream\nu\n\n**Id:** global-sem-0001" in merged.text
    assert "## Local\nl\n\n**Id:** global-sem-0002" in merged.text
    plain = merge_texts("global/semantic/t.md", base, local, upstream)  # a merge: ours is local
    assert "## Local\nl\n\n**Id:** global-sem-0002" in plain.text


# -- over the network: loopback smart HTTP ----------------------------------------------------
def test_two_machines_over_http_with_a_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    srv = tmp_path / "srv"
    srv.mkdir()
    git(tmp_path, "init", "--bare", "-q", "-b", "main", str(srv / "mem.git"))
    token = "tok-http-5c1e9a"
    monkeypatch.setenv("GITMEM_GIT_TOKEN", token)
    with serve_git_http(srv, token=token) as base:
        url = base + "mem.git"
        a = machine(tmp_path, "a", url)
        remember(a, "First over http", "semantic", topic="net")
        assert sync(a).result == "pushed"
        b = machine(tmp_path, "b", url)
        assert head(b) == head(a)
        remember(a, "Second from a", "semantic", topic="net")
        remember(b, "Second from b", "semantic", topic="net")
        assert sync(a).result == "pushed"
        report = sync(b)
        assert report.result == "merged" and report.renumbered
        assert sync(a).result == "fast-forward"
        assert tree(a) == tree(b) and clean(a) and clean(b)
        ids = all_ids(a)
        assert len(ids) == 3 == len(set(ids))
        for store in (a, b):
            assert token not in text(store, "logs/memory.log") + text(store, "state/sync.json")
        a.close()
        b.close()


def test_conflict_error_class_is_exit_3() -> None:
    assert ConflictError("x").exit_code == 3 and SyncError("x").exit_code == 3


def test_sync_commands_are_documented() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    for command in COMMANDS:
        assert f"`gitmem {command.name}" in readme
    assert isinstance(WIRED.commands["remote"], click.Group)
    assert shutil.which("git")
    _ = forget  # forgetting is an edit like any other; the torture test drives it


def test_subagents_do_not_sync(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from gitmem.errors import SubagentWriteError

    monkeypatch.setenv("GITMEM_SUBAGENT", "1")
    with pytest.raises(SubagentWriteError):
        sync(store)


# -- an entry moved on one machine and edited on the other --------------------------------------


@pytest.mark.parametrize("mover", ["a", "b"])
def test_an_entry_moved_on_one_machine_and_edited_on_the_other_is_moved_with_the_edit(
        pair: tuple[Store, Store], mover: str) -> None:
    """The move decides where the entry lives, the edit what it says: one entry, one Id."""
    a, b = pair
    moved = remember(a, "Deploys run the migrations first", "semantic", topic="deploy").id or ""
    remember(a, "Deploy windows are Tuesdays", "semantic", topic="deploy")
    sync(a)
    sync(b)
    moving, editing = (a, b) if mover == "a" else (b, a)
    move_entry(moving, moved, "migrations")
    set_body(editing, moved, "Deploys run the migrations first, then warm the caches")
    remember(editing, "A new fact beside it", "semantic", topic="deploy")
    sync(a)
    report = sync(b)
    assert report.result == "merged" and not report.conflicts
    sync(a)
    assert tree(a) == tree(b)
    assert all_ids(b).count(moved) == 1
    assert b.locate(moved).path == "global/semantic/migrations.md"
    assert "then warm the caches" in text(b, "global/semantic/migrations.md")
    assert "warm the caches" not in text(b, "global/semantic/deploy.md")
    assert "Deploy windows are Tuesdays" in text(b, "global/semantic/deploy.md")
    assert "A new fact beside it" in text(b, "global/semantic/deploy.md")


def test_a_moved_entry_whose_old_file_went_away_takes_the_edit_along(pair: tuple[Store, Store]) -> None:
    a, b = pair
    moved = remember(a, "The only fact of its topic", "semantic", topic="solo").id or ""
    sync(a)
    sync(b)
    move_entry(a, moved, "elsewhere")
    assert not (a.root / "global/semantic/solo.md").exists()
    set_body(b, moved, "The only fact of its topic, refined")
    sync(a)
    report = sync(b)
    assert report.result == "merged" and not report.conflicts
    assert any("the edit went with it" in note for note in report.notes)
    assert all_ids(b).count(moved) == 1
    assert "refined" in text(b, "global/semantic/elsewhere.md")
    assert not (b.root / "global/semantic/solo.md").exists()


def test_a_moved_entry_edited_on_both_machines_is_one_conflict_where_it_now_lives(
        pair: tuple[Store, Store]) -> None:
    a, b = pair
    moved = remember(a, "Backups run at night", "semantic", topic="ops").id or ""
    sync(a)
    sync(b)
    move_entry(a, moved, "backups")
    set_body(a, moved, "Backups run at 01:00")
    set_body(b, moved, "Backups run at 03:00")
    sync(a)
    report = sync(b)
    assert report.conflicts
    merged = text(b, "global/semantic/backups.md")
    assert "01:00" in merged and "03:00" in merged and MARKER_RE.search(merged)
    assert [p for p in b.all_topic_files() if moved in text(b, p)] == ["global/semantic/backups.md"]
    assert not (b.root / "global/semantic/ops.md").exists()
