"""Two new Ids of this machine, in two topic files, that the other machine also used, merged by
plain git: the merge driver merges one file at a time, so it renumbers both entries to the same
next number, which the other machine's commit gives to a third entry. Three copies of one Id,
two of them this machine's: each of those takes a number of its own, whether the post-merge or
post-rewrite hook, `gitmem sync` (the hooks killed before they ran) or `check --fix` settles it,
and whichever machine pulls. (Found by the soak bench: bench/bench_soak.py, seed 27.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from sync.machines import duplicated, id_places, ok, sh_git, tree_of, two_machines

from gitmem.githooks.install import install as install_hooks
from support import Cli, git

SEM = "global/semantic"
PULLER_FACTS = {"life": "Lunch moved to 12:30", "ops": "Pager rotates on Mondays"}
PUSHER_FACTS = {"life": "The office closes at 18:00", "ops": "Backups are encrypted",
                "ci": "The CI cache is kept 7 days"}


@pytest.fixture
def crossing(tmp_path: Path, bare_remote: Path) -> tuple[Cli, Cli]:
    """(pusher, puller): both hold 0001-0003 in life, ops and ci. The pusher then wrote
    0004-0006 in life, ops, ci and published them; the puller wrote its own 0004 and 0005 in
    life and ops, committed and unpublished."""
    a, b = two_machines(tmp_path, bare_remote, ("Stand-up is at 9:30", "life"),
                        ("Deploys go out on Tuesdays", "ops"), ("CI runs on every push", "ci"))
    return a, b


def write(machine: Cli, facts: dict[str, str]) -> list[str]:
    return [ok(machine, "remember", text, "-l", "semantic", "-t", topic) for topic, text in facts.items()]


def prepare(pusher: Cli, puller: Cli) -> None:
    assert write(pusher, PUSHER_FACTS) == ["global-sem-0004", "global-sem-0005", "global-sem-0006"]
    assert sh_git(pusher.root, "push", "-q", "origin", "main").returncode == 0
    assert write(puller, PULLER_FACTS) == ["global-sem-0004", "global-sem-0005"]


def pull(machine: Cli, *options: str, hooks: bool = True) -> str:
    quiet = () if hooks else ("-c", "core.hooksPath=/dev/null")
    done = sh_git(machine.root, *quiet, "pull", "-q", *options, "origin", "main")
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stderr


def assert_each_fact_once(machine: Cli) -> None:
    """Every Id in one file, every fact under one Id, the pusher's (published) Ids unchanged."""
    assert duplicated(machine.root) == {}, id_places(machine.root)
    texts = {path.stem: path.read_text(encoding="utf-8") for path in (machine.root / SEM).glob("*.md")}
    for topic, fact in (*PULLER_FACTS.items(), *PUSHER_FACTS.items()):
        assert texts[topic].count(f"## {fact}") == 1, (fact, texts[topic])
    for ident, fact in zip(("global-sem-0004", "global-sem-0005", "global-sem-0006"),
                           PUSHER_FACTS.values(), strict=True):
        assert fact in ok(machine, "show", ident)
    numbers = sorted(id_places(machine.root))
    assert numbers == [f"global-sem-{n:04d}" for n in range(1, 9)], numbers
    check = machine("check")
    assert check.exit_code == 0, check.output
    assert git(machine.root, "status", "--porcelain") == ""


def share(puller: Cli, pusher: Cli) -> None:
    """The puller publishes the settled merge; the pusher takes it: the same tree on both."""
    assert sh_git(puller.root, "push", "-q", "origin", "main").returncode == 0
    ok(pusher, "sync")
    assert tree_of(pusher.root) == tree_of(puller.root)
    assert_each_fact_once(pusher)


@pytest.mark.parametrize("puller_name", ["a", "b"])
@pytest.mark.parametrize("options", [("--no-rebase",), ("--rebase",)])
def test_the_hooks_give_each_of_this_machines_copies_its_own_number(
        crossing: tuple[Cli, Cli], puller_name: str, options: tuple[str, ...]) -> None:
    a, b = crossing
    pusher, puller = (b, a) if puller_name == "a" else (a, b)
    install_hooks(puller.root)
    prepare(pusher, puller)
    said = pull(puller, *options)
    assert "global-sem-0007" in said and "global-sem-0008" in said, said
    assert_each_fact_once(puller)
    share(puller, pusher)


@pytest.mark.parametrize("settle", ["sync", "check --fix"])
def test_a_merge_whose_hook_never_ran_is_settled_by_sync_or_check_fix(
        crossing: tuple[Cli, Cli], settle: str) -> None:
    pusher, puller = crossing
    prepare(pusher, puller)
    pull(puller, "--no-rebase", hooks=False)  # the merge driver ran; the post-merge hook did not
    assert sorted(id_places(puller.root)["global-sem-0006"]) == [f"{SEM}/ci.md", f"{SEM}/life.md",
                                                                  f"{SEM}/ops.md"]
    ok(puller, *settle.split())
    assert_each_fact_once(puller)
    if settle == "check --fix":
        assert sh_git(puller.root, "push", "-q", "origin", "main").returncode == 0
        ok(pusher, "sync")
        assert_each_fact_once(pusher)
    else:
        ok(pusher, "sync")
        assert tree_of(pusher.root) == tree_of(puller.root)
        assert_each_fact_once(pusher)
