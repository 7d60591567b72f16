"""Bad input to init / remote set (a branch name git refuses) is one line and exit 2, with
nothing created; a revert that changes nothing says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gitmem.cli import cli
from support import Cli, commit_count


@pytest.mark.parametrize("name", ["", "../../x", "a b", "-x", "x.lock", "a..b"])
def test_init_refuses_a_branch_name_git_refuses(tmp_path: Path, name: str) -> None:
    root = tmp_path / "store"
    result = CliRunner().invoke(cli, ["--root", str(root), "init", "--branch", name])
    assert result.exit_code == 2 and "not a valid branch name" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not root.exists()


@pytest.mark.parametrize("name", ["", "../../x"])
def test_remote_set_refuses_a_branch_name_git_refuses(gm: Cli, tmp_path: Path, name: str) -> None:
    before = commit_count(gm.root)
    result = gm("remote", "set", str(tmp_path / "remote.git"), "--branch", name)
    assert result.exit_code == 2 and "not a valid branch name" in result.stderr
    assert commit_count(gm.root) == before


def test_a_revert_that_changes_nothing_says_so(gm: Cli) -> None:
    entry = gm("remember", "One fact", "-l", "semantic").stdout.strip()
    result = gm("revert", entry, "--to", "HEAD")
    assert result.exit_code == 0, result.output
    assert "gitmem: note:" in result.stderr and "nothing changed" in result.stderr
