"""A refused runtime write changes nothing: not a file, not the index, not the history; and a
memories.json gitmem cannot read is never overwritten or committed by a runtime write."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gitmem.runtime.verbs import add
from gitmem.store.store import Store
from support import Cli, git

MEMORY = "global/runtime/MEMORY.md"
RECORDS = "global/runtime/memories.json"
SHOP = "workspaces/shop/runtime/MEMORY.md"


def state(root: Path) -> tuple[str, str, str, dict[str, bytes]]:
    """HEAD, the index, the working tree's status and every runtime file's bytes."""
    files = {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.glob("**/runtime/*"))}
    return (git(root, "rev-parse", "HEAD"), git(root, "ls-files", "-s"),
            git(root, "status", "--porcelain"), files)


@pytest.fixture
def seeded(gm: Cli) -> Cli:
    for text in ("First fact", "Second fact"):
        assert gm("runtime", "add", text).exit_code == 0
    assert gm("runtime", "add", "Prefers tabs", "--target", "user").exit_code == 0
    return gm


WRITES = [
    ["runtime", "add", "Third fact"],
    ["runtime", "replace", "First fact", "First fact, changed"],
    ["runtime", "remove", "Second fact"],
]


@pytest.mark.parametrize("args", WRITES)
def test_a_pasted_separator_line_refuses_the_write_and_nothing_is_committed(seeded: Cli,
                                                                            args: list[str]) -> None:
    path = seeded.root / MEMORY
    path.write_text(path.read_text(encoding="utf-8") + "pasted § line\n", encoding="utf-8")
    (seeded.root / "global" / "notes.txt").write_text("a pending hand edit elsewhere\n")
    before = state(seeded.root)
    result = seeded(*args)
    assert result.exit_code == 2
    assert f"{MEMORY}:4: contains §" in result.stderr and "left as it is" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert state(seeded.root) == before  # no commit, no index entry, the file as it was typed


@pytest.mark.parametrize("args", [*WRITES, ["runtime", "add", "Likes vim", "--target", "user"]])
def test_an_unreadable_memories_json_is_refused_by_name_and_never_committed(seeded: Cli,
                                                                            args: list[str]) -> None:
    (seeded.root / RECORDS).write_text("[[\n", encoding="utf-8")
    before = state(seeded.root)
    result = seeded(*args)
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"gitmem: error: {RECORDS}:2: not valid JSON (Expecting value); "
                                     "fix it by hand or restore it with git")
    assert state(seeded.root) == before
    assert "[[" not in git(seeded.root, "show", f"HEAD:{RECORDS}")


def test_another_scope_goes_on_and_leaves_the_unreadable_file_uncommitted(seeded: Cli) -> None:
    (seeded.root / RECORDS).write_text("[[\n", encoding="utf-8")
    result = seeded("runtime", "add", "Shop runs on port 8080", "--scope", "workspace",
                    "--workspace", "shop")
    assert result.exit_code == 0, result.output
    assert (seeded.root / SHOP).read_text(encoding="utf-8") == "Shop runs on port 8080\n"
    assert f"{RECORDS}:2: not valid JSON" in result.stderr and "left as it is" in result.stderr
    assert (seeded.root / RECORDS).read_text(encoding="utf-8") == "[[\n"
    assert "[[" not in git(seeded.root, "show", f"HEAD:{RECORDS}")
    assert git(seeded.root, "status", "--porcelain").split() == ["M", RECORDS]
    # Fixed, the file is read again, and the next write commits what was pending.
    git(seeded.root, "checkout", "--", RECORDS)
    assert seeded("runtime", "add", "Third fact").exit_code == 0
    assert git(seeded.root, "status", "--porcelain") == ""


def test_a_rule_breaking_line_in_another_scope_is_not_committed_by_this_write(seeded: Cli) -> None:
    assert seeded("runtime", "add", "Shop fact", "--scope", "workspace", "--workspace", "shop").exit_code == 0
    (seeded.root / SHOP).write_text("Shop fact\n§\nbad § line\n", encoding="utf-8")
    result = seeded("runtime", "add", "Third fact")
    assert result.exit_code == 0, result.output
    assert f"{SHOP}:3: contains §" in result.stderr
    assert "bad § line" not in git(seeded.root, "show", f"HEAD:{SHOP}")
    assert (seeded.root / SHOP).read_text(encoding="utf-8") == "Shop fact\n§\nbad § line\n"


def test_empty_text_is_refused_in_one_plain_line(gm: Cli) -> None:
    result = gm("runtime", "add", "  ")
    assert result.exit_code == 2
    assert result.stderr.strip() == "gitmem: error: runtime memory text is empty; nothing changed"


def test_items_added_within_one_second_leave_oldest_first(store: Store) -> None:
    registry = json.loads((store.root / "memory.json").read_text(encoding="utf-8"))
    registry.setdefault("settings", {})["runtime"] = {"memoryLimitBytes": 100}
    (store.root / "memory.json").write_text(json.dumps(registry, indent=2) + "\n", encoding="utf-8")
    git(store.root, "commit", "-qam", "budget")
    store.clock = lambda: datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)  # every add in one second
    names = [f"Item number {n:02d} with some padding" for n in range(1, 7)]  # 32 bytes each
    moved = [m.item.content for name in names for m in add(store, name).moved]
    assert moved == names[:4]  # each add makes room by moving the oldest out
    kept = [line for line in (store.root / MEMORY).read_text(encoding="utf-8").splitlines() if line != "§"]
    assert kept == names[-2:]
