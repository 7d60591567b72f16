"""A document copy deleted by hand is never committed as a loss: not by a write of another kind,
not by a sync (so the other machine keeps it), and the next `gitmem doc` write puts it back."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from support import Cli, git


def test_a_deleted_copy_is_left_uncommitted_by_every_write_and_a_sync(tmp_path: Path,
                                                                      bare_remote: Path) -> None:
    a, b = Cli(tmp_path / "a", CliRunner()), Cli(tmp_path / "b", CliRunner())
    assert a("init", "--remote", str(bare_remote)).exit_code == 0
    source = tmp_path / "runbook.md"
    source.write_text("# Deploy\n\nUniqueword zebrafish step.\n")
    added = a("doc", "add", str(source), "--title", "Runbook", "--scope", "global", "--json")
    assert added.exit_code == 0, added.output
    relpath, doc_id = json.loads(added.stdout)["path"], json.loads(added.stdout)["id"]
    assert a("sync").exit_code == 0
    assert b("init", "--remote", str(bare_remote)).exit_code == 0
    (a.root / relpath).unlink()
    for args in (("remember", "An unrelated fact", "-l", "semantic"), ("sync",)):
        done = a(*args)
        assert done.exit_code == 0, done.output
        assert "deleted by hand while documents/index.json lists it" in done.output
        assert relpath in git(a.root, "ls-files") and not (a.root / relpath).exists()
    assert b("sync").exit_code == 0
    assert "zebrafish" in (b.root / relpath).read_text()
    assert "zebrafish" in b("search", "zebrafish").output
    other = tmp_path / "other.md"
    other.write_text("# Other\n\nAnother document.\n")
    put_back = a("doc", "add", str(other), "--title", "Other", "--scope", "global")
    assert put_back.exit_code == 0 and "restored it from git" in put_back.output
    assert "zebrafish" in (a.root / relpath).read_text() and git(a.root, "status", "--porcelain") == ""
    assert a.json("doc", "show", doc_id)["path"] == relpath  # type: ignore[index]
