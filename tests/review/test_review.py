"""The review queue as a user meets it: consolidation queues what it is unsure of, `gitmem review`
lists, accepts (as written or edited) and rejects, a rejected fact is not proposed again, and a
broken queue file stops nothing else."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from gitmem.store.store import Store
from reviewsupport import HALF_SURE, NO_CONFIDENCE, SURE, UNSURE, make_digest, use_model
from support import Cli, commit_count, git


def queue_of(root: Path) -> dict:
    path = root / "review.json"
    return json.loads(path.read_text()) if path.exists() else {"items": [], "rejected": []}


def waiting(root: Path) -> set[str]:
    return {item["text"] for item in queue_of(root)["items"]}


@pytest.mark.parametrize(("setting", "queued"), [
    (None, set()),
    ("off", set()),
    ("0.6", {UNSURE, HALF_SURE}),
    ("0.5", {UNSURE}),
    ("everything", {UNSURE, HALF_SURE, SURE, NO_CONFIDENCE}),
])
def test_each_setting_queues_what_it_names_and_writes_the_rest(
        gm: Cli, store: Store, tmp_path: Path, setting: str | None, queued: set[str]) -> None:
    if setting is not None:
        assert gm("config", "set", "consolidate.review", setting).exit_code == 0
    use_model(store.root, tmp_path)
    make_digest(store.root, 1)
    before = commit_count(store.root)
    report = gm.json("consolidate")
    assert {q["text"] for q in report["queued"]} == queued
    assert waiting(store.root) == queued
    written = {SURE, UNSURE, HALF_SURE, NO_CONFIDENCE} - queued
    bodies = {gm.json("show", e["id"])["body"] for e in report["entries"]}
    assert bodies == written
    assert commit_count(store.root) == before + 1  # entries and queue: one commit
    assert report["consolidated"] == report["digests"]  # a queued fact settles its digest too
    status = gm.json("status")
    assert status["reviewQueue"] == len(queued)
    assert git(store.root, "status", "--porcelain").strip() == ""


def test_a_reply_without_confidences_counts_as_confident(gm: Cli, store: Store, tmp_path: Path) -> None:
    gm("config", "set", "consolidate.review", "0.99")
    use_model(store.root, tmp_path, "good")
    make_digest(store.root, 1)
    report = gm.json("consolidate")
    assert report["queued"] == [] and len(report["entries"]) == 3


def test_an_unreadable_setting_holds_everything_back(gm: Cli, store: Store, tmp_path: Path) -> None:
    assert gm("config", "set", "consolidate.review", "1.5").exit_code == 2
    assert gm("config", "set", "consolidate.review", "sometimes").exit_code == 2
    data = json.loads((store.root / "memory.json").read_text())
    data.setdefault("settings", {})["consolidate"] = {"review": "evrything"}
    (store.root / "memory.json").write_text(json.dumps(data, indent=2) + "\n")
    git(store.root, "commit", "-qam", "a typo by hand")
    use_model(store.root, tmp_path)
    make_digest(store.root, 1)
    result = gm("consolidate", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["entries"] == [] and len(waiting(store.root)) == 4
    assert "every proposed fact waits for review" in result.stderr


def test_accept_as_written_writes_the_entry_and_empties_the_item_in_one_commit(
        gm: Cli, store: Store, tmp_path: Path) -> None:
    gm("config", "set", "consolidate.review", "0.5")
    use_model(store.root, tmp_path)
    digest = make_digest(store.root, 1)
    gm("consolidate")
    listed = gm.json("review")
    assert listed["count"] == 1
    item = listed["items"][0]
    assert item["confidence"] == 0.4 and item["digest"] == digest and item["layer"] == "learnings"
    text = gm("review").stdout
    assert item["id"] in text and UNSURE in text
    before = commit_count(store.root)
    done = gm.json("review", "accept", item["id"][:5])
    assert commit_count(store.root) == before + 1
    changed = set(git(store.root, "show", "--name-only", "--format=", "HEAD").split())
    assert {"review.json", "global/learnings/rabbitmq.md"} <= changed
    assert git(store.root, "log", "-1", "--format=%s").startswith(f"review accept {item['id']}")
    entry = gm.json("show", done["id"])
    assert entry["body"] == UNSURE and entry["fields"]["Source"] == f"digest:{digest}"
    assert gm.json("review")["items"] == [] and gm.json("status")["reviewQueue"] == 0
    again = gm("review", "accept", item["id"])  # accepted already: what it became, nothing written
    assert again.exit_code == 0 and "accepted already" in again.stdout and done["id"] in again.stdout
    assert commit_count(store.root) == before + 1
    missing = gm("review", "accept", "rffffffff")
    assert missing.exit_code == 1 and "no review item" in missing.stderr
    assert "Traceback" not in missing.output


def test_accept_edited_with_text_or_in_the_editor(gm: Cli, store: Store, tmp_path: Path) -> None:
    gm("config", "set", "consolidate.review", "0.6")
    use_model(store.root, tmp_path)
    make_digest(store.root, 1)
    gm("consolidate")
    items = {i["text"]: i["id"] for i in gm.json("review")["items"]}
    fixed = "A prefetch of 50 starved the other consumers; keep it at 10."
    done = gm.json("review", "accept", items[UNSURE], "--text", fixed)
    assert done["edited"] and gm.json("show", done["id"])["body"] == fixed
    assert "(edited)" in git(store.root, "log", "-1", "--format=%s")
    editor = tmp_path / "editor.py"
    editor.write_text("import sys\np = sys.argv[1]\ntext = open(p).read()\n"
                      "open(p, 'w').write(text.replace('5673', '5674'))\n")
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(editor))}"
    result = gm("review", "accept", items[HALF_SURE], "--edit", "--json",
                env={"EDITOR": command, "VISUAL": command})
    assert result.exit_code == 0, result.output
    done = json.loads(result.stdout)
    assert gm.json("show", done["id"])["body"] == "Staging RabbitMQ listens on port 5674."
    assert waiting(store.root) == set()
    both = gm("review", "accept", "r0", "--text", "x", "--edit")
    assert both.exit_code == 2


def test_accepted_text_passes_the_secret_gate(gm: Cli, store: Store, tmp_path: Path) -> None:
    gm("config", "set", "consolidate.review", "0.5")
    use_model(store.root, tmp_path)
    make_digest(store.root, 1)
    gm("consolidate")
    item = gm.json("review")["items"][0]["id"]
    head = git(store.root, "rev-parse", "HEAD")
    token = "ghp_" + "k3J9x2LmQ7vR4tY8wZ1bN6cF0dH5sA2pE9gU"
    refused = gm("review", "accept", item, "--text", f"The CI token is {token}")
    assert refused.exit_code == 2 and token not in refused.output
    assert git(store.root, "rev-parse", "HEAD") == head and gm.json("review")["count"] == 1


def test_a_secret_in_a_proposed_fact_never_reaches_the_queue(gm: Cli, store: Store, tmp_path: Path) -> None:
    gm("config", "set", "consolidate.review", "everything")
    use_model(store.root, tmp_path, "secret")
    make_digest(store.root, 1)
    result = gm("consolidate", "--json")
    report = json.loads(result.stdout)
    assert [q["topic"] for q in report["queued"]] == ["queue"]
    assert any("secret" in f["reason"] for f in report["write_failed"])
    assert "ghp_" not in (store.root / "review.json").read_text()
    assert "ghp_k3J9" not in result.output


def test_a_rejected_fact_is_dropped_when_proposed_again(gm: Cli, store: Store, tmp_path: Path) -> None:
    gm("config", "set", "consolidate.review", "0.5")
    use_model(store.root, tmp_path)
    make_digest(store.root, 1)
    gm("consolidate")
    item = gm.json("review")["items"][0]
    done = gm.json("review", "reject", item["id"], "--reason", "we changed the prefetch")
    assert done["remaining"] == 0
    remembered = queue_of(store.root)["rejected"]
    assert [r["reason"] for r in remembered] == ["we changed the prefetch"]
    assert git(store.root, "log", "-1", "--format=%s").startswith(f"review reject {item['id']}")
    make_digest(store.root, 2)  # the model proposes the same facts again
    report = gm.json("consolidate")
    assert report["queued"] == [] and [d["text"] for d in report["dropped"]] == [UNSURE]
    gm("config", "set", "consolidate.review", "off")
    make_digest(store.root, 3)
    report = gm.json("consolidate")  # dropped whatever the setting: a person said no
    assert [d["text"] for d in report["dropped"]] == [UNSURE]
    assert all(e["id"].split("-")[1] != "lrn" for e in report["entries"])


def test_a_fact_waiting_already_is_not_queued_twice(gm: Cli, store: Store, tmp_path: Path) -> None:
    gm("config", "set", "consolidate.review", "0.5")
    use_model(store.root, tmp_path)
    make_digest(store.root, 1)
    make_digest(store.root, 2)
    report = gm.json("consolidate")
    assert len(report["queued"]) == 1 and gm.json("review")["count"] == 1


def test_a_hand_broken_queue_stops_nothing_else(gm: Cli, store: Store, tmp_path: Path) -> None:
    gm("config", "set", "consolidate.review", "0.5")
    use_model(store.root, tmp_path)
    make_digest(store.root, 1)
    gm("consolidate")
    good = (store.root / "review.json").read_text()
    (store.root / "review.json").write_text(good[:-20])  # cut short by hand
    assert gm("remember", "Deploys need the VPN", "-l", "semantic").exit_code == 0
    assert "review.json" in git(store.root, "status", "--porcelain")  # never committed broken
    status = gm.json("status")
    assert status["reviewQueue"] == 1  # the last good version
    assert any("review.json" in p for p in status["problems"])
    listed = gm("review", "--json")
    assert listed.exit_code == 0 and json.loads(listed.stdout)["count"] == 1
    assert "review.json" in listed.stderr
    refused = gm("review", "reject", json.loads(listed.stdout)["items"][0]["id"])
    assert refused.exit_code == 2 and "review.json" in refused.stderr and "Traceback" not in refused.output
    second = make_digest(store.root, 2)
    report = gm.json("consolidate")  # goes on: the sure facts are written, the unsure one waits
    assert report["entries"] and report["queued"] == []
    assert second in report["still_pending"] and any("stays pending" in f["reason"] for f in report["write_failed"])
    git(store.root, "checkout", "--", "review.json")  # fixed: the next pass queues it
    report = gm.json("consolidate")
    assert [q["text"] for q in report["queued"]] == [] and second in report["consolidated"]
    assert gm.json("review")["count"] == 1  # the same fact was already waiting
    assert gm("check").exit_code == 0


def test_a_secret_typed_into_the_queue_by_hand_is_never_committed_nor_shown(
        gm: Cli, store: Store, tmp_path: Path) -> None:
    gm("config", "set", "consolidate.review", "0.5")
    use_model(store.root, tmp_path)
    make_digest(store.root, 1)
    gm("consolidate")
    token = "ghp_" + "k3J9x2LmQ7vR4tY8wZ1bN6cF0dH5sA2pE9gU"
    data = queue_of(store.root)
    data["items"][0]["text"] = f"The CI token is {token}"
    (store.root / "review.json").write_text(json.dumps(data, indent=2) + "\n")
    head = git(store.root, "rev-parse", "HEAD")
    refused = gm("remember", "A plain fact", "-l", "semantic")
    assert refused.exit_code == 2 and "review.json" in refused.stderr and token not in refused.output
    assert git(store.root, "rev-parse", "HEAD") == head
    listed = gm("review")
    assert listed.exit_code == 0 and token not in listed.output and "***" in listed.output



def test_a_reason_holding_a_secret_is_refused_without_offering_a_flag_it_lacks(
        gm: Cli, store: Store, tmp_path: Path) -> None:
    """`review reject` has no --allow-secret: its refusal says to remove the secret, and names
    no flag the command does not take; nothing is written."""
    token = "ghp_" + "k3J9aB7cD1eF5gH2iJ8kL4mN6oP0qR3sT9uV"
    gm("config", "set", "consolidate.review", "0.5")
    use_model(store.root, tmp_path)
    make_digest(store.root, 1)
    gm("consolidate")
    item = gm.json("review")["items"][0]
    before = commit_count(store.root)
    refused = gm("review", "reject", item["id"], "--reason", f"it leaked {token}")
    assert refused.exit_code == 2 and "Remove it and try again" in refused.output
    assert "--allow-secret" not in refused.output and token not in refused.output
    assert commit_count(store.root) == before and token not in (store.root / "review.json").read_text()
