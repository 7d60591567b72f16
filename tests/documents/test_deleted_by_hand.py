"""A document copy deleted by hand is never committed as a loss: any write (not only a document
write) and a sync put it back from git, say so, and push nothing but what the other machine may
keep; a change of that document from the other machine then merges as usual."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from support import Cli, git


def _machines(tmp_path: Path, bare_remote: Path) -> tuple[Cli, Cli, str, str]:
    a, b = Cli(tmp_path / "a", CliRunner(), "laptop"), Cli(tmp_path / "b", CliRunner(), "desktop")
    assert a("init", "--remote", str(bare_remote)).exit_code == 0
    source = tmp_path / "runbook.md"
    source.write_text("# Deploy\n\nUniqueword zebrafish step.\n")
    added = a("doc", "add", str(source), "--title", "Runbook", "--scope", "global", "--json")
    assert added.exit_code == 0, added.output
    assert a("sync").exit_code == 0
    assert b("init", "--remote", str(bare_remote)).exit_code == 0
    return a, b, json.loads(added.stdout)["path"], json.loads(added.stdout)["id"]


def test_a_deleted_copy_is_put_back_by_any_write_and_by_a_sync(tmp_path: Path, bare_remote: Path) -> None:
    a, b, relpath, doc_id = _machines(tmp_path, bare_remote)
    for args in (("remember", "An unrelated fact", "-l", "semantic"), ("sync",)):
        (a.root / relpath).unlink()
        done = a(*args)
        assert done.exit_code == 0, done.output
        assert "was deleted by hand while its document is listed; put it back" in done.output
        assert "zebrafish" in (a.root / relpath).read_text()
        assert git(a.root, "status", "--porcelain") == ""
    assert relpath in git(a.root, "ls-files")
    assert b("sync").exit_code == 0 and "zebrafish" in (b.root / relpath).read_text()
    assert "zebrafish" in b("search", "zebrafish").output
    assert a.json("doc", "show", doc_id)["path"] == relpath  # type: ignore[index]


def test_a_copy_deleted_here_and_changed_there_takes_the_change(tmp_path: Path, bare_remote: Path) -> None:
    """The other machine updated the document meanwhile: the sync puts the copy back, then
    merges the update in (a deletion held uncommitted stopped that sync before)."""
    a, b, relpath, doc_id = _machines(tmp_path, bare_remote)
    update = tmp_path / "update.md"
    update.write_text("# Deploy\n\nUniqueword zebrafish step, then the heron step.\n")
    assert a("doc", "update", doc_id, str(update)).exit_code == 0 and a("sync").exit_code == 0
    (b.root / relpath).unlink()
    done = b("sync")
    assert done.exit_code == 0, done.output
    assert "heron" in (b.root / relpath).read_text() and git(b.root, "status", "--porcelain") == ""
