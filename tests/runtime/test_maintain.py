"""`gitmem runtime maintain`: near-duplicate USER.md items and a MEMORY.md near its budget,
proposed through fake model ladders; shown, queued, accepted, rejected, refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakemodels import fake_model
from gitmem.models import config
from gitmem.serve.jobs import consolidate_job
from support import Cli, commit_count, git

TABS = "Prefers tabs over spaces in Python code."
TABS_ALL = "Prefers tabs over spaces in all Python code"
BERLIN = "Works in the Europe/Berlin time zone"
TOKEN = "ghp_" + "k3J9x2LmQ7vR4tY8wZ1bN6cF0dH5sA2pE9gU"


def ok(gm: Cli, *args: str) -> str:
    result = gm(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


def profile(gm: Cli, tmp_path: Path, kind: str = "maintain", timeout: float | None = None) -> dict[str, str]:
    """Two near-duplicate user items and one other; a fake model of `kind`. text -> item id."""
    for text in (TABS, TABS_ALL, BERLIN):
        ok(gm, "runtime", "add", "-t", "user", text)
    config.add_rung(gm.root, kind, fake_model(tmp_path, kind), timeout=timeout)
    return {i["content"]: i["id"] for i in gm.json("runtime", "show", "-t", "user")["scopes"][0]["items"]}


def user_md(gm: Cli) -> str:
    return (gm.root / "global" / "runtime" / "USER.md").read_text()


def queue_of(gm: Cli) -> dict:
    return json.loads((gm.root / "review.json").read_text())


def test_a_dry_run_shows_the_merge_and_writes_nothing(gm: Cli, tmp_path: Path) -> None:
    ids = profile(gm, tmp_path)
    before = commit_count(gm.root)
    shown = gm("runtime", "maintain")
    assert shown.exit_code == 0, shown.output
    assert f"- {ids[TABS]}: {TABS}" in shown.stdout and f"+ {TABS_ALL}" in shown.stdout
    assert "nothing written" in shown.stdout
    data = gm.json("runtime", "maintain", "--dry-run")
    [proposal] = data["proposals"]
    assert proposal["kind"] == "runtime-merge" and proposal["texts"] == [TABS_ALL]
    assert [s["id"] for s in proposal["sources"]] == [ids[TABS], ids[TABS_ALL]]  # never the Berlin item
    assert proposal["queuedAs"] is None and data["queued"] == []
    assert commit_count(gm.root) == before and not (gm.root / "review.json").exists()
    assert git(gm.root, "status", "--porcelain").strip() == ""


def test_queued_then_accepted_in_one_commit_with_provenance(gm: Cli, tmp_path: Path) -> None:
    ids = profile(gm, tmp_path)
    queued = gm.json("runtime", "maintain", "--queue")
    [item] = queued["queued"]
    listed = gm("review")
    assert item in listed.stdout and f"+ {TABS_ALL}" in listed.stdout
    before = commit_count(gm.root)
    done = gm("review", "accept", item)
    assert done.exit_code == 0 and f"accepted {item}" in done.stdout
    assert commit_count(gm.root) == before + 1
    changed = set(git(gm.root, "show", "--name-only", "--format=", "HEAD").split())
    assert {"review.json", "global/runtime/memories.json", "global/runtime/USER.md"} <= changed
    assert user_md(gm) == f"{TABS_ALL}\n§\n{BERLIN}\n"
    records = json.loads((gm.root / "global/runtime/memories.json").read_text())["items"]
    merged = next(r for r in records if r["content"] == TABS_ALL)
    assert merged["id"] not in ids.values()
    assert merged["maintenance"]["review"] == item and merged["maintenance"]["kind"] == "runtime-merge"
    assert [r["id"] for r in merged["maintenance"]["replaced"]] == [ids[TABS], ids[TABS_ALL]]
    assert queue_of(gm)["items"] == [] and queue_of(gm)["accepted"][0]["items"] == [merged["id"]]
    again = gm("review", "accept", item)  # the same id twice: told what it became, nothing written
    assert again.exit_code == 0 and "accepted already" in again.stdout and merged["id"] in again.stdout
    assert commit_count(gm.root) == before + 1
    assert gm.json("runtime", "maintain")["proposals"] == []  # nothing alike is left


def test_a_rejected_merge_is_not_proposed_again_nor_asked_about(gm: Cli, tmp_path: Path) -> None:
    profile(gm, tmp_path)
    [item] = gm.json("runtime", "maintain", "--queue")["queued"]
    again = gm.json("runtime", "maintain", "--queue")  # waiting already: not queued twice
    assert again["queued"] == [] and any("already waiting" in n for n in again["notes"])
    ok(gm, "review", "reject", item, "--reason", "two different habits")
    log = tmp_path / "calls.log"
    before = commit_count(gm.root)
    data = gm("runtime", "maintain", "--queue", "--json", env={"FAKE_MODEL_LOG": str(log)})
    report = json.loads(data.stdout)
    assert report["proposals"] == [] and any("rejected in review before" in n for n in report["notes"])
    assert not log.exists()  # the model was not asked
    assert commit_count(gm.root) == before and queue_of(gm)["items"] == []


def test_an_accept_whose_items_changed_since_is_refused(gm: Cli, tmp_path: Path) -> None:
    ids = profile(gm, tmp_path)
    [item] = gm.json("runtime", "maintain", "--queue")["queued"]
    ok(gm, "runtime", "replace", "-t", "user", ids[TABS], "Prefers tabs over spaces, width 4.")
    before, text = commit_count(gm.root), user_md(gm)
    refused = gm("review", "accept", item)
    assert refused.exit_code != 0
    assert f"runtime item {ids[TABS]} changed since this was proposed" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and "Traceback" not in refused.output
    assert commit_count(gm.root) == before and user_md(gm) == text
    assert [i["id"] for i in queue_of(gm)["items"]] == [item]
    ok(gm, "runtime", "remove", "-t", "user", ids[TABS_ALL])
    gone = gm("review", "accept", item)
    assert gone.exit_code != 0 and "was removed since" in gone.stderr or "changed since" in gone.stderr


@pytest.mark.parametrize("kind", ["fail", "slow", "empty", "prose", "maintain-distinct", "reasoning"])
def test_a_failing_slow_or_rambling_model_proposes_nothing(gm: Cli, tmp_path: Path, kind: str) -> None:
    profile(gm, tmp_path, kind, timeout=0.5)
    before = commit_count(gm.root)
    result = gm("runtime", "maintain", "--queue", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["proposals"] == [] and report["queued"] == []
    assert any("no proposal" in n for n in report["notes"]), report["notes"]
    assert commit_count(gm.root) == before and not (gm.root / "review.json").exists()


def test_a_secret_in_the_merged_text_is_refused_and_never_shown(gm: Cli, tmp_path: Path) -> None:
    profile(gm, tmp_path, "maintain-secret")
    before = commit_count(gm.root)
    for args in (("--queue",), ()):
        result = gm("runtime", "maintain", *args)
        assert result.exit_code == 0 and "looks like it holds a secret" in result.stdout
        assert TOKEN not in result.output
    assert commit_count(gm.root) == before and not (gm.root / "review.json").exists()
    assert TOKEN not in git(gm.root, "log", "-p", "--all")


def test_a_person_s_text_with_a_secret_is_refused_on_accept(gm: Cli, tmp_path: Path) -> None:
    profile(gm, tmp_path)
    [item] = gm.json("runtime", "maintain", "--queue")["queued"]
    before = commit_count(gm.root)
    refused = gm("review", "accept", item, "--text", f"Prefers tabs; token {TOKEN}")
    assert refused.exit_code != 0 and TOKEN not in refused.output
    assert commit_count(gm.root) == before


def _full_memory(gm: Cli) -> list[str]:
    ok(gm, "config", "set", "runtime.memoryLimitBytes", "400")
    texts = ["Run the test suite with make test before every push to main",
             "The staging database is reached through the bastion host on port 2222",
             "Release notes are written in docs/changes.md by the person who merges",
             "Deploys go through the deploy.sh script in the ops folder only"]
    for text in texts:
        ok(gm, "runtime", "add", text)
    ok(gm, "runtime", "add", "--importance", "critical", "Never push to production on Fridays")
    return texts


def test_a_memory_md_over_its_threshold_gets_a_compaction_proposal(gm: Cli, tmp_path: Path) -> None:
    texts = _full_memory(gm)
    config.add_rung(gm.root, "maintain", fake_model(tmp_path, "maintain"))
    assert gm.json("runtime", "maintain")["proposals"] == []  # 330 of 400 bytes: under 90%
    ok(gm, "runtime", "add", "--branch", "feature", "Feature builds use tox")  # shown on one branch: left alone
    ok(gm, "config", "set", "runtime.compactAtPercent", "60")
    [item] = gm.json("runtime", "maintain", "--queue")["queued"]
    [proposal] = gm.json("review")["items"]
    assert proposal["kind"] == "runtime-compaction" and proposal["target"] == "memory"
    assert [s["content"] for s in proposal["sources"]] == texts  # nor is the critical item
    ok(gm, "review", "accept", item)
    memory = (gm.root / "global/runtime/MEMORY.md").read_text().split("\n§\n")
    assert memory[:4] == [" ".join(t.split()[:5]) for t in texts]
    assert memory[4:] == ["Never push to production on Fridays", "Feature builds use tox\n"]
    bad = gm("config", "set", "runtime.compactAtPercent", "0")
    assert bad.exit_code != 0 and "1 to 100" in bad.output


def test_the_consolidation_job_queues_the_proposals_after_its_pass(gm: Cli, tmp_path: Path) -> None:
    profile(gm, tmp_path)
    line = consolidate_job(gm.root)
    assert line == "nothing pending; runtime maintenance: 1 proposal(s) queued for review"
    [item] = queue_of(gm)["items"]
    assert item["kind"] == "runtime-merge" and user_md(gm).count("tabs") == 2  # nothing applied
    assert consolidate_job(gm.root).endswith("0 proposal(s) queued for review")


def test_a_subagent_may_look_but_not_queue(gm: Cli, tmp_path: Path) -> None:
    profile(gm, tmp_path)
    env = {"GITMEM_SUBAGENT": "1"}
    assert gm("runtime", "maintain", env=env).exit_code == 0
    refused = gm("runtime", "maintain", "--queue", env=env)
    assert refused.exit_code != 0 and "subagents do not write memory" in refused.stderr
