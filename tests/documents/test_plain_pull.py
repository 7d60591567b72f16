"""Documents two machines numbered alike, brought together by a plain `git pull` (merge or
rebase, through the store's merge driver): the published document keeps its id, this machine's
takes the next free one, both are listed, nothing is left in conflict."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from support import Cli, git


def _add(gm: Cli, tmp_path: Path, title: str, text: str) -> str:
    source = tmp_path / f"{title}.md"
    source.write_text(f"# {title}\n\n{text}\n")
    added = gm("doc", "add", str(source), "--title", title, "--scope", "global", "--json")
    assert added.exit_code == 0, added.output
    return str(json.loads(added.stdout)["id"])


@pytest.mark.parametrize("how", ["--no-rebase", "--rebase"])
def test_a_document_numbered_alike_on_both_machines_keeps_its_published_id(
        tmp_path: Path, bare_remote: Path, how: str) -> None:
    a, b = Cli(tmp_path / "a", CliRunner()), Cli(tmp_path / "b", CliRunner())
    assert a("init", "--remote", str(bare_remote)).exit_code == 0 and a("sync").exit_code == 0
    assert b("init", "--remote", str(bare_remote)).exit_code == 0
    assert b("hooks", "install").exit_code == 0
    published = _add(a, tmp_path, "Deploy", "drain the queue first")
    assert a("sync").exit_code == 0
    local = _add(b, tmp_path, "Rollback", "restore the snapshot")
    assert local == published  # both machines gave out the same number
    pulled = subprocess.run(["git", "pull", "-q", "--no-edit", how, "origin", "main"], cwd=b.root,
                            capture_output=True, text=True)
    assert pulled.returncode == 0, pulled.stderr
    listed = {str(d["title"]): str(d["id"]) for d in b.json("doc", "list", "--json")}  # type: ignore[union-attr]
    assert listed["Deploy"] == published and listed["Rollback"] != published
    assert "restore the snapshot" in str(b.json("doc", "show", listed["Rollback"])["body"])  # type: ignore[index]
    assert b("conflicts").exit_code == 1 and git(b.root, "status", "--porcelain").strip() == ""
