"""One new Id on two machines, in two topic files, merged with plain git (not `gitmem sync`): the
post-merge hook, or `gitmem check --fix`, renumbers this machine's entry and its links."""

from __future__ import annotations

from pathlib import Path

import pytest
from sync.machines import commit_by_hand, duplicated, id_places, ok, sh_git, two_machines

from gitmem.githooks.install import install as install_hooks
from support import Cli, git


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


def test_an_id_no_published_commit_holds_is_settled_by_history(machines: tuple[Cli, Cli]) -> None:
    """Nothing published tells which copy is this machine's: the one committed first keeps the
    Id, the later one (a different entry) takes the next free number."""
    _a, b = machines
    copy = (b.root / "global/semantic/staging.md").read_text(encoding="utf-8")
    (b.root / "global/semantic/copy.md").write_text(copy.replace("Postgres 16", "Postgres 17"),
                                                   encoding="utf-8")
    commit_by_hand(b.root, "copy")
    assert b("check").exit_code == 2
    fixed = b("check", "--fix")
    assert fixed.exit_code == 0, fixed.output
    assert "the copy in global/semantic/copy.md" not in fixed.output
    assert "in global/semantic/copy.md; that one is now global-sem-0003" in fixed.output
    assert "Postgres 16" in ok(b, "show", "global-sem-0002")
    assert "Postgres 17" in ok(b, "show", "global-sem-0003")
    assert b("check").exit_code == 0 and git(b.root, "status", "--porcelain") == ""


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


@pytest.mark.parametrize("pull", ["--no-rebase", "--rebase"])
def test_collisions_crossing_files_are_each_renumbered_on_this_machine(
        tmp_path: Path, bare_remote: Path, pull: str) -> None:
    """Both Ids collide across files, and one file holds this machine's entry of one collision
    and the published entry of the other: sides are decided entry by entry, not file by file."""
    a, b = two_machines(tmp_path, bare_remote, ("Fact one", "p"), ("Fact two", "q"))
    install_hooks(a.root)
    assert ok(b, "remember", "B three", "-l", "semantic", "-t", "q") == "global-sem-0003"
    assert ok(b, "remember", "B four", "-l", "semantic", "-t", "p") == "global-sem-0004"
    ok(b, "sync")
    assert ok(a, "remember", "A three", "-l", "semantic", "-t", "p") == "global-sem-0003"
    assert ok(a, "remember", "A four", "-l", "semantic", "-t", "r") == "global-sem-0004"
    pulled = sh_git(a.root, "pull", "-q", pull, "origin", "main")
    assert pulled.returncode == 0, pulled.stderr
    assert duplicated(a.root) == {}, id_places(a.root)
    assert "B three" in ok(a, "show", "global-sem-0003")  # published Ids never change
    assert "B four" in ok(a, "show", "global-sem-0004")
    mine = {ok(a, "show", ident).splitlines()[0] for ident in ("global-sem-0005", "global-sem-0006")}
    assert any("A three" in line for line in mine) and any("A four" in line for line in mine)
    assert a("check").exit_code == 0
    assert git(a.root, "status", "--porcelain") == ""


def published_duplicate(machines: tuple[Cli, Cli]) -> Cli:
    """b pulled without hooks and pushed: global-sem-0002 is in ci.md and staging.md in the
    commit every machine holds, so nothing tells which copy is a machine's own."""
    _a, b = machines
    assert sh_git(b.root, "pull", "-q", "--no-rebase", "origin", "main").returncode == 0
    assert sh_git(b.root, "push", "-q", "origin", "main").returncode == 0
    assert set(duplicated(b.root)) == {"global-sem-0002"}
    return b


def test_a_duplicate_id_in_the_last_commit_never_stops_the_store(machines: tuple[Cli, Cli]) -> None:
    b = published_duplicate(machines)
    staging = b.root / "global/semantic/staging.md"
    staging.write_text(staging.read_text().replace("Postgres 16", "Postgres 16.4"))  # a hand edit
    written = b("remember", "Lunch is at noon", "-l", "semantic", "-t", "life")
    assert written.exit_code == 0, written.output
    assert git(b.root, "status", "--porcelain") == ""  # the hand edit was committed along
    assert "Postgres 16.4" in git(b.root, "show", "HEAD~1:global/semantic/staging.md")
    synced = b("sync")
    assert synced.exit_code == 0, synced.output
    assert "duplicate Id global-sem-0002 in global/semantic/ci.md, global/semantic/staging.md" in synced.output
    install_hooks(b.root)
    staging.write_text(staging.read_text().replace("Postgres 16.4", "Postgres 16.5"))
    committed = sh_git(b.root, "commit", "-qam", "by hand")
    assert committed.returncode == 0, committed.stderr
    assert "as in the last commit" in committed.stderr
    # A duplicate the edit brings is never committed: a write leaves that file out (and goes
    # on, with a note naming it), and the hook refuses a plain commit of it.
    copy = (b.root / "global/semantic/db.md").read_text().replace("Postgres 15", "Postgres 14")
    (b.root / "global/semantic/copy.md").write_text(copy)
    held = b("remember", "Another fact", "-l", "semantic", "-t", "life")
    assert held.exit_code == 0 and "duplicate Id global-sem-0001" in held.output
    assert "global/semantic/copy.md" not in sh_git(b.root, "ls-files").stdout
    assert sh_git(b.root, "add", "-A").returncode == 0
    assert sh_git(b.root, "commit", "-qm", "copy").returncode != 0


def test_check_fix_settles_a_duplicate_every_machine_holds(machines: tuple[Cli, Cli]) -> None:
    b = published_duplicate(machines)
    check = b("check")
    assert check.exit_code == 2 and "duplicate Id global-sem-0002" in check.output
    fixed = b("check", "--fix")
    assert fixed.exit_code == 0, fixed.output
    # ci.md's copy was committed first (a's commit, merged in): it keeps the Id.
    assert ("global-sem-0002: in global/semantic/ci.md and, for another entry committed later, in "
            "global/semantic/staging.md; that one is now global-sem-0003") in fixed.output
    assert "Deploys go through CI" in ok(b, "show", "global-sem-0002")
    assert "Postgres 16" in ok(b, "show", "global-sem-0003")
    assert duplicated(b.root) == {}
    assert b("check").exit_code == 0 and git(b.root, "status", "--porcelain") == ""
    assert sh_git(b.root, "push", "-q", "origin", "main").returncode == 0  # settled for everyone


def test_check_fix_removes_the_later_of_two_identical_copies(machines: tuple[Cli, Cli]) -> None:
    _a, b = machines
    db = (b.root / "global/semantic/db.md").read_text()
    (b.root / "global/semantic/copy.md").write_text(db.replace("topic: db", "topic: copy")
                                                    .replace("# db", "# copy"))
    commit_by_hand(b.root, "copy")
    fixed = b("check", "--fix")
    assert fixed.exit_code == 0, fixed.output
    assert "the later copy, in global/semantic/copy.md, was removed" in fixed.output
    assert not (b.root / "global/semantic/copy.md").exists()
    assert duplicated(b.root) == {}
    assert "Postgres 15" in ok(b, "show", "global-sem-0001")
    assert b("check").exit_code == 0 and git(b.root, "status", "--porcelain") == ""
