"""The whole memory loop over MCP, without a shell, through the SDK's own client: workspaces and
associate, capture -> consolidate -> search, refresh, sync -> conflicts -> resolve, relate /
related / why; and every one of them that writes refused for a subagent."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest

from fakemodels import fake_model
from gitmem.models import config
from gitmem.store.store import Store
from gitmem.verbs.entries import remember
from support import git, run_gitmem

TRANSCRIPTS = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"
LOOP_WRITES = {
    "associate": {"key": "elsewhere"},
    "consolidate": {},
    "resolve": {"target": "global-sem-0001", "how": "ours"},
    "relate": {"entry_id": "global-sem-0001", "kind": "semantic", "other": "global-sem-0002"},
    "revert": {"entry_id": "global-sem-0001"},
    "runtime_maintain": {"queue": True},
}


def _text(result) -> str:
    return result.content[0].text


def _stale(root: Path) -> list[str]:
    past = Store(root, clock=lambda: datetime(2026, 10, 20, 12, 0))
    try:
        return [remember(past, text, "semantic", topic="staging", volatility="volatile").id or ""
                for text in ("Staging RabbitMQ listens on port 5673", "The staging VM has 4 GB of RAM",
                             "Deploys freeze on Fridays this month")]
    finally:
        past.close()


def test_workspaces_and_associate(world) -> None:
    client = world.client
    listed = client.ok("workspaces")["results"]
    assert [w["key"] for w in listed] == ["proj"] and listed[0]["paths"] == [str(world.project.resolve())]
    (world.project / "tools").mkdir()
    done = client.ok("associate", {"key": "proj-tools", "title": "The tools", "path": "tools"})
    assert done == {"key": "proj-tools", "path": str((world.project / "tools").resolve())}
    assert git(world.root, "log", "-1", "--format=%s").strip() == "associate: workspace proj-tools"
    keys = {w["key"]: w for w in client.ok("workspaces")["results"]}
    assert keys["proj-tools"]["title"] == "The tools"
    bad = client.call("associate", {"key": "Not A Key!"})
    assert bad.is_error and _text(bad).startswith("gitmem: error: ") and "\n" not in _text(bad)


def test_capture_consolidate_and_search_without_a_shell(world, tmp_path: Path) -> None:
    client = world.client
    transcript = tmp_path / "session.jsonl"
    shutil.copy(TRANSCRIPTS / "claude-code.jsonl", transcript)
    assert client.ok("consolidate")["digests"] == []  # nothing pending yet
    captured = client.ok("capture", {"transcript": str(transcript), "use_model": False})
    assert captured["digest"], captured
    config.add_rung(world.root, "good", fake_model(tmp_path, "good"))
    try:
        report = client.ok("consolidate")
        assert report["consolidated"] == [captured["digest"]] and report["entries"]
        found = client.ok("search", {"query": "prefetch consumers"})["results"]
        assert any("prefetch" in hit["snippet"].lower() for hit in found)
    finally:
        config.remove_rung(world.root, "good")


def test_refresh_lists_without_a_model_and_acts_with_one(world, tmp_path: Path) -> None:
    client = world.client
    ids = _stale(world.root)
    listed = client.ok("refresh", {"use_model": False})
    assert listed["result"] == "listed" and set(ids) <= {c["id"] for c in listed["candidates"]}
    config.add_rung(world.root, "good", fake_model(tmp_path, "good"))
    try:
        done = client.ok("refresh")
        assert done["result"] == "refreshed" and done["kept"] and done["forgotten"]
    finally:
        config.remove_rung(world.root, "good")
    assert not {c["id"] for c in client.ok("refresh", {"use_model": False})["candidates"]} & set(ids)


def test_relate_related_and_why(world) -> None:
    client = world.client
    cause = client.ok("remember", {"text": "The disk of db-1 filled up overnight", "layer": "episodic"})
    effect = client.ok("remember", {"text": "Writes to the orders table failed at 03:10", "layer": "episodic"})
    linked = client.ok("relate", {"entry_id": effect["id"], "kind": "causal", "other": cause["id"]})
    assert linked["changed"] is True
    graph = client.ok("related", {"entry_id": effect["id"]})
    assert [(e["from"], e["to"], e["type"]) for e in graph["edges"]] == [(effect["id"], cause["id"], "causal")]
    origin = client.ok("why", {"entry_id": cause["id"]})
    assert origin["created"]["message"].startswith("remember") and origin["path"] == cause["path"]
    missing = client.call("why", {"entry_id": "global-epi-9999"})
    assert missing.is_error and _text(missing).startswith("gitmem: error: ")


def test_list_check_and_revert(world) -> None:
    client = world.client
    made = client.ok("decision", {"statement": "Ship on Tuesdays", "rationale": "QA is in on Mondays"})
    rows = client.ok("list", {"layer": "decisions"})["results"]
    assert [r["title"] for r in rows] == ["Ship on Tuesdays"] and rows[0]["id"] == made["id"]
    assert client.ok("list", {"layer": "decisions", "scope": "workspace"})["results"] == []
    fact = client.ok("remember", {"text": "The build cache lives in /var/cache/build", "layer": "semantic",
                                  "topic": "build"})
    client.ok("remember", {"text": "The build cache lives in /srv/cache/build", "layer": "semantic",
                           "topic": "build", "supersedes": fact["id"]})
    assert client.ok("show", {"entry_id": fact["id"]})["status"] == "superseded"
    back = client.ok("revert", {"entry_id": fact["id"]})
    assert back["changed"] is True and client.ok("show", {"entry_id": fact["id"]})["status"] == "live"
    assert client.ok("check") == {"errors": [], "hints": []}
    topic = world.root / fact["path"]
    topic.write_text(topic.read_text() + "\n<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n")
    try:
        found = client.ok("check")
        assert found["errors"] and fact["path"] in found["errors"][0]
    finally:
        git(world.root, "checkout", "--", fact["path"])


def test_a_sync_conflict_is_settled_with_resolve(world, tmp_path: Path) -> None:
    """Last in this module: it gives the store a remote."""
    client = world.client
    env = {"HOME": str(world.home)}
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    assert run_gitmem("--root", str(world.root), "remote", "set", str(remote), env=env).returncode == 0
    made = client.ok("remember", {"text": "Nightly backups start at 02:00", "layer": "semantic",
                                  "topic": "backups"})
    client.ok("sync")
    other = tmp_path / "other"
    assert run_gitmem("--root", str(other), "init", "--remote", str(remote), env=env).returncode == 0
    theirs = other / made["path"]
    theirs.write_text(theirs.read_text().replace("02:00", "03:00"))
    assert run_gitmem("--root", str(other), "sync", env=env).returncode == 0
    ours = world.root / made["path"]
    ours.write_text(ours.read_text().replace("02:00", "04:00"))
    assert client.ok("sync")["result"] == "conflicts"
    neither = client.call("resolve", {"target": made["id"]})
    assert neither.is_error and "give either `how`" in _text(neither)
    settled = client.ok("resolve", {"target": made["id"], "how": "theirs"})
    assert settled["left"] == 0 and settled["commit"]
    assert client.ok("conflicts")["results"] == []
    text = ours.read_text()
    assert "03:00" in text and "04:00" not in text and "<<<<<<<" not in text
    assert client.ok("show", {"entry_id": made["id"]})["body"] == "Nightly backups start at 03:00"


@pytest.mark.parametrize("name", sorted(LOOP_WRITES))
def test_a_subagent_is_refused_every_loop_write(subagent_world, name: str) -> None:
    client = subagent_world.client
    head = git(subagent_world.root, "rev-parse", "HEAD")
    result = client.call(name, LOOP_WRITES[name])
    assert result.is_error and "subagents do not write memory" in _text(result), _text(result)
    assert git(subagent_world.root, "rev-parse", "HEAD") == head


def test_a_subagent_reads_the_loop_and_refresh_only_lists(subagent_world, tmp_path: Path) -> None:
    client = subagent_world.client
    assert [w["key"] for w in client.ok("workspaces")["results"]] == ["proj"]
    ids = _stale(subagent_world.root)
    assert client.ok("refresh")["result"] == "listed"  # no model: a list is a read
    assert not client.call("related", {"entry_id": ids[0]}).is_error
    assert client.ok("why", {"entry_id": ids[0]})["created"]
    config.add_rung(subagent_world.root, "good", fake_model(tmp_path, "good"))
    try:
        head = git(subagent_world.root, "rev-parse", "HEAD")
        acting = client.call("refresh")
        assert acting.is_error and "`gitmem refresh` refused: subagents do not write memory" in _text(acting)
        assert git(subagent_world.root, "rev-parse", "HEAD") == head
        assert client.ok("refresh", {"use_model": False})["result"] == "listed"
    finally:
        config.remove_rung(subagent_world.root, "good")
