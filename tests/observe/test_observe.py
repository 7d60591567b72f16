"""logs/memory.log, state/metrics.json, state/activity.jsonl, `gitmem log` and `gitmem status`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakemodels import fake_model
from gitmem.eventlog import LOG_ROTATE_BYTES
from gitmem.models import config
from gitmem.models.ladder import ask
from gitmem.observe import activity
from gitmem.observe.record import record
from gitmem.store.store import Store
from gitmem.verbs.entries import remember
from support import Cli


def log_lines(root: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (root / "logs" / "memory.log").read_text().splitlines()]


def test_every_write_is_logged_counted_and_shown_from_one_place(gm: Cli, store: Store) -> None:
    remember(store, "Staging listens on 5433", "semantic")
    assert gm("forget", "global-sem-0001").exit_code == 0
    (store.root / "global" / "semantic" / "general.md").open("a").write("\n## By hand\nAn edit.\n")
    assert gm("remember", "The API is in Go", "--layer", "semantic").exit_code == 0
    writes = [e for e in log_lines(store.root) if e["event"] == "write"]
    assert [e["verb"] for e in writes] == ["init", "remember", "forget", "hand edit", "remember"]
    assert all(len(str(e["commit"])) == 40 for e in writes)
    metrics = json.loads((store.root / "state" / "metrics.json").read_text())
    assert metrics["writes"] == 5
    feed = gm.json("log", "--limit", "3")
    assert isinstance(feed, list)
    assert [r["summary"] for r in feed] == ["forget: global-sem-0001", "hand edit: 2 file(s)",
                                            "remember: global-sem-0003 (semantic/general)"]
    assert "remember: global-sem-0003" in gm("log").output


def test_the_log_rotates_past_two_megabytes(store: Store) -> None:
    path = store.root / "logs" / "memory.log"
    path.write_text("x" * (LOG_ROTATE_BYTES + 10) + "\n")
    record(store.root, "capture", session="s1")
    assert (store.root / "logs" / "memory.log.1").stat().st_size > LOG_ROTATE_BYTES
    assert [e["event"] for e in log_lines(store.root)] == ["capture"]


def test_secrets_never_reach_the_log_or_the_feed(store: Store, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITMEM_GIT_TOKEN", "ghp_supersecret123")
    script = tmp_path / "leaky.sh"
    script.write_text("#!/bin/sh\ncat >/dev/null\necho 'auth failed for ghp_supersecret123 at "
                      "https://bob:hunter2@example.com' >&2\nexit 1\n")
    script.chmod(0o755)
    config.add_rung(store.root, "leaky", str(script))
    with pytest.raises(Exception, match="no model returned text"):
        ask(store.root, "hi", purpose="summarize")
    text = (store.root / "logs" / "memory.log").read_text() + (store.root / "state" / "activity.jsonl").read_text()
    assert "ghp_supersecret123" not in text and "hunter2" not in text
    assert "auth failed for *** at https://***@example.com" in text


def test_the_activity_feed_is_bounded(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(activity, "TRIM_BYTES", 4000)
    monkeypatch.setattr(activity, "KEEP_LINES", 20)
    for n in range(200):
        record(store.root, "capture", activity=f"capture number {n}")
    lines = (store.root / activity.ACTIVITY_FILE).read_text().splitlines()
    assert len(lines) <= 60 and json.loads(lines[-1])["summary"] == "capture number 199"
    assert [r["summary"] for r in activity.recent_activity(store.root, 2)] == [
        "capture number 198", "capture number 199"]


def test_status_shows_memory_work(gm: Cli, tmp_path: Path) -> None:
    samples = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"
    assert gm("capture", str(samples / "generic.jsonl")).exit_code == 0
    config.add_rung(gm.root, "mute", fake_model(tmp_path, "empty"))
    config.add_rung(gm.root, "good", fake_model(tmp_path, "good"))
    assert gm("models", "test", "good").exit_code == 0
    ask(gm.root, "hello", purpose="summarize")  # the mute rung is benched
    data = gm.json("status")
    assert isinstance(data, dict)
    assert data["pending"] == 1 and data["needsReview"] == [] and data["lastConsolidation"] is None
    assert [(r["name"], r["benched"]) for r in data["ladder"]["rungs"]] == [("good", False), ("mute", True)]
    assert data["ladder"]["rungs"][1]["benchedUntil"]
    assert data["metrics"]["captures"] == 1 and data["metrics"]["modelCalls"]["total"] == 3
    text = gm("status").output
    assert "digests: 1 pending consolidation" in text and "mute (benched until" in text
    assert gm("consolidate").exit_code == 0
    after = gm.json("status")
    assert isinstance(after, dict)
    assert after["pending"] == 0 and after["lastConsolidation"]["result"] == "consolidated"


def test_counters_restart_from_a_torn_file_and_ignore_padding(store: Store) -> None:
    from gitmem.observe.metrics import bump, load_metrics

    path = store.root / "state" / "metrics.json"
    path.write_text('{"writes": 7, "captures": 2}' + " " * 500 + "\n")
    bump(store.root, ["writes"])
    assert load_metrics(store.root)["writes"] == 8 and load_metrics(store.root)["captures"] == 2
    path.write_text('{"writes": 12, "capt')  # torn by a crash
    bump(store.root, ["writes"])
    assert load_metrics(store.root)["writes"] == 1
