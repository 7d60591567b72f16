"""Hand edits of USER.md / MEMORY.md imported item by item, through the real CLI: a typed
duplicate is reported, an unrelated line in place of a deleted one is a removal plus an
addition, and `check` reports a line holding `§` as an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import Cli, git

PROJECTIONS = {"user": "global/runtime/USER.md", "memory": "global/runtime/MEMORY.md"}


def _records(root: Path, target: str) -> list[dict[str, str]]:
    data = json.loads((root / "global" / "runtime" / "memories.json").read_text(encoding="utf-8"))
    return [i for i in data["items"] if i["target"] == target]


def _seed(gm: Cli, target: str) -> Path:
    for text in ("Uses zsh with vi keys", "Prefers short answers"):
        assert gm("runtime", "add", text, "--target", target).exit_code == 0
    return gm.root / PROJECTIONS[target]


@pytest.mark.parametrize("target", sorted(PROJECTIONS))
def test_a_typed_duplicate_line_is_reported_not_silently_dropped(gm: Cli, target: str) -> None:
    path = _seed(gm, target)
    first = _records(gm.root, target)[0]
    path.write_text(path.read_text(encoding="utf-8") + "§\nUses zsh with vi keys\n", encoding="utf-8")
    done = gm("runtime", "add", "Works from Berlin", "--target", target)
    assert done.exit_code == 0, done.output
    assert f'not added: line 5 "Uses zsh with vi keys" is already {first["id"]}' in done.stdout
    assert [i["content"] for i in _records(gm.root, target)].count("Uses zsh with vi keys") == 1
    assert path.read_text(encoding="utf-8").count("Uses zsh with vi keys") == 1
    assert git(gm.root, "status", "--porcelain") == ""


@pytest.mark.parametrize("target", sorted(PROJECTIONS))
def test_an_unrelated_line_in_place_of_a_deleted_one_is_a_removal_and_an_addition(gm: Cli, target: str) -> None:
    path = _seed(gm, target)
    old = _records(gm.root, target)[0]
    path.write_text(path.read_text(encoding="utf-8").replace("Uses zsh with vi keys", "Deploys happen on Mondays"),
                    encoding="utf-8")
    done = gm("runtime", "add", "Works from Berlin", "--target", target)
    assert done.exit_code == 0, done.output
    assert f'removed {old["id"]}: "Uses zsh with vi keys"' in done.stdout
    assert 'added rt-' in done.stdout and 'Deploys happen on Mondays' in done.stdout
    assert "changed" not in done.stdout
    records = {i["content"]: i for i in _records(gm.root, target)}
    assert "Uses zsh with vi keys" not in records and records["Deploys happen on Mondays"]["id"] != old["id"]


def test_a_small_edit_of_a_line_is_still_a_change_of_its_item(gm: Cli) -> None:
    path = _seed(gm, "memory")
    old = _records(gm.root, "memory")[1]
    path.write_text(path.read_text(encoding="utf-8").replace("Prefers short answers", "Prefers short answers, always"),
                    encoding="utf-8")
    done = gm("runtime", "add", "Works from Berlin", "--target", "memory")
    assert f'changed {old["id"]}: "Prefers short answers" -> "Prefers short answers, always"' in done.stdout


@pytest.mark.parametrize("target", sorted(PROJECTIONS))
def test_check_reports_a_line_holding_the_separator(gm: Cli, target: str) -> None:
    path = _seed(gm, target)
    path.write_text(path.read_text(encoding="utf-8") + "§\nTabs § spaces\n", encoding="utf-8")
    found = gm("check")
    assert found.exit_code == 2
    assert f"{PROJECTIONS[target]}:5: contains §" in found.stdout
    status = gm.json("status")
    assert any(PROJECTIONS[target] in str(p) for p in status["problems"])  # type: ignore[index]
    path.write_text(path.read_text(encoding="utf-8").replace("Tabs § spaces", "Tabs and spaces"), encoding="utf-8")
    assert gm("check").exit_code == 0


@pytest.mark.parametrize("target", sorted(PROJECTIONS))
def test_two_similar_lines_swapped_by_hand_are_a_move_not_an_edit(gm: Cli, target: str) -> None:
    """Swapping two lines that read alike (the diff pairs each with the other as an edit): no
    text changed, so every item is kept as it was, ids and texts (one was lost)."""
    texts = ["Deploy staging with make deploy-staging", "Prefers short answers", "Uses zsh with vi keys",
             "Deploy production with make deploy-prod"]
    for text in texts:
        assert gm("runtime", "add", text, "--target", target).exit_code == 0
    before = {i["id"]: i["content"] for i in _records(gm.root, target)}
    path = gm.root / PROJECTIONS[target]
    text = path.read_text(encoding="utf-8")
    text = text.replace(texts[0], "@@").replace(texts[3], texts[0]).replace("@@", texts[3])
    path.write_text(text, encoding="utf-8")
    done = gm("runtime", "add", "Works from Berlin", "--target", target)
    assert done.exit_code == 0, done.output
    after = {i["id"]: i["content"] for i in _records(gm.root, target)}
    assert {k: v for k, v in after.items() if k in before} == before and len(after) == len(before) + 1


def test_a_record_block_copied_by_hand_with_its_id_is_an_item_of_its_own(gm: Cli) -> None:
    """Two records under one id in memories.json: the second reads with an id of its own (the
    same at every read), and removing it leaves the first (both went)."""
    assert gm("runtime", "add", "Deploy production with make deploy-prod").exit_code == 0
    path = gm.root / "global/runtime/memories.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["items"].append(dict(data["items"][0], content="Old scratch note, delete me"))
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    git(gm.root, "commit", "-qam", "a record block copied by hand")
    ids = [i["id"] for i in gm.json("runtime", "show", "--target", "memory")["scopes"][0]["items"]]  # type: ignore[index]
    assert len(ids) == len(set(ids)) == 2
    assert gm("runtime", "remove", "Old scratch note").exit_code == 0
    assert [i["content"] for i in _records(gm.root, "memory")] == ["Deploy production with make deploy-prod"]
    assert "deploy-prod" in (gm.root / "global/runtime/MEMORY.md").read_text(encoding="utf-8")


def test_an_item_gitmem_wrote_before_its_limit_was_lowered_is_no_broken_hand_edit(gm: Cli) -> None:
    """`runtime.itemLimitBytes` lowered below an item already written: `check` stays clean and a
    line typed by hand next to it is still imported (every runtime write was refused); a typed
    line over the limit is still refused."""
    long = "The release checklist: " + "run the tests, tag the commit, watch the canary; " * 6
    assert gm("runtime", "add", long).exit_code == 0
    assert gm("config", "set", "runtime.itemLimitBytes", "200").exit_code == 0
    assert gm("check").exit_code == 0
    path = gm.root / "global/runtime/MEMORY.md"
    path.write_text(path.read_text(encoding="utf-8") + "§\nStaging uses port 5433\n", encoding="utf-8")
    done = gm("runtime", "add", "Deploys go out at noon")
    assert done.exit_code == 0, done.output
    assert {"Staging uses port 5433", "Deploys go out at noon"} <= {i["content"] for i in _records(gm.root, "memory")}
    path.write_text(path.read_text(encoding="utf-8") + "§\n" + "x" * 300 + "\n", encoding="utf-8")
    assert gm("runtime", "add", "One more fact").exit_code == 2
