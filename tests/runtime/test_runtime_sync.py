"""Runtime memory on two machines: two stores cloned from one bare remote, `gitmem sync` between."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

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
