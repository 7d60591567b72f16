"""gitmem never commits a file it reads and cannot parse, and one such file (or one in conflict)
never blocks writes or syncs elsewhere: the hand-edit catch-up leaves it uncommitted, unstaged,
named in one note, and commits the rest; a write into it is refused and changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gitmem.errors import ConflictError
from gitmem.store.store import Store
from gitmem.sync.remote import init_store
from gitmem.sync.run import sync
from gitmem.verbs.entries import remember
from support import Cli, commit_count, git

# Files gitmem reads, each in a shape it cannot parse, and the line the problem is on.
BAD = {
    "global/documents/index.json": ("[[\n", 2),
    "global/runtime/memories.json": ('{\n  "items": [}\n', 2),
    "ids.json": ("{oops\n", 1),
    "workspaces/proj/meta.json": ("[1, 2]\n", 1),
    "global/documents/active/runbook.md": ("---\ntitle: \"Runbook\"\nno closing line\n", 1),
    "global/semantic/pasted.md": (b"## Pasted\n\xff\n", 2),
    "global/semantic/conflicted.md": ("## A\n<<<<<<< ours\none\n=======\ntwo\n>>>>>>> theirs\n", 2),
}
CONFLICT = "<<<<<<< ours\nmine\n=======\ntheirs\n>>>>>>> theirs\n"


def _put(root: Path, relpath: str, data: str | bytes) -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))


def _gm(store: Store) -> Cli:
    return Cli(store.root, CliRunner())


def _tracked(root: Path) -> set[str]:
    return set(git(root, "ls-files").split())


@pytest.mark.parametrize("relpath", sorted(BAD))
def test_a_file_gitmem_cannot_parse_is_left_out_and_the_write_goes_on(store: Store, relpath: str) -> None:
    remember(store, "A fact before", "semantic", topic="notes")
    data, line = BAD[relpath]
    _put(store.root, relpath, data)
    _put(store.root, "global/semantic/fine.md", "## Fine\nA good hand edit.\n")
    before = commit_count(store.root)
    result = _gm(store)("remember", "A fact after", "-l", "semantic", "-t", "notes")
    assert result.exit_code == 0, result.output
    notes = [n for n in result.stderr.splitlines() if n.startswith("gitmem: note: left uncommitted")]
    assert len(notes) == 1 and f"{relpath}:{line} (" in notes[0]
    assert commit_count(store.root) == before + 2  # the good hand edit, then the write
    tracked = _tracked(store.root)
    assert relpath not in tracked and "global/semantic/fine.md" in tracked
    assert git(store.root, "diff", "--cached", "--name-only") == ""  # not staged either
    assert (store.root / relpath).read_bytes() == (data if isinstance(data, bytes) else data.encode())
    # status and check name it until it is fixed
    status = _gm(store).json("status")
    assert any(p.startswith(f"{relpath}:{line}:") for p in status["dirty_held"])  # type: ignore[index]
    assert _gm(store)("check").exit_code == 2


def test_a_committed_file_gitmem_cannot_parse_is_never_committed_again(store: Store) -> None:
    """The final look before every commit: a write that would commit an unparseable file it
    touched is refused and undone."""
    remember(store, "A fact", "semantic", topic="notes")
    with pytest.raises(Exception, match="cannot parse"), store.writing("remember") as txn:
        store.write_file(txn, "global/semantic/new.md", "## New\ntext\n")
        store.write_file(txn, "global/documents/index.json", "[[\n")
    assert not (store.root / "global/semantic/new.md").exists()
    assert not (store.root / "global/documents/index.json").exists()
    assert git(store.root, "status", "--porcelain") == ""


def test_a_write_into_a_held_file_is_refused_and_changes_nothing(store: Store) -> None:
    remember(store, "A fact", "semantic", topic="notes")
    topic = store.root / "global/semantic/notes.md"
    edited = topic.read_text() + "\n" + CONFLICT
    topic.write_text(edited)
    head, index = git(store.root, "rev-parse", "HEAD"), (store.root / ".git/index").read_bytes()
    untracked_before = git(store.root, "status", "--porcelain", "-uall")
    result = _gm(store)("remember", "Into the conflicted file", "-l", "semantic", "-t", "notes",
                        workspace=None)
    assert result.exit_code == 2 and "global/semantic/notes.md:" in result.stderr
    assert "conflict marker" in result.stderr and "Traceback" not in result.output
    assert topic.read_text() == edited
    assert git(store.root, "rev-parse", "HEAD") == head
    assert (store.root / ".git/index").read_bytes() == index
    assert git(store.root, "status", "--porcelain", "-uall") == untracked_before


def test_a_refused_write_in_a_new_workspace_leaves_no_file_behind(store: Store) -> None:
    """The refusal comes after the write made its workspace folder and memory.json entry:
    every file it changed is put back."""
    remember(store, "A fact", "semantic", topic="notes")
    before = git(store.root, "status", "--porcelain", "-uall")
    registry = (store.root / "memory.json").read_bytes()
    with pytest.raises(Exception, match="refused on purpose"), store.writing("remember") as txn:
        store.register_workspace(txn, "fresh")
        assert (store.root / "workspaces/fresh/INDEX.md").exists()
        raise ValueError("refused on purpose")
    assert (store.root / "memory.json").read_bytes() == registry
    assert not (store.root / "workspaces/fresh/INDEX.md").exists()
    assert git(store.root, "status", "--porcelain", "-uall") == before


def test_a_conflict_in_one_file_blocks_neither_other_writes_nor_sync(tmp_path: Path,
                                                                     bare_remote: Path) -> None:
    laptop = Store(tmp_path / "laptop", cwd=tmp_path)
    init_store(laptop, remote=str(bare_remote), branch="main")
    remember(laptop, "The DB lives on db1", "semantic", topic="db")
    sync(laptop)
    db = laptop.root / "global/semantic/db.md"
    being_resolved = db.read_text() + "\n" + CONFLICT
    db.write_text(being_resolved)
    other = remember(laptop, "Backups run nightly", "semantic", topic="backups").id
    report = sync(laptop)
    assert report.pushed
    remote_files = git(bare_remote, "ls-tree", "-r", "--name-only", "main").split()
    assert "global/semantic/backups.md" in remote_files
    assert "<<<<<<<" not in git(bare_remote, "show", "main:global/semantic/db.md")
    assert db.read_text() == being_resolved
    # another machine changes that very file: the sync stops before anything changes
    desktop = Store(tmp_path / "desktop", cwd=tmp_path)
    init_store(desktop, remote=str(bare_remote), branch="main")
    assert remember(desktop, "db2 is the replica", "semantic", topic="db").id
    sync(desktop)
    head = git(laptop.root, "rev-parse", "HEAD")
    with pytest.raises(ConflictError, match="global/semantic/db.md"):
        sync(laptop)
    assert git(laptop.root, "rev-parse", "HEAD") == head and db.read_text() == being_resolved
    assert other


def test_an_unparseable_file_pushed_by_plain_git_is_reported_on_every_machine(
        tmp_path: Path, bare_remote: Path) -> None:
    laptop = Store(tmp_path / "laptop", cwd=tmp_path)
    init_store(laptop, remote=str(bare_remote), branch="main")
    remember(laptop, "A fact", "semantic", topic="notes")
    sync(laptop)
    desktop = tmp_path / "desktop"
    git(tmp_path, "clone", "-q", str(bare_remote), str(desktop))
    _put(desktop, "global/documents/index.json", "[[\n")
    git(desktop, "add", "-A")
    git(desktop, "-c", "core.hooksPath=/dev/null", "commit", "-qm", "by hand")
    git(desktop, "push", "-q", "origin", "main")
    sync(laptop)
    gm = _gm(laptop)
    status = gm.json("status")
    assert "global/documents/index.json:2: not valid JSON (Expecting value)" in " ".join(
        status["problems"])  # type: ignore[index]
    check = gm("check")
    assert check.exit_code == 2 and "global/documents/index.json:2:" in check.stdout
    assert remember(laptop, "Writes go on", "semantic", topic="notes").id

