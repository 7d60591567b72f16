"""`gitmem consolidate` with fake models: the line protocol, JSON recovery, attribution, retries."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fakemodels import fake_model
from gitmem.capture.digests import (
    CONSOLIDATED,
    PENDING,
    Digest,
    list_digests,
    new_digest_id,
    read_digest,
    write_digest,
)
from gitmem.consolidate.run import consolidate
from gitmem.errors import ModelError
from gitmem.models import config
from gitmem.store.store import Store
from gitmem.verbs.reads import list_entries, show
from support import Cli, commit_count, git

START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def make_digest(root: Path, n: int, workspace: str = "acme-api", status: str = PENDING) -> str:
    when = START + timedelta(minutes=n)
    digest = Digest(new_digest_id(root, f"session{n:02d}", when), {
        "session": f"session{n:02d}", "format": "claude-code", "workspace": workspace, "branch": "main",
        "first": when.isoformat(), "last": when.isoformat(), "captured": when.isoformat(),
        "summary": "model:good", "status": status, "attempts": "0", "consolidated": "",
    }, ["src/queue/worker.py"], [("2026-12-01", [
        "**Delivery:** the worker acks only after the handler commits.",
        "**Prefetch:** 10, because 50 starved the other consumers.",
    ])])
    write_digest(root, digest)
    return digest.id


def test_a_good_reply_becomes_attributed_entries_in_one_commit(store: Store, tmp_path: Path) -> None:
    config.add_rung(store.root, "good", fake_model(tmp_path, "good"))
    first, second = make_digest(store.root, 1), make_digest(store.root, 2)
    before = commit_count(store.root)
    report = consolidate(store)
    assert report.result == "consolidated" and report.model == "good"
    assert report.consolidated == [first, second] and report.still_pending == []
    assert commit_count(store.root) == before + 1
    assert git(store.root, "log", "-1", "--format=%s").strip() == "consolidate: 3 entries from 2 digests"
    written = {(e["scope"], e["layer"], e["topic"]) for e in report.entries}
    # The workspace key is the one resolved from the session's folder, not the model's guess.
    assert written == {("acme-api", "semantic", "queue"), ("global", "learnings", "rabbitmq"),
                       ("acme-api", "codebase", "src/queue/worker.py")}
    # The second digest repeats the first one's facts: dedup writes nothing new for them.
    assert sum(e["changed"] for e in report.entries) == 3 and len(report.entries) == 6
    entry = show(store, "acme-api-sem-0001")
    assert entry["fields"]["Source"] == f"digest:{first}"
    assert entry["fields"]["Importance"] == "high"
    codebase = show(store, "acme-api-cod-0001")
    assert codebase["topic"] == "src/queue/worker.py" and codebase["fields"]["Source"].startswith("digest:")
    for digest_id in (first, second):
        digest = read_digest(store.root, digest_id)
        assert digest is not None and digest.status == CONSOLIDATED and digest.header["consolidated"]
    last = (store.root / "logs" / "consolidate-last.txt").read_text()
    assert f"### digest {first}" in last and f"DONE {first}" in last
    assert git(store.root, "status", "--porcelain").strip() == ""


def test_only_done_lines_are_success_with_zero_entries(store: Store, tmp_path: Path) -> None:
    config.add_rung(store.root, "terse", fake_model(tmp_path, "only-done"))
    digest = make_digest(store.root, 1)
    before = commit_count(store.root)
    report = consolidate(store)
    assert report.result == "consolidated" and report.entries == [] and report.consolidated == [digest]
    assert commit_count(store.root) == before
    assert consolidate(store).digests == []  # handled: not retried


def test_prose_is_kept_as_a_failure_retried_then_needs_review(gm: Cli, tmp_path: Path) -> None:
    config.add_rung(gm.root, "chatty", fake_model(tmp_path, "prose"))
    digest = make_digest(gm.root, 1)
    for attempt in (1, 2):
        result = gm("consolidate", "--json")
        assert result.exit_code == 3
        data = json.loads(result.stdout)
        assert data["parseFailed"] is True and data["still_pending"] == [digest]
        assert read_digest(gm.root, digest).attempts == attempt  # type: ignore[union-attr]
    failed = sorted((gm.root / "logs").glob("consolidate-failed-*.txt"))
    assert len(failed) == 2
    kept = failed[0].read_text()
    assert f"### digest {digest}" in kept and "These sessions were productive" in kept
    third = json.loads(gm("consolidate", "--json").stdout)
    assert third["needs_review"] == [digest]
    assert read_digest(gm.root, digest).status == "needs-review"  # type: ignore[union-attr]
    status = gm.json("status")
    assert isinstance(status, dict)
    assert status["needsReview"] == [digest] and status["pending"] == 0
    assert status["lastConsolidation"]["result"] == "parse-failed"
    assert "need review" in gm("status").output


def test_a_truncated_json_reply_is_salvaged(store: Store, tmp_path: Path) -> None:
    config.add_rung(store.root, "cut", fake_model(tmp_path, "truncated-json"))
    first, second = make_digest(store.root, 1), make_digest(store.root, 2)
    report = consolidate(store)
    assert report.recovery == "salvaged"
    assert len(report.entries) >= 2 and all(e["layer"] == "semantic" for e in report.entries)
    # Entries were salvaged for both digests, so both count as attributed.
    assert set(report.consolidated) == {first, second}


def test_a_sloppy_json_reply_is_repaired(store: Store, tmp_path: Path) -> None:
    config.add_rung(store.root, "json", fake_model(tmp_path, "json"))
    digest = make_digest(store.root, 1)
    report = consolidate(store)
    assert report.recovery == "repaired" and report.consolidated == [digest]
    assert [(e["scope"], e["layer"]) for e in report.entries] == [("acme-api", "procedural")]


def test_reasoning_and_an_echoed_prompt_do_not_sink_or_pollute_the_pass(store: Store, tmp_path: Path) -> None:
    config.add_rung(store.root, "thinker", fake_model(tmp_path, "reasoning"))
    digest = make_digest(store.root, 1)
    report = consolidate(store)
    assert report.result == "consolidated" and report.consolidated == [digest]
    texts = [show(store, e["id"])["body"] for e in report.entries]
    assert not any("made-up" in t for t in texts)
    assert len(report.entries) == 3


def test_one_bad_line_never_sinks_the_batch(store: Store, tmp_path: Path) -> None:
    config.add_rung(store.root, "sloppy", fake_model(tmp_path, "bad-line"))
    digest = make_digest(store.root, 1)
    report = consolidate(store)
    assert [e["topic"] for e in report.entries] == ["queue"]
    assert sorted(r["reason"] for r in report.rejected) == ["unknown digest 'not-a-digest'", "unknown layer 'gossip'"]
    assert report.consolidated == [digest]


def test_an_unattributed_digest_stays_pending_and_is_retried(store: Store, tmp_path: Path) -> None:
    config.add_rung(store.root, "partial", fake_model(tmp_path, "partial"))
    first, second = make_digest(store.root, 1), make_digest(store.root, 2)
    report = consolidate(store)
    assert report.consolidated == [first] and report.still_pending == [second]
    assert read_digest(store.root, second).attempts == 1  # type: ignore[union-attr]
    config.add_rung(store.root, "partial", fake_model(tmp_path, "only-done"))
    assert consolidate(store).consolidated == [second]


@pytest.mark.parametrize("kind", ["empty", "fail", "slow"])
def test_a_failing_ladder_leaves_the_digests_untouched(gm: Cli, tmp_path: Path, kind: str) -> None:
    config.add_rung(gm.root, "mute", fake_model(tmp_path, kind), timeout=0.5)
    digest = make_digest(gm.root, 1)
    result = gm("consolidate")
    assert result.exit_code == 3 and "no model returned text" in result.stderr
    assert read_digest(gm.root, digest).attempts == 0  # type: ignore[union-attr]
    config.remove_rung(gm.root, "mute")
    with pytest.raises(ModelError, match="no model is configured"):
        consolidate(Store(gm.root))


def test_decisions_keep_their_shape_and_codebase_topics_come_from_paths(store: Store, tmp_path: Path) -> None:
    digest = make_digest(store.root, 1)
    script = tmp_path / "decider.sh"
    script.write_text("#!/bin/sh\ncat >/dev/null\n"
                      f"echo '- [{digest} | workspace:acme-api | decisions | high] queue :: Ack after the "
                      f"handler commits because a crash must not lose jobs'\necho 'DONE {digest}'\n")
    script.chmod(0o755)
    config.add_rung(store.root, "decider", str(script))
    report = consolidate(store)
    entry = show(store, report.entries[0]["id"])
    assert entry["layer"] == "decisions" and entry["title"] == "Ack after the handler commits"
    assert entry["decision"]["rationale"] == "A crash must not lose jobs"


def test_pruning_keeps_the_newest_fifty_consolidated_and_every_pending(store: Store, tmp_path: Path) -> None:
    done = [make_digest(store.root, n, status=CONSOLIDATED) for n in range(55)]
    pending = make_digest(store.root, 99)
    config.add_rung(store.root, "terse", fake_model(tmp_path, "only-done"))
    report = consolidate(store, limit=1)
    assert report.consolidated == [pending]
    assert report.pruned == done[:6]  # 56 consolidated now: the oldest 6 go
    left = {d.id for d in list_digests(store.root)}
    assert len(left) == 50 and pending in left and done[-1] in left
    assert list_entries(store) == []


def test_no_durable_content_for_the_whole_batch_settles_it(store: Store, tmp_path: Path) -> None:
    config.add_rung(store.root, "picky", fake_model(tmp_path, "nothing"))
    digests = [make_digest(store.root, 1), make_digest(store.root, 2)]
    report = consolidate(store)
    assert report.result == "consolidated" and report.entries == [] and report.consolidated == digests


def test_a_file_that_is_not_a_digest_is_left_alone(store: Store, tmp_path: Path) -> None:
    (store.root / "digests").mkdir(exist_ok=True)
    (store.root / "digests" / "README.md").write_text("# my notes about digests\n- keep these\n")
    digest = make_digest(store.root, 1)
    assert [d.id for d in list_digests(store.root)] == [digest]


def test_a_digest_a_fact_of_which_could_not_be_written_stays_for_a_retry(store: Store, tmp_path: Path) -> None:
    """The topic file a fact goes to holds a hand edit that cannot be committed (a conflict
    marker): the other facts are written, the digest stays pending, and once the file is fixed
    the next pass writes the missing fact, and nothing twice."""
    config.add_rung(store.root, "good", fake_model(tmp_path, "good"))
    digest = make_digest(store.root, 1)
    topic = store.root / "workspaces/acme-api/semantic/queue.md"
    topic.parent.mkdir(parents=True)
    topic.write_text("# queue\n\n<<<<<<< mine\n## Half-settled\nText.\n")
    report = consolidate(store)
    assert report.write_failed and digest not in report.consolidated
    assert read_digest(store.root, digest).status == PENDING  # type: ignore[union-attr]
    written = {e["layer"] for e in report.entries if e["changed"]}
    assert written == {"learnings", "codebase"}
    topic.write_text("# queue\n\n## Half-settled\nText.\n")
    again = consolidate(store)
    assert again.consolidated == [digest] and not again.write_failed
    assert [e["layer"] for e in again.entries if e["changed"]] == ["semantic"]
    assert "acks only after the handler commits" in topic.read_text()
