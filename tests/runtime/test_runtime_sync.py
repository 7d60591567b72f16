"""Runtime memory on two machines: two stores cloned from one bare remote, `gitmem sync` between."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from support import Cli, git

RECORDS = "global/runtime/memories.json"
MEMORY = "global/runtime/MEMORY.md"


@pytest.fixture
def machines(tmp_path: Path, bare_remote: Path) -> tuple[Cli, Cli]:
    """Laptop and desktop: the first creates the store and pushes, the second clones it."""
    laptop = Cli(tmp_path / "laptop", CliRunner())
    assert laptop("init", "--remote", str(bare_remote)).exit_code == 0
    assert laptop("runtime", "add", "Shared fact one").exit_code == 0
    assert laptop("runtime", "add", "Shared fact two").exit_code == 0
    assert laptop("sync").exit_code == 0
    desktop = Cli(tmp_path / "desktop", CliRunner())
    assert desktop("init", "--remote", str(bare_remote)).exit_code == 0
    return laptop, desktop


def items(cli: Cli) -> dict[str, str]:
    data = json.loads((cli.root / RECORDS).read_text(encoding="utf-8"))
    return {item["id"]: item["content"] for item in data["items"]}


def ident(cli: Cli, content: str) -> str:
    return next(key for key, value in items(cli).items() if value == content)


def test_different_records_edited_on_two_machines_merge_cleanly(machines: tuple[Cli, Cli]) -> None:
    laptop, desktop = machines
    assert laptop("runtime", "replace", "one", "Shared fact one, edited on the laptop").exit_code == 0
    assert laptop("runtime", "add", "Laptop only fact").exit_code == 0
    assert desktop("runtime", "replace", "two", "Shared fact two, edited on the desktop").exit_code == 0
    assert desktop("runtime", "add", "Desktop only fact").exit_code == 0
    assert laptop("sync").exit_code == 0
    synced = desktop("sync")
    assert synced.exit_code == 0, synced.output
    assert laptop("sync").exit_code == 0
    wanted = {"Shared fact one, edited on the laptop", "Shared fact two, edited on the desktop",
              "Laptop only fact", "Desktop only fact"}
    for cli in (laptop, desktop):
        assert set(items(cli).values()) == wanted
        projection = (cli.root / MEMORY).read_text(encoding="utf-8").split("\n§\n")
        assert {line.strip() for line in projection} == wanted
        assert git(cli.root, "status", "--porcelain") == ""
        assert cli("conflicts").exit_code == 1


def test_same_record_edited_differently_is_a_listed_conflict(machines: tuple[Cli, Cli]) -> None:
    laptop, desktop = machines
    record = ident(laptop, "Shared fact one")
    laptop("runtime", "replace", "one", "Fact one as the laptop says")
    desktop("runtime", "replace", "one", "Fact one as the desktop says")
    assert laptop("sync").exit_code == 0
    synced = desktop("sync")
    assert synced.exit_code == 3 and "conflict" in synced.stderr
    listed = desktop.json("conflicts")
    assert isinstance(listed, list) and len(listed) == 1
    assert listed[0]["path"] == RECORDS and listed[0]["entry_id"] == record
    data = json.loads((desktop.root / RECORDS).read_text(encoding="utf-8"))
    both = next(item for item in data["items"] if item["id"] == record)
    assert both["content"] == "Fact one as the desktop says"
    assert both["conflict"]["theirs"]["content"] == "Fact one as the laptop says"
    assert "Fact one as the desktop says" in (desktop.root / MEMORY).read_text(encoding="utf-8")
    card = desktop("context", "--cwd", str(desktop.root.parent)).stdout
    assert "conflict: two machines changed it" in card
    # The other machine receives the same record in conflict and lists it too.
    assert laptop("sync").exit_code == 3
    assert [c["entry_id"] for c in laptop.json("conflicts")] == [record]  # type: ignore[union-attr]
    resolved = laptop("runtime", "resolve", record, "--keep", "theirs")
    assert resolved.exit_code == 0, resolved.output
    assert items(laptop)[record] == "Fact one as the laptop says"
    assert laptop("sync").exit_code == 0 and desktop("sync").exit_code == 0
    assert items(desktop)[record] == "Fact one as the laptop says"
    assert desktop("conflicts").exit_code == 1


def test_a_hand_edit_not_yet_imported_survives_a_merging_sync(machines: tuple[Cli, Cli]) -> None:
    laptop, desktop = machines
    desktop("runtime", "add", "Desktop fact")
    assert desktop("sync").exit_code == 0
    path = laptop.root / MEMORY
    path.write_text(path.read_text(encoding="utf-8") + "Typed by hand on the laptop\n", encoding="utf-8")
    synced = laptop("sync")
    assert synced.exit_code == 0, synced.output
    assert set(items(laptop).values()) == {"Shared fact one", "Shared fact two", "Desktop fact",
                                           "Typed by hand on the laptop"}
    assert "Typed by hand on the laptop" in path.read_text(encoding="utf-8")
    assert desktop("sync").exit_code == 0
    assert "Typed by hand on the laptop" in items(desktop).values()


def test_plain_git_pull_leaves_no_record_behind(machines: tuple[Cli, Cli]) -> None:
    laptop, desktop = machines
    assert laptop("hooks", "install").exit_code == 0
    desktop("runtime", "add", "Desktop fact")
    desktop("runtime", "remove", "two")
    assert desktop("sync").exit_code == 0
    laptop("runtime", "add", "Laptop fact")
    git(laptop.root, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    merged = {"Shared fact one", "Desktop fact", "Laptop fact"}
    assert set(items(laptop).values()) == merged
    # The projection git left is a placeholder: the next write renders it from the records.
    assert laptop("runtime", "add", "After the pull").exit_code == 0
    assert set(items(laptop).values()) == merged | {"After the pull"}
    lines = (laptop.root / MEMORY).read_text(encoding="utf-8").split("\n§\n")
    assert {line.strip() for line in lines} == merged | {"After the pull"}


# -- a fresh clone, and which version is whose ----------------------------------------------------
USER = "global/runtime/USER.md"


class Machine(Cli):
    """A store whose commits and conflict labels carry its own machine name."""

    def __init__(self, root: Path, name: str) -> None:
        super().__init__(root, CliRunner())
        self.name = name

    def __call__(self, *args: str, workspace: str | None = None,  # type: ignore[override]
                 env: dict[str, str] | None = None) -> Result:
        return super().__call__(*args, workspace=workspace, env={"GITMEM_MACHINE": self.name, **(env or {})})


@pytest.fixture
def named(tmp_path: Path, bare_remote: Path) -> tuple[Machine, Machine]:
    alpha, beta = Machine(tmp_path / "alpha", "alpha"), Machine(tmp_path / "beta", "beta")
    assert alpha("init", "--remote", str(bare_remote)).exit_code == 0
    assert alpha("runtime", "add", "Item one", "--target", "user").exit_code == 0
    assert alpha("runtime", "add", "Fact one").exit_code == 0
    assert alpha("sync").exit_code == 0
    assert beta("init", "--remote", str(bare_remote)).exit_code == 0
    return alpha, beta


@pytest.mark.parametrize("write", [["sync"], ["runtime", "add", "x", "--target", "user"]])
def test_a_hand_edit_on_a_fresh_clone_is_imported_not_rendered_over(named: tuple[Machine, Machine],
                                                                    write: list[str]) -> None:
    alpha, beta = named
    assert not (beta.root / "state" / "runtime.json").exists()
    path = beta.root / USER
    path.write_text(path.read_text(encoding="utf-8") + "Prefers tabs\n", encoding="utf-8")
    result = beta(*write)
    assert result.exit_code == 0, result.output
    assert "Prefers tabs" in path.read_text(encoding="utf-8")
    data = json.loads((beta.root / RECORDS).read_text(encoding="utf-8"))
    assert [i["content"] for i in data["items"] if i["target"] == "user"][:2] == ["Item one", "Prefers tabs"]
    assert beta("sync").exit_code == 0 and alpha("sync").exit_code == 0
    assert "Prefers tabs" in (alpha.root / USER).read_text(encoding="utf-8")


def test_a_hand_edit_committed_as_it_was_is_imported_on_every_machine(named: tuple[Machine, Machine]) -> None:
    alpha, beta = named
    path = alpha.root / MEMORY
    path.write_text(path.read_text(encoding="utf-8") + "Committed with plain git\n", encoding="utf-8")
    git(alpha.root, "commit", "-qam", "plain edit")  # no hook: memories.json does not know it
    git(alpha.root, "push", "-q", "origin", "main")
    assert beta("sync").exit_code == 0  # a clone that never saw the file before the edit
    shown = beta.json("runtime", "show", "--target", "memory")
    assert isinstance(shown, dict)
    assert [i["content"] for i in shown["scopes"][0]["items"]] == ["Fact one", "Committed with plain git"]
    assert beta("runtime", "add", "Fact from beta").exit_code == 0
    assert set(items(beta).values()) == {"Item one", "Fact one", "Committed with plain git", "Fact from beta"}
    assert alpha("runtime", "add", "Fact two").exit_code == 0
    assert set(items(alpha).values()) == {"Item one", "Fact one", "Committed with plain git", "Fact two"}
    for cli in (alpha, beta, alpha):
        assert cli("sync").exit_code == 0
    for cli in (alpha, beta):
        assert sorted(items(cli).values()) == sorted(
            {"Item one", "Fact one", "Committed with plain git", "Fact two", "Fact from beta"})


def _conflict(alpha: Machine, beta: Machine) -> str:
    """Both machines change Fact one; alpha pushes first, beta merges, alpha fast-forwards."""
    record = ident(alpha, "Fact one")
    assert alpha("runtime", "replace", "Fact one", "Fact one as alpha says").exit_code == 0
    assert beta("sync").exit_code == 0
    assert beta("runtime", "replace", "Fact one", "Fact one as beta says").exit_code == 0
    assert alpha("sync").exit_code == 0
    assert beta("sync").exit_code == 3  # beta merges
    assert alpha("sync").exit_code == 3  # alpha fast-forwards to beta's merge
    return record


@pytest.mark.parametrize(("who", "keep", "text"), [
    ("alpha", "ours", "Fact one as alpha says"), ("alpha", "theirs", "Fact one as beta says"),
    ("beta", "ours", "Fact one as beta says"), ("beta", "theirs", "Fact one as alpha says"),
])
def test_ours_is_the_version_of_the_machine_that_resolves(named: tuple[Machine, Machine], who: str,
                                                          keep: str, text: str) -> None:
    alpha, beta = named
    record = _conflict(alpha, beta)
    here = alpha if who == "alpha" else beta
    resolved = here("runtime", "resolve", record, "--keep", keep)
    assert resolved.exit_code == 0, resolved.output
    owner = text.split()[3]
    assert f"kept {owner}'s version (commit " in resolved.stdout
    assert items(here)[record] == text
    assert text in (here.root / MEMORY).read_text(encoding="utf-8")
    for cli in (here, alpha, beta, here):
        assert cli("sync").exit_code == 0
    assert items(alpha)[record] == items(beta)[record] == text


@pytest.mark.parametrize(("who", "keep", "text"), [
    ("alpha", "ours", "Fact one as alpha says"), ("alpha", "theirs", "Fact one as beta says"),
    ("beta", "ours", "Fact one as beta says"),
])
def test_the_top_level_resolve_keeps_the_same_version_as_runtime_resolve(
        named: tuple[Machine, Machine], who: str, keep: str, text: str) -> None:
    """`gitmem resolve ID --ours`, which the sync's message names, on either machine (alpha
    fast-forwarded to beta's merge) keeps what `gitmem runtime resolve --keep ours` keeps."""
    alpha, beta = named
    record = _conflict(alpha, beta)
    here = alpha if who == "alpha" else beta
    resolved = here("resolve", record, f"--{keep}")
    assert resolved.exit_code == 0, resolved.output
    assert items(here)[record] == text
    assert text.split()[3] + "'s version" in git(here.root, "log", "-1", "--format=%s")


def test_conflicts_name_each_sides_machine_on_both_machines(named: tuple[Machine, Machine]) -> None:
    alpha, beta = named
    record = _conflict(alpha, beta)
    assert alpha("runtime", "add", "A later fact").exit_code == 0  # the merge is no longer HEAD's
    for cli, other in ((alpha, "beta"), (beta, "alpha")):
        listed = cli.json("conflicts")
        assert isinstance(listed, list) and [c["entry_id"] for c in listed] == [record]
        sides = {listed[0]["ours"], listed[0]["theirs"]}
        assert any(s.startswith(f"{cli.name} (this machine), commit ") for s in sides), sides
        assert any(s.startswith(f"{other}, commit ") for s in sides), sides


def test_in_a_pull_with_rebase_ours_is_still_this_machine(named: tuple[Machine, Machine]) -> None:
    """git swaps its sides in a rebase; a record conflict the merge driver leaves does not: "ours"
    is the machine that pulled, as after a sync or a merge."""
    alpha, beta = named
    record = ident(alpha, "Fact one")
    assert beta("sync").exit_code == 0 and beta("hooks", "install").exit_code == 0
    assert alpha("runtime", "replace", "Fact one", "Fact one as alpha says").exit_code == 0
    assert alpha("sync").exit_code == 0
    assert beta("runtime", "replace", "Fact one", "Fact one as beta says").exit_code == 0
    pulled = subprocess.run(["git", "pull", "-q", "--rebase", "origin", "main"], cwd=beta.root,
                            capture_output=True, text=True, env={**os.environ, "GITMEM_MACHINE": "beta"})
    assert pulled.returncode == 0, pulled.stderr
    [listed] = beta.json("conflicts")  # type: ignore[misc]
    assert str(listed["ours"]).startswith("beta") and str(listed["theirs"]).startswith("alpha")
    resolved = beta("runtime", "resolve", record, "--keep", "ours")
    assert resolved.exit_code == 0 and "kept beta's version" in resolved.stdout, resolved.output
    assert items(beta)[record] == "Fact one as beta says"
