"""Batch mode of the write transaction: many verb calls, one commit, ids and dedup still right."""

from __future__ import annotations

import pytest

from gitmem.errors import InvalidInputError
from gitmem.store.store import Store
from gitmem.verbs.entries import forget, remember
from gitmem.verbs.reads import list_entries, show
from support import commit_count, git


def test_a_batch_of_writes_is_one_commit_with_distinct_ids(store: Store) -> None:
    before = commit_count(store.root)
    with store.batch("consolidate") as txn:
        first = remember(store, "The API listens on 8080", "semantic", topic="api")
        second = remember(store, "The API is written in Go", "semantic", topic="api")
        third = remember(store, "Deploys go through staging", "procedural", topic="deploy")
        txn.message = "consolidate: 3 entries"
    assert commit_count(store.root) == before + 1
    assert git(store.root, "log", "-1", "--format=%s").strip() == "consolidate: 3 entries"
    assert [first.id, second.id, third.id] == ["global-sem-0001", "global-sem-0002", "global-pro-0001"]
    assert git(store.root, "status", "--porcelain").strip() == ""
    # The layer index counts both entries of the topic written inside the batch.
    index = (store.root / "global" / "semantic.md").read_text(encoding="utf-8")
    assert "— 2 entries" in index


def test_dedup_and_supersede_see_writes_made_earlier_in_the_batch(store: Store) -> None:
    with store.batch("consolidate") as txn:
        first = remember(store, "Staging listens on 5433", "semantic", topic="staging")
        again = remember(store, "staging   listens on 5433", "semantic", topic="staging")
        newer = remember(store, "Staging listens on 5434", "semantic", topic="staging",
                         supersedes=first.id)
        txn.message = "consolidate: batch"
    assert again.id == first.id and not again.changed
    assert newer.id == "global-sem-0002"
    assert show(store, first.id or "")["fields"]["Superseded-by"] == newer.id
    live = [r["id"] for r in list_entries(store, layer="semantic")]
    assert live == [newer.id]
    # A later ordinary write continues the numbering: the catalog holds the batch's entries.
    assert remember(store, "Staging runs Postgres 16", "semantic", topic="staging").id == "global-sem-0003"


def test_one_failing_write_does_not_sink_the_batch(store: Store) -> None:
    gone = remember(store, "The cache is Redis", "semantic").id or ""
    forget(store, gone)
    before = commit_count(store.root)
    with store.batch("consolidate") as txn:
        with pytest.raises(InvalidInputError):
            remember(store, "The cache is Redis", "semantic")  # forgotten: refused
        kept = remember(store, "The queue is RabbitMQ", "semantic")
        txn.message = "consolidate: one refused"
    assert commit_count(store.root) == before + 1
    assert show(store, kept.id or "")["status"] == "live"
