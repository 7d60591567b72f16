"""The store API: transactions, hand edits, recovery, catalog, migration, concurrency."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from gitmem.format.markdown import parse_topic_file
from gitmem.store.catalog import Catalog
from gitmem.store.store import Store
from gitmem.verbs.entries import forget, remember
from support import commit_count, git


def test_hand_edit_is_committed_separately_before_the_write(store: Store) -> None:
    first = remember(store, "A fact", "semantic", topic="notes")
    topic = store.root / "global/semantic/notes.md"
    original = topic.read_text()
    hand = original + "\n## Written by a person\nNo id yet.\n"
    topic.write_text(hand)
    before = commit_count(store.root)
    second = remember(store, "Another fact", "semantic", topic="other")
    assert commit_count(store.root) == before + 2
    subjects = git(store.root, "log", "-2", "--format=%s").splitlines()
    assert subjects[0].startswith("remember: global-sem-0003")
    assert subjects[1].startswith("hand edit")
    changed = git(store.root, "show", "--name-only", "--format=", "HEAD~1").split()
    assert set(changed) - {"global/semantic.md"} == {"global/semantic/notes.md"}
    in_commit = git(store.root, "show", "HEAD~1:global/semantic/notes.md")
    assert "## Written by a person\nNo id yet." in in_commit
    assert "**Id:** global-sem-0002" in in_commit  # normalized: the person's entry got an id
    assert in_commit.startswith(original)  # the person's bytes before it are untouched
    assert second.id == "global-sem-0003" and first.id == "global-sem-0001"
    assert "notes.md" not in git(store.root, "show", "--name-only", "--format=", "HEAD")


def test_ids_unique_across_topic_files_and_catalog_rebuild(store: Store) -> None:
    ids = [remember(store, f"fact {n}", "semantic", topic=f"t{n % 3}").id for n in range(9)]
    assert ids == [f"global-sem-{n:04d}" for n in range(1, 10)]
    store.close()
    (store.root / "state" / "catalog.sqlite").unlink()
    fresh = Store(store.root)
    assert remember(fresh, "fact after rebuild", "semantic", topic="t0").id == "global-sem-0010"
    fresh.close()


def test_catalog_follows_commits_made_with_plain_git(store: Store) -> None:
    remember(store, "one", "semantic", topic="a")
    topic = store.root / "global/semantic/a.md"
    topic.write_text(topic.read_text() + "\n## Hand\nbody\n\n**Id:** global-sem-0041\n**Created:** 2026-01-01\n**Verified:** 2026-01-01\n")
    git(store.root, "commit", "-qam", "by hand")
    assert remember(store, "two", "semantic", topic="b").id == "global-sem-0042"


def test_interrupted_write_is_recovered_under_its_own_name(store: Store) -> None:
    remember(store, "one", "semantic", topic="a")
    topic = store.root / "global/semantic/a.md"
    topic.write_text(topic.read_text() + "\n## Half done\nx\n\n**Id:** global-sem-0002\n**Created:** 2026-12-01\n**Verified:** 2026-12-01\n")
    (store.root / "state" / "journal.json").write_text(json.dumps({"verb": "remember", "paths": ["global/semantic/a.md"]}))
    remember(store, "two", "semantic", topic="b")
    subjects = git(store.root, "log", "-3", "--format=%s").splitlines()
    assert subjects[1] == "remember: recovered after an interrupted write"
    assert not (store.root / "state" / "journal.json").exists()
    assert git(store.root, "status", "--porcelain") == ""


def test_no_commit_when_nothing_changes(store: Store) -> None:
    entry = remember(store, "one", "semantic")
    forget(store, entry.id or "")
    before = commit_count(store.root)
    result = forget(store, entry.id or "")
    assert not result.changed and commit_count(store.root) == before


def test_legacy_layer_file_migrates_idempotently(store: Store) -> None:
    legacy = store.root / "global/procedural.md"
    legacy.write_text("# Procedural\n\n## Restart the worker\nRun make restart.\n\n**Id:** global-pro-0007\n**Topic:** ops\n\n## Without id\nSteps.\n")
    git(store.root, "add", "global/procedural.md")
    git(store.root, "commit", "-qm", "legacy layout")
    remember(store, "New procedure", "procedural", topic="ops")
    ops = parse_topic_file((store.root / "global/procedural/ops.md").read_text())
    general = parse_topic_file((store.root / "global/procedural/general.md").read_text())
    assert [e.id for e in ops.entries] == ["global-pro-0007", "global-pro-0009"]
    assert [e.id for e in general.entries] == ["global-pro-0008"]
    index = (store.root / "global/procedural.md").read_text()
    assert "## " not in index and "[ops](procedural/ops.md) — 2 entries" in index
    before = (store.root / "global/procedural/ops.md").read_text()
    remember(store, "Yet another", "procedural", topic="misc")
    assert (store.root / "global/procedural/ops.md").read_text() == before
    assert git(store.root, "status", "--porcelain") == ""


def test_index_md_is_never_overwritten(store: Store) -> None:
    index = store.root / "global/INDEX.md"
    index.write_text("# My own map\n")
    git(store.root, "commit", "-qam", "my map")
    remember(store, "x", "semantic")
    store.init()
    assert index.read_text() == "# My own map\n"


def test_init_adopts_existing_repo_without_losing_files(tmp_path: Path) -> None:
    root = tmp_path / "existing"
    root.mkdir()
    git(root, "init", "-b", "main")
    (root / "notes.txt").write_text("keep me\n")
    (root / ".gitignore").write_text("*.tmp\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "mine")
    Store(root).init()
    assert (root / "notes.txt").read_text() == "keep me\n"
    ignore = (root / ".gitignore").read_text()
    assert ignore.startswith("*.tmp\n") and "/index/" in ignore
    assert commit_count(root) == 2


def test_catalog_survives_corruption(store: Store) -> None:
    remember(store, "x", "semantic")
    store.close()
    (store.root / "state" / "catalog.sqlite").write_bytes(b"garbage" * 100)
    catalog = Catalog(store.root)
    assert catalog.is_empty()
    catalog.close()
    assert remember(Store(store.root), "y", "semantic").id == "global-sem-0002"


_WORKER = textwrap.dedent(
    """
    import sys
    from gitmem.store.store import Store
    from gitmem.verbs.entries import remember
    store = Store(sys.argv[1])
    for n in range(25):
        remember(store, f"worker {sys.argv[2]} fact {n}", "semantic", topic="shared")
    """
)


def test_four_processes_times_25_writes(store: Store) -> None:
    before = commit_count(store.root)
    workers = [subprocess.Popen([sys.executable, "-c", _WORKER, str(store.root), str(w)],
                                stderr=subprocess.PIPE, text=True) for w in range(4)]
    errors = [w.communicate()[1] for w in workers]
    assert all(w.returncode == 0 for w in workers), errors
    topic = parse_topic_file((store.root / "global/semantic/shared.md").read_text())
    ids = [e.id for e in topic.entries]
    assert len(ids) == 100 and len(set(ids)) == 100
    assert commit_count(store.root) == before + 100
    assert git(store.root, "status", "--porcelain") == ""


def test_layer_index_left_stale_by_plain_git_is_regenerated_by_the_next_write(store: Store) -> None:
    remember(store, "one", "semantic", topic="a")
    topic = store.root / "global/semantic/a.md"
    topic.write_text(topic.read_text() + "\n## By plain git\nbody\n\n**Id:** global-sem-0002\n**Created:** 2026-01-01\n**Verified:** 2026-01-01\n")
    git(store.root, "commit", "-qm", "plain git, no hooks", "--", "global/semantic/a.md")
    assert "1 entry" in (store.root / "global/semantic.md").read_text()
    remember(store, "an unrelated procedure", "procedural")
    assert "[a](semantic/a.md) — 2 entries" in (store.root / "global/semantic.md").read_text()
    assert git(store.root, "status", "--porcelain") == ""


def test_append_fast_path_keeps_catalog_and_layer_index_exact(store: Store) -> None:
    """A write into an existing topic file skips the parser; the catalog must match a re-read."""
    for n in range(3):
        remember(store, f"fact {n}", "semantic", topic="same")
    rows = store.catalog.db.execute(
        "SELECT id, num, hash, status FROM entries WHERE path=? ORDER BY id", ("global/semantic/same.md",)
    ).fetchall()
    count = store.catalog.topics("global", "semantic")[0].entries
    store.catalog.rebuild(store.all_topic_files(), store.read_file)
    again = store.catalog.db.execute(
        "SELECT id, num, hash, status FROM entries WHERE path=? ORDER BY id", ("global/semantic/same.md",)
    ).fetchall()
    assert rows == again and len(rows) == 3 and count == 3
    assert "[same](semantic/same.md) — 3 entries" in (store.root / "global/semantic.md").read_text()
    assert remember(store, "fact 1", "semantic", topic="other").id == "global-sem-0002"  # dedup


def test_hand_made_workspace_folder_is_registered(store: Store) -> None:
    topic = store.root / "workspaces/by-hand/semantic/notes.md"
    topic.parent.mkdir(parents=True)
    topic.write_text("## Made in an editor\nA person created this workspace folder.\n")
    remember(store, "unrelated", "semantic")
    registry = json.loads((store.root / "memory.json").read_text())
    assert "by-hand" in registry["workspaces"]
    assert (store.root / "workspaces/by-hand/INDEX.md").is_file()
    committed = git(store.root, "show", "--name-only", "--format=", "HEAD~1").split()
    assert "memory.json" in committed and "workspaces/by-hand/semantic/notes.md" in committed
    assert "**Id:** by-hand-sem-0001" in topic.read_text()
    assert git(store.root, "status", "--porcelain") == ""
