"""`gitmem refresh` with fake models: keep, update, forget; the list without a model."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from fakemodels import fake_model
from gitmem.consolidate.refresh import refresh, stale_entries
from gitmem.models import config
from gitmem.store.store import Store
from gitmem.verbs.entries import remember
from gitmem.verbs.reads import show
from support import Cli, commit_count


def _old_entries(root: Path) -> list[str]:
    """Three volatile entries written 40 days ago, one fresh one, one expired."""
    past = Store(root, clock=lambda: datetime(2026, 10, 20, 12, 0))
    ids = [remember(past, text, "semantic", topic="staging", volatility="volatile").id or ""
           for text in ("Staging RabbitMQ listens on port 5673", "The staging VM has 4 GB of RAM",
                        "Deploys freeze on Fridays this month")]
    past.close()
    now = Store(root)
    remember(now, "Production runs Postgres 16", "semantic", topic="db")
    ids.append(remember(now, "The migration window is open", "semantic", until="2026-11-01").id or "")
    now.close()
    return ids


def test_stale_and_expired_entries_are_found_expired_first(store: Store) -> None:
    ids = _old_entries(store.root)
    found = [r["id"] for r in stale_entries(store)]
    assert found == [ids[3], *ids[:3]]
    assert [r["id"] for r in stale_entries(store, limit=2)] == found[:2]


def test_without_a_model_the_list_is_printed_for_review(gm: Cli) -> None:
    ids = _old_entries(gm.root)
    before = commit_count(gm.root)
    result = gm("refresh")
    assert result.exit_code == 0
    assert "4 entries to review" in result.output and all(i in result.output for i in ids)
    assert "[STALE " in result.output and "[EXPIRED]" in result.output
    assert commit_count(gm.root) == before


def test_the_model_keeps_updates_and_forgets_in_one_commit(store: Store, tmp_path: Path) -> None:
    ids = _old_entries(store.root)
    config.add_rung(store.root, "good", fake_model(tmp_path, "good"))
    before = commit_count(store.root)
    report = refresh(store)
    assert report.result == "refreshed" and commit_count(store.root) == before + 1
    # The fake model answers KEEP, UPDATE, FORGET in turn: expired, then the three stale ones.
    assert report.kept == [ids[3], ids[2]] and report.forgotten == [ids[1]]
    assert list(report.updated) == [ids[0]]
    kept = show(store, ids[2])
    assert kept["fields"]["Verified"] == store.today().isoformat() and kept["freshness"] == "fresh"
    revived = show(store, ids[3])
    assert "Valid-until" not in revived["fields"] and revived["status"] == "live"
    assert show(store, ids[1])["status"] == "forgotten"
    old, new = show(store, ids[0]), show(store, report.updated[ids[0]])
    assert old["status"] == "superseded" and new["fields"]["Supersedes"] == ids[0]
    assert new["body"] == "Staging RabbitMQ now listens on port 5674." and new["topic"] == "staging"
    assert new["fields"]["Source"] == f"refresh:{ids[0]}"
    assert refresh(store).candidates == []  # nothing stale is left


def test_reasoning_and_echo_do_not_act_on_entries(store: Store, tmp_path: Path) -> None:
    ids = _old_entries(store.root)
    config.add_rung(store.root, "thinker", fake_model(tmp_path, "reasoning"))
    report = refresh(store)
    assert report.result == "refreshed"
    assert report.kept == [ids[3], ids[2]] and report.forgotten == [ids[1]]


def test_truncated_json_is_salvaged(store: Store, tmp_path: Path) -> None:
    _old_entries(store.root)
    config.add_rung(store.root, "cut", fake_model(tmp_path, "truncated-json"))
    report = refresh(store)
    assert report.result == "refreshed" and 1 <= len(report.kept) < 4
    assert report.updated == {} and report.forgotten == []


def test_prose_is_a_failure_kept_for_diagnosis(gm: Cli, tmp_path: Path) -> None:
    ids = _old_entries(gm.root)
    config.add_rung(gm.root, "chatty", fake_model(tmp_path, "prose"))
    result = gm("refresh", "--json")
    assert result.exit_code == 3 and json.loads(result.stdout)["result"] == "parse-failed"
    failed = list((gm.root / "logs").glob("refresh-failed-*.txt"))
    assert len(failed) == 1 and f"### entry {ids[0]}" in failed[0].read_text()


@pytest.mark.parametrize("kind", ["empty", "slow", "fail"])
def test_a_silent_model_is_an_error(gm: Cli, tmp_path: Path, kind: str) -> None:
    _old_entries(gm.root)
    config.add_rung(gm.root, "quiet", fake_model(tmp_path, kind), timeout=0.5)
    result = gm("refresh")
    assert result.exit_code == 3 and "no model returned text" in result.stderr


@pytest.mark.parametrize("kind", ["none", "only-done"])
def test_a_model_that_judges_nothing_changes_nothing(store: Store, tmp_path: Path, kind: str) -> None:
    ids = _old_entries(store.root)
    config.add_rung(store.root, "unsure", fake_model(tmp_path, kind))
    before = commit_count(store.root)
    if kind == "none":
        report = refresh(store)
        assert report.result == "refreshed" and sorted(report.untouched) == sorted(ids)
    else:  # "only DONE" lines answer a consolidation prompt: for refresh they are no answer
        with pytest.raises(Exception, match="no model returned text"):
            refresh(store)
    assert commit_count(store.root) == before
