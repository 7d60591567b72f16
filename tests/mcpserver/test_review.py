"""The review queue over MCP, through the SDK's own client: consolidate queues, review_list shows,
review_accept (as proposed or with the user's text) writes in one commit, review_reject remembers."""

from __future__ import annotations

import json
from pathlib import Path

from gitmem.store.store import Store
from gitmem.verbs.config import setting_set
from reviewsupport import HALF_SURE, UNSURE, make_digest, use_model
from support import git


def test_queue_list_accept_and_reject_without_a_shell(world, tmp_path: Path) -> None:
    client = world.client
    store = Store(world.root, cwd=world.base)
    try:
        setting_set(store, "consolidate.review", "0.6")
    finally:
        store.close()
    use_model(world.root, tmp_path)
    make_digest(world.root, 1)
    report = client.ok("consolidate")
    assert {q["text"] for q in report["queued"]} == {UNSURE, HALF_SURE}
    listed = client.ok("review_list")
    assert listed["count"] == 2 and client.ok("status")["reviewQueue"] == 2
    ids = {item["text"]: item["id"] for item in listed["items"]}
    fixed = "A prefetch of 50 starved the other consumers; keep it at 10."
    done = client.ok("review_accept", {"item": ids[UNSURE], "text": fixed})
    assert done["edited"] and client.ok("show", {"entry_id": done["id"]})["body"] == fixed
    assert git(world.root, "log", "-1", "--format=%s").startswith(f"review accept {ids[UNSURE]}")
    client.ok("review_reject", {"item": ids[HALF_SURE][:4], "reason": "the port changed"})
    queue = json.loads((world.root / "review.json").read_text())
    assert queue["items"] == [] and [r["reason"] for r in queue["rejected"]] == ["the port changed"]
    missing = client.call("review_accept", {"item": "rnothere"})
    text = missing.content[0].text
    assert missing.is_error and text.startswith("gitmem: error: no review item") and "\n" not in text
    assert git(world.root, "status", "--porcelain").strip() == ""
