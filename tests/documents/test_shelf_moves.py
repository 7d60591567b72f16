"""A document archived (or restored) on one machine and edited in place on the other: after both
sync, it lives once, on the shelf the move put it on, with the edit; no copy is left behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from support import Cli, git

SHELF = "global/documents"


def _machines(tmp_path: Path, bare_remote: Path) -> tuple[Cli, Cli, str]:
    a, b = Cli(tmp_path / "a", CliRunner()), Cli(tmp_path / "b", CliRunner())
    assert a("init", "--remote", str(bare_remote)).exit_code == 0
    source = tmp_path / "runbook.md"
    source.write_text("# Runbook\n\nStep one: drain the queue.\n")
    added = a("doc", "add", str(source), "--title", "Runbook", "--scope", "global", "--json")
    assert added.exit_code == 0, added.output
    doc_id = str(json.loads(added.stdout)["id"])
    assert a("sync").exit_code == 0
    assert b("init", "--remote", str(bare_remote)).exit_code == 0
    return a, b, doc_id


def _copies(gm: Cli) -> list[str]:
    return sorted(p.relative_to(gm.root).as_posix() for p in (gm.root / SHELF).glob("*/*.md"))


@pytest.mark.parametrize("mover", [0, 1])
def test_an_archive_on_one_machine_and_an_edit_on_the_other_keep_one_copy(
        tmp_path: Path, bare_remote: Path, mover: int) -> None:
    a, b, doc_id = _machines(tmp_path, bare_remote)
    moving, editing = (a, b) if mover == 0 else (b, a)
    assert moving("doc", "archive", doc_id).exit_code == 0
    copy = editing.root / SHELF / "active/runbook.md"
    copy.write_text(copy.read_text() + "Step two: restart the workers.\n")
    for gm in (moving, editing, moving):
        done = gm("sync")
        assert done.exit_code == 0, done.output
    for gm in (a, b):
        assert _copies(gm) == [f"{SHELF}/archived/runbook.md"]
        text = (gm.root / SHELF / "archived/runbook.md").read_text()
        assert "Step two: restart the workers." in text and "<<<<<<<" not in text
        shown = gm.json("doc", "show", doc_id)
        assert isinstance(shown, dict) and shown["status"] == "archived"
        assert git(gm.root, "status", "--porcelain").strip() == ""


@pytest.mark.parametrize("mover", [0, 1])
def test_an_archive_on_one_machine_and_a_doc_update_on_the_other_leave_no_markers(
        tmp_path: Path, bare_remote: Path, mover: int) -> None:
    """Both machines changed the generated front matter (status there, revision here): it is
    generated again from the merged record, so the copy holds no conflict block."""
    a, b, doc_id = _machines(tmp_path, bare_remote)
    moving, updating = (a, b) if mover == 0 else (b, a)
    source = tmp_path / "new.md"
    source.write_text("# Runbook\n\nStep one: drain the queue, then wait.\n")
    assert updating("doc", "update", doc_id, str(source)).exit_code == 0
    assert moving("doc", "archive", doc_id).exit_code == 0
    for gm in (moving, updating, moving):
        done = gm("sync")
        assert done.exit_code == 0, done.output
    for gm in (a, b):
        assert _copies(gm) == [f"{SHELF}/archived/runbook.md"]
        text = (gm.root / SHELF / "archived/runbook.md").read_text()
        assert "then wait." in text and "<<<<<<<" not in text and 'status: "archived"' in text
        assert gm("check").exit_code == 0
        assert gm("doc", "restore", doc_id).exit_code == 0
