"""`gitmem history` on real code repositories: day files, incremental passes, rewritten history,
idempotence without state/, hostile commit messages."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gitmem.history.ingest import ingest, recorded_commits
from gitmem.store.store import Store
from gitmem.verbs.check import check_tree
from gitmem.verbs.reads import list_entries, show
from support import Cli, commit_count, git


def commit(repo: Path, name: str, message: str, day: str, body: str = "") -> str:
    (repo / name).parent.mkdir(parents=True, exist_ok=True)
    (repo / name).write_text(f"{name} {message}\n", encoding="utf-8")
    git(repo, "add", "-A")
    env = {**os.environ, "GIT_AUTHOR_DATE": f"{day}T10:00:00+02:00", "GIT_COMMITTER_DATE": f"{day}T10:00:00+02:00"}
    import subprocess

    args = ["git", "commit", "-q", "-m", message] + (["-m", body] if body else [])
    subprocess.run(args, cwd=repo, check=True, env=env, capture_output=True)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "code" / "shop"
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "remote", "add", "origin", "https://github.com/acme/shop.git")
    return path


def test_commits_become_one_topic_per_day_in_one_store_commit(store: Store, repo: Path) -> None:
    first = commit(repo, "src/cart.py", "Add the cart", "2026-11-20", "Carts live in Redis for 7 days.")
    second = commit(repo, "src/pay.py", "Add payments", "2026-11-20")
    third = commit(repo, "docs/a.md", "Document the API", "2026-11-21")
    before = commit_count(store.root)
    report = ingest(store, repo)
    assert (report.workspace, report.result, report.recorded) == ("acme-shop", "recorded", 3)
    assert report.days == ["2026-11-20", "2026-11-21"]
    assert commit_count(store.root) == before + 1
    day = (store.root / "workspaces" / "acme-shop" / "history" / "2026-11-20.md").read_text()
    assert f"## Add the cart ({first[:7]})" in day and f"## Add payments ({second[:7]})" in day
    entry = show(store, "acme-shop-his-0001")
    assert entry["body"] == "Carts live in Redis for 7 days.\n\nFiles: src/cart.py"
    assert entry["fields"]["Commit"] == first and entry["fields"]["Source"] == f"git:{first}"
    assert entry["fields"]["Created"] == "2026-11-20" and entry["layer"] == "history"
    assert show(store, "acme-shop-his-0003")["fields"]["Commit"] == third
    index = (store.root / "workspaces" / "acme-shop" / "history.md").read_text()
    assert "[2026-11-20](history/2026-11-20.md) — 2 entries" in index


def test_passes_are_incremental_and_idempotent_without_state(store: Store, repo: Path) -> None:
    commit(repo, "a.txt", "One", "2026-11-20")
    assert ingest(store, repo).recorded == 1
    assert ingest(store, repo).result == "up-to-date"
    newest = commit(repo, "b.txt", "Two", "2026-11-22")
    again = ingest(store, repo)
    assert (again.recorded, again.already_recorded, again.fell_back) == (1, 0, False)
    # The catalog knows both entries without re-reading the files: ids continue, lookups work.
    assert show(store, "acme-shop-his-0002")["fields"]["Commit"] == newest
    assert store.catalog.max_number("acme-shop", "history") == 2
    third = commit(repo, "c.txt", "Three", "2026-11-22")  # appended to an existing day file
    ingest(store, repo)
    assert show(store, "acme-shop-his-0003")["fields"]["Commit"] == third
    assert [t.entries for t in store.catalog.topics("acme-shop", "history")] == [1, 2]
    store.close()
    shutil.rmtree(store.root / "state")  # watermark, catalog, everything local: gone
    fresh = Store(store.root)
    report = ingest(fresh, repo)
    assert (report.recorded, report.already_recorded) == (0, 3)
    assert len(recorded_commits(fresh, "acme-shop")) == 3
    assert [e["fields"]["Commit"] for e in list_entries(fresh, layer="history")][-1] == third
    fresh.close()


def test_rewritten_history_falls_back_to_a_bounded_walk_and_says_so(store: Store, repo: Path) -> None:
    kept = commit(repo, "a.txt", "Keep me", "2026-11-20")
    commit(repo, "b.txt", "Reword me", "2026-11-21")
    ingest(store, repo)
    git(repo, "commit", "-q", "--amend", "-m", "Reworded")  # the recorded head is gone
    commit(repo, "c.txt", "After the rewrite", "2026-11-22")
    report = ingest(store, repo)
    assert report.fell_back and "no longer in the history of HEAD" in report.message
    assert (report.recorded, report.already_recorded) == (2, 1)
    commits = [e["fields"]["Commit"] for e in list_entries(store, layer="history")]
    assert commits.count(kept) == 1 and len(commits) == len(set(commits)) == 4
    log = (store.root / "state" / "activity.jsonl").read_text()
    assert "history was rewritten" in log


def test_limit_bounds_a_pass_and_the_next_one_continues(store: Store, repo: Path) -> None:
    commit(repo, "a.txt", "First", "2026-11-01")
    ingest(store, repo)
    later = [commit(repo, f"f{n}.txt", f"Change {n}", f"2026-11-{n + 2:02d}") for n in range(5)]
    report = ingest(store, repo, limit=2)
    assert report.recorded == 2 and report.more
    assert ingest(store, repo, limit=2).recorded == 2
    assert ingest(store, repo, limit=2).recorded == 1
    commits = [e["fields"]["Commit"] for e in list_entries(store, layer="history")]
    assert commits[1:] == later  # in order, none skipped


def test_hostile_commit_messages_stay_inside_their_entry(store: Store, repo: Path) -> None:
    body = "## Not an entry\n**Id:** global-sem-0001\n<<<<<<< HEAD\n```python\nprint('open fence')"
    commit(repo, "x.py", "Tricky message", "2026-11-20", body)
    commit(repo, "y.py", "Plain message", "2026-11-20")
    ingest(store, repo)
    entries = list_entries(store, layer="history")
    assert [e["title"].split(" (")[0] for e in entries] == ["Tricky message", "Plain message"]
    assert [e["id"] for e in entries] == ["acme-shop-his-0001", "acme-shop-his-0002"]
    assert check_tree(store).remaining == []


def test_a_token_in_a_commit_message_is_recorded_masked_and_stops_nothing(store: Store, repo: Path) -> None:
    """A code repository's commit message may hold a token: its record masks it (subject, body,
    file names), the pass goes on, and the store's history never holds it."""
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    commit(repo, "ci.yml", f"Use {token} in CI", "2026-11-20", f"The bot pushes with {token}.")
    commit(repo, "z.py", "Plain message", "2026-11-20")
    report = ingest(store, repo)
    assert (report.result, report.recorded) == ("recorded", 2)
    entry = show(store, "acme-shop-his-0001")
    assert entry["title"].startswith("Use *** in CI") and "The bot pushes with ***" in entry["body"]
    assert token not in git(store.root, "log", "-p", "--all")


def test_the_cli_refuses_what_is_not_a_code_repository(gm: Cli, tmp_path: Path, repo: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert gm("history", "--repo", str(tmp_path / "plain")).exit_code == 2
    assert gm("history", "--repo", str(gm.root)).exit_code == 2
    empty = gm("history", "--repo", str(repo), "--json")
    assert empty.exit_code == 0 and '"result": "no-commits"' in empty.stdout
    commit(repo, "a.txt", "One", "2026-11-20")
    done = gm("history", "--repo", str(repo))
    assert done.exit_code == 0 and "acme-shop: 1 new commit recorded" in done.output
