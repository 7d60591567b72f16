"""SYSTEM.md describes the store as it is after every write, not as it was at init."""

from __future__ import annotations

from gitmem.store.store import Store
from gitmem.verbs.entries import remember
from support import Cli, git


def holdings(store: Store) -> list[str]:
    text = (store.root / "SYSTEM.md").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.startswith("| global | ")
            or line.startswith("| — |")]


def test_every_write_commits_a_current_system_doc(store: Store) -> None:
    assert holdings(store) == ["| — | — | 0 | 0 |"]
    for number in range(3):
        remember(store, f"Fact {number} of five", "semantic", topic=f"t{number % 2}")
    assert holdings(store) == ["| global | semantic | 2 | 3 |"]
    assert "SYSTEM.md" in git(store.root, "show", "--name-only", "--format=", "HEAD").split()
    assert git(store.root, "status", "--porcelain") == ""


def test_the_write_after_a_hand_edit_brings_the_system_doc_up_to_date(store: Store, gm: Cli) -> None:
    remember(store, "A fact written by the verb", "semantic", topic="notes")
    path = store.root / "global" / "semantic" / "notes.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n## Written by hand\nNo id yet.\n",
                    encoding="utf-8")
    assert gm("status").exit_code == 0
    remember(store, "Another fact", "procedural", topic="steps")
    assert "SYSTEM.md" in git(store.root, "show", "--name-only", "--format=", "HEAD").split()
    assert holdings(store) == ["| global | procedural | 1 | 1 |", "| global | semantic | 1 | 2 |"]


def test_a_folder_named_system_md_does_not_stop_a_write(store: Store) -> None:
    git(store.root, "rm", "-q", "SYSTEM.md")
    git(store.root, "commit", "-qm", "drop SYSTEM.md")
    (store.root / "SYSTEM.md").mkdir()
    result = remember(store, "Still written", "semantic", topic="notes")
    assert result.id == "global-sem-0001"
    assert any("SYSTEM.md" in note for note in store.notes)
