"""A hand edit of USER.md / MEMORY.md is measured against the text gitmem last wrote, even when a
write committed it as it was first, and even when the edited file happens to equal a text gitmem
wrote long ago (an emptied file, a line put back). Through the real CLI, for both projections."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import Cli, git

PROJECTIONS = {"user": "global/runtime/USER.md", "memory": "global/runtime/MEMORY.md"}
OTHER = {"user": "memory", "memory": "user"}


def _contents(root: Path, target: str) -> list[str]:
    data = json.loads((root / "global" / "runtime" / "memories.json").read_text(encoding="utf-8"))
    return [i["content"] for i in data["items"] if i["target"] == target]


def _add(gm: Cli, text: str, target: str) -> None:
    done = gm("runtime", "add", text, "--target", target)
    assert done.exit_code == 0, done.output


def _rewrite(path: Path, old: str, new: str | None) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if line != old] if new is None else [new if line == old else line for line in lines]
    path.write_text("".join(f"{line}\n" for line in kept), encoding="utf-8")


@pytest.mark.parametrize("target", sorted(PROJECTIONS))
def test_emptying_the_file_after_an_imported_edit_removes_the_item(gm: Cli, target: str) -> None:
    """The write that imports a change commits memories.json alone; the next hand edit (here: the
    file emptied, as it was before its first item) starts from that rendering."""
    path = gm.root / PROJECTIONS[target]
    _add(gm, "Works on the billing service", OTHER[target])  # the projection does not exist yet
    _add(gm, "Prefers tabs", target)
    _rewrite(path, "Prefers tabs", "Prefers tabs, four wide")
    _add(gm, "Deploys on Mondays", OTHER[target])  # imports the change
    assert _contents(gm.root, target) == ["Prefers tabs, four wide"]
    path.write_text("", encoding="utf-8")
    _rewrite(gm.root / PROJECTIONS[OTHER[target]], "Deploys on Mondays", "Deploys on Tuesdays")
    done = gm("runtime", "add", "Reviews on Fridays", "--target", OTHER[target])
    assert done.exit_code == 0, done.output
    assert _contents(gm.root, target) == []
    assert "Deploys on Tuesdays" in _contents(gm.root, OTHER[target])
    assert path.read_text(encoding="utf-8").strip() == ""
    assert git(gm.root, "status", "--porcelain") == ""


@pytest.mark.parametrize("target", sorted(PROJECTIONS))
def test_a_line_put_back_to_an_old_text_is_a_change_not_a_file_left_behind(gm: Cli, target: str) -> None:
    path = gm.root / PROJECTIONS[target]
    _add(gm, "Uses zsh", target)
    assert gm("runtime", "replace", "Uses zsh", "Uses fish", "--target", target).exit_code == 0
    _rewrite(path, "Uses fish", "Uses zsh")  # the text gitmem wrote two commits ago
    git(gm.root, "commit", "-q", "-am", "back to zsh")  # committed as it is, by plain git
    _add(gm, "Lives in Lisbon", OTHER[target])
    assert _contents(gm.root, target) == ["Uses zsh"]
    assert path.read_text(encoding="utf-8").splitlines() == ["Uses zsh"]


def test_a_deletion_committed_by_plain_git_is_imported_on_a_fresh_clone(gm: Cli, tmp_path: Path,
                                                                       bare_remote: Path) -> None:
    """The base comes from committed history only, so another machine decides alike."""
    assert gm("remote", "set", str(bare_remote)).exit_code == 0
    path = gm.root / PROJECTIONS["user"]
    _add(gm, "Prefers tabs", "user")
    _add(gm, "Writes in British English", "user")
    _rewrite(path, "Prefers tabs", "Prefers tabs, four wide")
    _add(gm, "Deploys on Mondays", "memory")
    _rewrite(path, "Prefers tabs, four wide", None)
    git(gm.root, "commit", "-q", "-am", "no more tabs")
    assert gm("sync").exit_code == 0
    other = Cli(tmp_path / "other", gm.runner)
    assert other("init", "--remote", str(bare_remote)).exit_code == 0
    _add(other, "Reviews on Fridays", "memory")
    assert _contents(other.root, "user") == ["Writes in British English"]
