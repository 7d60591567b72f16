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


def _rows(root) -> list[str]:
    text = (root / "SYSTEM.md").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.startswith("| ") and " | — | " in line]


def test_the_holdings_count_runtime_items_and_documents_per_scope(gm: Cli, tmp_path) -> None:
    gm("runtime", "add", "Prefers short answers", "--target", "user")
    gm("runtime", "add", "The laptop has 16 GB", "--target", "memory")
    gm("runtime", "add", "Build with make", "--scope", "workspace", workspace="shop")
    runbook = tmp_path / "runbook.md"
    runbook.write_text("# Deploy runbook\nSteps.\n", encoding="utf-8")
    first = gm.json("doc", "add", str(runbook), "--title", "Runbook", "--scope", "global")
    gm("doc", "add", str(runbook), "--title", "Runbook two", "--scope", "global")
    gm("doc", "add", str(runbook), "--title", "Shop runbook", "--scope", "workspace", workspace="shop")
    assert gm("doc", "archive", first["id"]).exit_code == 0  # type: ignore[index]
    assert _rows(gm.root) == [
        "| global | documents (active) | — | 1 |", "| global | documents (archived) | — | 1 |",
        "| global | runtime (memory) | — | 1 |", "| global | runtime (user) | — | 1 |",
        "| shop | documents (active) | — | 1 |", "| shop | runtime (memory) | — | 1 |",
    ]
    assert git(gm.root, "status", "--porcelain") == ""  # each count joined its write's commit
    gm("runtime", "remove", "Prefers short answers", "--target", "user")
    assert "| global | runtime (user) | — | 1 |" not in _rows(gm.root)


def test_a_merge_renders_the_tiers_both_machines_hold(gm: Cli, bare_remote, tmp_path) -> None:
    from support import run_gitmem

    assert gm("remote", "set", str(bare_remote)).exit_code == 0
    gm("runtime", "add", "Machine A's note", "--target", "memory")
    assert gm("sync").exit_code == 0
    other = tmp_path / "other"
    assert run_gitmem("--root", str(other), "init", "--remote", str(bare_remote)).returncode == 0
    assert run_gitmem("--root", str(other), "runtime", "add", "Machine B's note", "--target", "user").returncode == 0
    gm("runtime", "add", "Machine A's second note", "--target", "memory")
    assert run_gitmem("--root", str(other), "sync").returncode == 0
    assert gm("sync").exit_code == 0  # a merge: both sides changed memories.json
    assert _rows(gm.root) == ["| global | runtime (memory) | — | 2 |", "| global | runtime (user) | — | 1 |"]
    assert git(gm.root, "status", "--porcelain") == ""
