"""`gitmem search --explain` through the real CLI: text, JSON, and the unchanged default output."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

from support import Cli


def _remember(gm: Cli, text: str, topic: str) -> str:
    result = gm("remember", text, "--layer", "episodic", "--topic", topic, "--json")
    assert result.exit_code == 0, result.output
    return str(json.loads(result.stdout)["id"])


def test_explain_says_why_each_hit_ranked_and_the_default_output_is_unchanged(gm: Cli) -> None:
    asked = _remember(gm, "Ben: what do you think of the release plan for Atlas?", "talks")
    answer = _remember(gm, "Ana: hold it until the billing migration is finished.", "talks")
    plain = gm.json("search", "how should we handle the release plan?")
    assert isinstance(plain, list) and all("explain" not in hit for hit in plain)
    hits = gm.json("search", "how should we handle the release plan?", "--explain")
    assert isinstance(hits, list)
    by_id = {hit["id"]: hit for hit in hits}
    why = by_id[asked]["explain"]
    assert {t["word"]: t["fields"] for t in why["terms"]} == {"release": ["title", "body"],
                                                               "plan": ["title", "body"]}
    assert why["coverage"]["matched"] == 2 and why["freshness"]["grade"] == "fresh"
    assert by_id[answer]["explain"]["neighbour"]["from"] == asked  # found through its neighbour
    text = gm("search", "how should we handle the release plan?", "--explain")
    assert text.exit_code == 0
    assert "why: score" in text.output and "neighbour lift +" in text.output
    assert "why:" not in gm("search", "release plan").output


def test_explain_shows_the_date_the_question_asked_for(gm: Cli) -> None:
    _remember(gm, "Finance froze the budget until the board meeting.", "finance")
    hits = gm.json("search", "what did finance say about the budget today?", "--explain")
    assert isinstance(hits, list)
    date = hits[0]["explain"]["date"]
    assert date["asked"] == "today" and date["matched"] == date["span"]


def test_explain_never_shows_a_credential_that_matched(gm: Cli) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    entry = Path(gm.root) / "global" / "semantic" / "tokens.md"
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_text(f"---\ntopic: tokens\nlayer: semantic\n---\n# tokens\n\n## CI token\n"
                     f"The CI token {token} was revoked.\n\n**Id:** global-sem-0900\n", "utf-8")
    result = gm("search", f"revoked {token}", "--explain", "--json")
    assert result.exit_code == 0, result.output
    assert token not in result.stdout and token.lower() not in result.stdout
    assert json.loads(result.stdout)[0]["explain"]["terms"]


def test_explain_shows_the_entry_and_day_an_event_date_was_anchored_on(gm: Cli) -> None:
    today = date.today()  # the CLI searches on the real day; the window's slack absorbs a zone
    launch, frozen, approved = (today - timedelta(days=n) for n in (60, 74, 20))
    entries = [("global-sem-0901", "The Atlas launch went out to all customers.", launch),
               ("global-sem-0902", "Finance froze the budget until the board meets.", frozen),
               ("global-sem-0903", "Finance approved the budget for two hires.", approved)]
    topic = Path(gm.root) / "global" / "semantic" / "atlas.md"
    topic.parent.mkdir(parents=True, exist_ok=True)
    topic.write_text("---\ntopic: atlas\nlayer: semantic\n---\n# atlas\n" + "".join(
        f"\n## {text}\n{text}\n\n**Id:** {entry_id}\n**Created:** {day.isoformat()}\n"
        for entry_id, text, day in entries), "utf-8")
    question = "what did finance say about the budget two weeks before the launch?"
    hits = gm.json("search", question, "--explain")
    assert isinstance(hits, list) and hits[0]["id"] == "global-sem-0902"
    asked = hits[0]["explain"]["date"]
    assert asked["asked"] == "two weeks before the launch" and asked["matched"]
    assert asked["anchor"] == {"event": "the launch", "id": "global-sem-0901",
                               "at": "global/semantic/atlas.md:7", "title": entries[0][1],
                               "day": launch.isoformat(), "from": "created"}
    text = gm("search", question, "--explain")
    assert text.exit_code == 0
    assert f"anchor 'the launch': global-sem-0901 on {launch.isoformat()}" in text.output
    unknown = gm("search", "what did finance say about the budget since the offsite?", "--explain")
    assert unknown.exit_code == 0 and "anchor" not in unknown.output  # no such event: no lift
    assert "Traceback" not in unknown.output
