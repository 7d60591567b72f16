"""One new Id on two machines, in two topic files, merged with plain git (not `gitmem sync`): the
post-merge hook, or `gitmem check --fix`, renumbers this machine's entry and its links."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitmem.githooks.install import install as install_hooks
from gitmem.store.store import Store
from gitmem.sync.remote import init_store
from support import GIT_ENV, Cli, git


def ok(gm: Cli, *args: str) -> str:
    result = gm(*args)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def sh_git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV})


def two_machines(tmp_path: Path, bare_remote: Path, *facts: tuple[str, str]) -> tuple[Cli, Cli]:
    """a made the store with these (text, semantic topic) facts and synced; b cloned it."""
    clis = []
    for name in ("a", "b"):
        store = Store(tmp_path / name, cwd=tmp_path)
        init_store(store, remote=str(bare_remote), branch="main")
        store.close()
        clis.append(Cli(tmp_path / name, CliRunner()))
        if name == "a":
            for text, topic in facts:
                ok(clis[0], "remember", text, "-l", "semantic", "-t", topic)
            ok(clis[0], "sync")
    ok(clis[1], "sync")
    return clis[0], clis[1]


@pytest.fixture
def machines(tmp_path: Path, bare_remote: Path) -> tuple[Cli, Cli]:
    """a made the store and pushed one fact; b is a clone. Each then wrote global-sem-0002 in a
    topic file of its own (b's supersedes the shared fact), and a pushed with plain git."""
    a, b = two_machines(tmp_path, bare_remote, ("Staging runs Postgres 15", "db"))
    assert ok(a, "remember", "Deploys go through CI", "-l", "semantic", "-t", "ci") == "global-sem-0002"
    assert sh_git(a.root, "push", "-q", "origin", "main").returncode == 0
    assert ok(b, "remember", "Staging runs Postgres 16", "-l", "semantic", "-t", "staging",
              "--supersedes", "global-sem-0001") == "global-sem-0002"
    return a, b


def assert_settled(b: Cli) -> None:
    assert "Deploys go through CI" in ok(b, "show", "global-sem-0002")  # the published Id stays
    mine = ok(b, "show", "global-sem-0003")
    assert "Postgres 16" in mine and "Supersedes: global-sem-0001" in mine
    assert "Superseded-by: global-sem-0003" in ok(b, "show", "global-sem-0001")
    assert b("check").exit_code == 0
    assert git(b.root, "status", "--porcelain") == ""
    assert ok(b, "remember", "Next fact", "-l", "semantic", "-t", "x") == "global-sem-0004"


def test_the_post_merge_hook_renumbers_this_machines_entry(machines: tuple[Cli, Cli]) -> None:
    _a, b = machines
    install_hooks(b.root)
    pulled = sh_git(b.root, "pull", "-q", "--no-rebase", "origin", "main")
    assert pulled.returncode == 0, pulled.stderr
    assert "this machine's entry (global/semantic/staging.md) is now global-sem-0003" in pulled.stderr
    subject = git(b.root, "log", "-1", "--format=%s").strip()
    assert subject.startswith("renumber: global-sem-0002 -> global-sem-0003")
    assert_settled(b)


def test_check_fix_renumbers_after_a_pull_without_hooks(machines: tuple[Cli, Cli]) -> None:
    _a, b = machines
    pulled = sh_git(b.root, "pull", "-q", "--no-rebase", "origin", "main")
    assert pulled.returncode == 0, pulled.stderr
    check = b("check")
    assert check.exit_code == 2 and "duplicate Id global-sem-0002" in check.output
    fixed = b("check", "--fix")
    assert fixed.exit_code == 0, fixed.output
    assert "renumbered global-sem-0002 -> global-sem-0003" in fixed.output
    assert_settled(b)


def test_check_fix_renumbers_after_a_pull_with_rebase(machines: tuple[Cli, Cli]) -> None:
    _a, b = machines
    pulled = sh_git(b.root, "pull", "-q", "--rebase", "origin", "main")
    assert pulled.returncode == 0, pulled.stderr
    assert b.json("check", "--fix")["renumbered"] == {"global-sem-0002": "global-sem-0003"}  # type: ignore[index]
    assert_settled(b)


def test_the_post_rewrite_hook_renumbers_after_a_pull_with_rebase(machines: tuple[Cli, Cli]) -> None:
    _a, b = machines
    install_hooks(b.root)
    pulled = sh_git(b.root, "pull", "-q", "--rebase", "origin", "main")
    assert pulled.returncode == 0, pulled.stderr
    assert "this machine's entry (global/semantic/staging.md) is now global-sem-0003" in pulled.stderr
    assert git(b.root, "log", "-1", "--format=%s").startswith("renumber: global-sem-0002 -> global-sem-0003")
    assert_settled(b)


def test_the_pre_commit_hook_no_longer_blocks_after_the_merge(machines: tuple[Cli, Cli]) -> None:
    _a, b = machines
    install_hooks(b.root)
    assert sh_git(b.root, "pull", "-q", "--no-rebase", "origin", "main").returncode == 0
    with open(b.root / "global/semantic/staging.md", "a", encoding="utf-8") as handle:
        handle.write("\n## Staging has 2 replicas\nTwo.\n")
    done = sh_git(b.root, "commit", "-qam", "by hand")
    assert done.returncode == 0, done.stderr
    assert "global-sem-0004" in (b.root / "global/semantic/staging.md").read_text()


def test_sync_names_the_new_id_in_its_merge_commit_and_rewrites_no_commit(machines: tuple[Cli, Cli]) -> None:
    a, b = machines
    local = git(b.root, "rev-parse", "HEAD").strip()
    published = git(a.root, "rev-parse", "HEAD").strip()
    ok(b, "sync")
    body = git(b.root, "log", "-1", "--format=%B")
    assert body.startswith("sync: merge origin/main") and "- global-sem-0002 -> global-sem-0003" in body
    assert git(b.root, "rev-parse", "HEAD^1").strip() == local  # this machine's commit, as made
    assert git(b.root, "rev-parse", "HEAD^2").strip() == published
    assert_settled(b)


def test_a_merge_without_collisions_commits_nothing_of_its_own(tmp_path: Path, bare_remote: Path) -> None:
    a, b = two_machines(tmp_path, bare_remote, ("Staging runs Postgres 15", "db"))
    install_hooks(b.root)
    ok(a, "remember", "Deploys go through CI", "-l", "semantic", "-t", "ci")
    assert sh_git(a.root, "push", "-q", "origin", "main").returncode == 0
    ok(b, "remember", "Lunch is at noon", "-l", "episodic", "-t", "life")
    with open(b.root / "global/semantic/db.md", "a", encoding="utf-8") as handle:
        handle.write("\nStill being written.\n")  # a hand edit left uncommitted
    pulled = sh_git(b.root, "pull", "-q", "--no-rebase", "origin", "main")
    assert pulled.returncode == 0, pulled.stderr
    assert git(b.root, "log", "-1", "--format=%s").startswith("Merge")
    assert git(b.root, "status", "--porcelain").strip() == "M global/semantic/db.md"


def test_an_id_no_published_commit_holds_is_left_for_a_person(machines: tuple[Cli, Cli]) -> None:
    _a, b = machines
    copy = (b.root / "global/semantic/staging.md").read_text(encoding="utf-8")
    (b.root / "global/semantic/copy.md").write_text(copy.replace("Postgres 16", "Postgres 17"),
                                                   encoding="utf-8")
    subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "add", "-A"], cwd=b.root, check=True)
    subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "commit", "-qm", "copy"], cwd=b.root,
                   check=True, env={**os.environ, **GIT_ENV})
    fixed = b("check", "--fix")
    assert fixed.exit_code == 2 and "duplicate Id global-sem-0002" in fixed.output
    assert "renumbered" not in fixed.output


@pytest.mark.parametrize("mover", ["a", "b"])
def test_a_plain_pull_puts_an_entry_moved_on_one_machine_and_edited_on_the_other_back_together(
        tmp_path: Path, bare_remote: Path, mover: str) -> None:
    """The merge driver sees one file at a time, so the merge commit holds the entry twice; the
    post-merge hook merges the two files again as `gitmem sync` does: one entry, with the edit,
    where it was moved to."""
    a, b = two_machines(tmp_path, bare_remote, ("Backups run at 02:00", "ops"),
                        ("Disks are checked weekly", "ops"))
    install_hooks(b.root)
    moving, editing = (a, b) if mover == "a" else (b, a)
    ok(moving, "mv", "global-sem-0001", "--topic", "backups")
    ops = editing.root / "global/semantic/ops.md"
    ops.write_text(ops.read_text().replace("Backups run at 02:00", "Backups run at 03:30"))
    assert sh_git(editing.root, "commit", "-qam", "edit by hand").returncode == 0
    assert sh_git(a.root, "push", "-q", "origin", "main").returncode == 0
    pulled = sh_git(b.root, "pull", "-q", "--no-rebase", "origin", "main")
    assert pulled.returncode == 0, pulled.stderr
    assert "the edit went with it" in pulled.stderr
    moved = (b.root / "global/semantic/backups.md").read_text()
    left = (b.root / "global/semantic/ops.md").read_text()
    assert "03:30" in moved and "global-sem-0001" in moved
    assert "global-sem-0001" not in left and "Disks are checked weekly" in left
    assert b("check").exit_code == 0
    assert git(b.root, "status", "--porcelain") == ""
