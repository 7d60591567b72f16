"""No write follows a symbolic link anywhere in the store; `check` lists every link."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from support import Cli, commit_count, git


@pytest.mark.parametrize("link_at", ["global/semantic/db.md", "global/semantic",
                                     "workspaces/alpha", "state"])
def test_a_write_through_a_link_is_refused_naming_it(gm: Cli, tmp_path: Path, link_at: str) -> None:
    gm("remember", "the primary database is postgres", "-l", "semantic", "-t", "db", workspace="alpha")
    gm("remember", "alpha deploys on fridays", "-l", "semantic", "--scope", "workspace", workspace="alpha")
    target = gm.root / link_at
    outside = tmp_path / "outside"
    shutil.copytree(target, outside) if target.is_dir() else (outside.mkdir(), shutil.copy(target, outside / target.name))
    before = {p.relative_to(outside): p.read_bytes() for p in outside.rglob("*") if p.is_file()}
    shutil.rmtree(target) if target.is_dir() else target.unlink()
    target.symlink_to(outside if link_at != "global/semantic/db.md" else outside / "db.md")
    commits = commit_count(gm.root)
    result = gm("remember", "the replica is read-only", "-l", "semantic", "-t", "db", "--scope",
                "workspace" if link_at == "workspaces/alpha" else "global", workspace="alpha")
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and f"{link_at} is a symbolic link" in result.stderr
    assert {p.relative_to(outside): p.read_bytes() for p in outside.rglob("*") if p.is_file()} == before
    assert commit_count(gm.root) == commits and target.is_symlink()
    check = gm("check")
    assert check.exit_code == 2 and f"{link_at}:1: a symbolic link" in check.stdout


def test_the_catalog_and_lock_are_not_opened_through_a_linked_state_folder(gm: Cli, tmp_path: Path) -> None:
    gm("remember", "a fact", "-l", "semantic")
    outside = tmp_path / "state-elsewhere"
    shutil.move(gm.root / "state", outside)
    (gm.root / "state").symlink_to(outside)
    result = gm("forget", "global-sem-0001")
    assert result.exit_code == 2 and "state/store.lock" in result.stderr or "state is a symbolic" in result.stderr
    assert "Forgotten" not in git(gm.root, "show", "HEAD:global/semantic/general.md")


def test_the_log_is_never_written_through_a_link(gm: Cli, tmp_path: Path) -> None:
    outside = tmp_path / "logs-elsewhere"
    outside.mkdir()
    (gm.root / "logs").mkdir(exist_ok=True)
    (gm.root / "logs" / "memory.log").unlink(missing_ok=True)
    (gm.root / "logs" / "memory.log").symlink_to(outside / "memory.log")
    from gitmem.eventlog import log_event

    log_event(gm.root, {"event": "probe"})
    shutil.rmtree(gm.root / "logs")
    (gm.root / "logs").symlink_to(outside)
    log_event(gm.root, {"event": "probe"})
    assert list(outside.iterdir()) == []
