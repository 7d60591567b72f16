"""A copy deleted by hand whose deletion was committed (with plain git) comes back on both machines (each
machine's next document write restores it from git); one machine archives it meanwhile. After
both sync, the document lives once, on the shelf its record names: no second copy in git, no
search hit under the path it left. The same for a copy renamed by hand on one machine and
edited in place on the other."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from support import Cli, git

SHELF = "global/documents"


def _machines(tmp_path: Path, bare_remote: Path) -> tuple[Cli, Cli]:
    a = Cli(tmp_path / "laptop", CliRunner(), "laptop")
    b = Cli(tmp_path / "desktop", CliRunner(), "desktop")
    assert a("init", "--remote", str(bare_remote)).exit_code == 0
    _add(a, tmp_path, "Start", "the first document")
    assert a("sync").exit_code == 0
    assert b("init", "--remote", str(bare_remote)).exit_code == 0
    return a, b


def _add(gm: Cli, tmp_path: Path, title: str, text: str) -> str:
    source = tmp_path / "source.md"
    source.write_text(f"# {title}\n\n{text}\n")
    added = gm("doc", "add", str(source), "--title", title, "--scope", "global", "--json")
    assert added.exit_code == 0, added.output
    return str(json.loads(added.stdout)["id"])


def _delete_and_commit(gm: Cli, copy: str) -> None:
    """A copy deleted by hand and the deletion committed with plain git (gitmem's own writes
    leave such a deletion uncommitted: test_deleted_by_hand.py), as a person or an earlier
    gitmem could."""
    git(gm.root, "rm", "-q", f"{SHELF}/{copy}")
    git(gm.root, "commit", "-qm", f"delete {copy} by hand")


def _paths(gm: Cli) -> set[str]:
    listed = gm.json("doc", "list", "--all")
    assert isinstance(listed, list)
    return {str(d["path"]) for d in listed}


def _assert_one_copy_each(gm: Cli) -> None:
    paths = _paths(gm)
    on_disk = {p.relative_to(gm.root).as_posix() for p in (gm.root / SHELF).glob("*/*.md")}
    in_git = set(git(gm.root, "ls-files", f"{SHELF}/active", f"{SHELF}/archived").split())
    assert on_disk == in_git == paths
    hits = gm.json("search", "queue", "--all", "--limit", "100")
    assert isinstance(hits, list) and hits
    assert {str(h["path"]) for h in hits} <= paths


def test_a_copy_restored_on_both_machines_and_archived_on_one_lives_once(
        tmp_path: Path, bare_remote: Path) -> None:
    a, b = _machines(tmp_path, bare_remote)
    doc = _add(a, tmp_path, "Doc 0", "drain the queue")
    _delete_and_commit(a, "active/doc-0.md")
    for gm in (a, b):  # a's sync pushes the deletion; b takes it
        assert gm("sync").exit_code == 0, gm("sync").output
    assert a("doc", "archive", doc).exit_code == 0  # restores the copy from git, then archives it
    other = b("doc", "archive", "global-doc-0001")  # restores the copy from git too
    assert other.exit_code == 0 and "restored it from git" in other.output
    for gm in (a, b, a):
        done = gm("sync")
        assert done.exit_code == 0, done.output
    _assert_everywhere(tmp_path, bare_remote, a, b)
    assert f"{SHELF}/archived/doc-0.md" in _paths(a)


def test_an_edit_of_the_copy_restored_on_the_other_machine_joins_the_archived_copy(
        tmp_path: Path, bare_remote: Path) -> None:
    a, b = _machines(tmp_path, bare_remote)
    doc = _add(a, tmp_path, "Doc 0", "drain the queue")
    _delete_and_commit(a, "active/doc-0.md")
    for gm in (a, b):
        assert gm("sync").exit_code == 0
    assert a("doc", "archive", doc).exit_code == 0
    assert b("doc", "archive", "global-doc-0001").exit_code == 0
    restored = b.root / SHELF / "active/doc-0.md"
    restored.write_text(restored.read_text() + "restart the workers\n")
    assert a("sync").exit_code == 0
    done = b("sync")  # the two texts of doc-0002 differ: a conflict block to settle, both kept
    assert done.exit_code == 3, done.output
    listed = b.json("conflicts")
    assert isinstance(listed, list) and [str(c["ref"]).split(":")[0] for c in listed] == [f"{SHELF}/archived/doc-0.md"]
    assert b("resolve", str(listed[0]["ref"]), "--both").exit_code == 0
    for gm in (b, a, b):
        done = gm("sync")
        assert done.exit_code == 0, done.output
    _assert_everywhere(tmp_path, bare_remote, a, b)
    assert f"{SHELF}/archived/doc-0.md" in _paths(a)
    for gm in (a, b):
        text = (gm.root / SHELF / "archived/doc-0.md").read_text()
        assert "drain the queue" in text and "restart the workers" in text and "<<<<<<<" not in text


def _assert_everywhere(tmp_path: Path, bare_remote: Path, a: Cli, b: Cli) -> None:
    fresh = Cli(tmp_path / "fresh", CliRunner())
    assert fresh("init", "--remote", str(bare_remote)).exit_code == 0
    for gm in (a, b, fresh):
        _assert_one_copy_each(gm)


def test_a_copy_renamed_and_edited_on_one_machine_and_edited_in_place_on_the_other_lives_once(
        tmp_path: Path, bare_remote: Path) -> None:
    a, b = _machines(tmp_path, bare_remote)
    start = a.root / SHELF / "active/start.md"
    renamed = start.with_name("renamed-start.md")
    start.rename(renamed)
    renamed.write_text(renamed.read_text() + "drain the queue\n")
    mine = b.root / SHELF / "active/start.md"
    mine.write_text(mine.read_text().replace("# Start", "# Start, queue kept"))
    for gm in (b, a, b):  # a's sync merges: the renamed copy and the edit in place are one document
        done = gm("sync")
        assert done.exit_code == 0, done.output
    _assert_everywhere(tmp_path, bare_remote, a, b)
    for gm in (a, b):
        text = (gm.root / SHELF / "active/start.md").read_text()
        assert "drain the queue" in text and "queue kept" in text
