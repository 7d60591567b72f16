"""The entry page through a real `gitmem web`: each version with its diff, the entry as of a
date, and Supersede / Move / Relate, each one commit with the message the CLI writes."""

from __future__ import annotations

import re
from datetime import date, timedelta

from support import git, run_gitmem
from webpage import WebPage, commits

TOPIC = "global/semantic/infra.md"
ENTRY = "global-sem-0001"


def _cli(web: WebPage, *args: str) -> str:
    done = run_gitmem("--root", str(web.root), *args, env={"GITMEM_SERVE": "off"})
    assert done.returncode == 0, done.stderr
    return done.stdout


def _version(page: str) -> str:
    return re.search(r'name="version" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]


def test_each_version_shows_author_date_message_and_a_diff(web: WebPage) -> None:
    version = _version(web.get(f"/entry?id={ENTRY}").text)
    assert web.post("/entry/edit", {"id": ENTRY, "version": version, "title": "Staging database",
                                    "body": "The staging database moved to db3 on Friday"}).status == 303
    page = web.get(f"/entry?id={ENTRY}").text
    history = page.split("<h2>History</h2>", 1)[1]
    items = re.findall(r'<li class="version">(.*?)</li>', history, re.S)
    assert len(items) == 2  # created, then edited; newest first
    newest, oldest = items
    author = git(web.root, "log", "-1", "--format=%an").strip()
    assert "edit: global-sem-0001" in newest and author in newest
    assert git(web.root, "log", "-1", "--format=%h").strip()[:7] in newest
    assert re.search(r"\d{4}-\d{2}-\d{2}T", newest)
    assert '<span class="del">-The staging database moved to db2 on Tuesday</span>' in newest
    assert '<span class="add">+The staging database moved to db3 on Friday</span>' in newest
    assert "remember" in oldest and '<span class="add">+## The staging database' in oldest


def test_as_of_shows_the_entry_as_it_was_on_a_date(web: WebPage) -> None:
    today = date.today().isoformat()
    version = _version(web.get(f"/entry?id={ENTRY}").text)
    web.post("/entry/edit", {"id": ENTRY, "version": version, "title": "Staging database",
                             "body": "Now on db3"})
    page = web.get(f"/entry?id={ENTRY}&as_of={today}").text
    then = page.split('class="card asof-result"', 1)[1]
    assert "Now on db3" in then  # the end of today holds the edit
    cli = _cli(web, "as-of", today, "show", ENTRY)
    assert "Now on db3" in cli
    before = (date.today() - timedelta(days=400)).isoformat()
    early = web.get(f"/entry?id={ENTRY}&as_of={before}")
    assert early.status == 200 and 'class="notice error"' in early.text  # no commit that early
    bad = web.get(f"/entry?id={ENTRY}&as_of=yesterday-ish")
    assert bad.status == 200 and 'class="notice error"' in bad.text and "Traceback" not in bad.text
    assert 'type="date"' in page


def test_supersede_writes_the_new_entry_linked_both_ways_in_one_commit(web: WebPage) -> None:
    before = len(commits(web.root))
    done = web.post("/entry/supersede", {"id": ENTRY, "text": "The staging database is db4 since May"})
    assert done.status == 303, done.text[:300]
    log = commits(web.root)
    assert len(log) == before + 1 and log[0].startswith("remember: global-sem-0002")
    text = (web.root / TOPIC).read_text()
    assert "**Supersedes:** global-sem-0001" in text and "**Superseded-by:** global-sem-0002" in text
    assert done.headers["location"].startswith("/entry?id=global-sem-0002")
    shown = web.get("/entry?id=global-sem-0001").text
    assert "superseded" in shown


def test_move_to_another_topic_and_layer_keeps_the_id(web: WebPage) -> None:
    done = web.post("/entry/move", {"id": ENTRY, "topic": "databases", "layer": "procedural"})
    assert done.status == 303, done.text[:300]
    assert commits(web.root)[0] == "mv: global-sem-0001 (semantic/infra -> procedural/databases)"
    moved = (web.root / "global/procedural/databases.md").read_text()
    assert "**Id:** global-sem-0001" in moved and "db2" in moved
    assert not (web.root / TOPIC).exists() or "global-sem-0001" not in (web.root / TOPIC).read_text()
    cli = _cli(web, "show", ENTRY, "--json")
    assert "global/procedural/databases.md" in cli
    assert git(web.root, "status", "--porcelain").strip() == ""


def test_relate_records_the_link_both_ways_as_the_cli_does(web: WebPage) -> None:
    done = web.post("/entry/relate", {"id": ENTRY, "type": "semantic", "other": "global-pro-0001"})
    assert done.status == 303, done.text[:300]
    assert commits(web.root)[0] == "relate: global-sem-0001 semantic:global-pro-0001"
    assert "semantic:global-pro-0001" in (web.root / TOPIC).read_text()
    assert "semantic:global-sem-0001" in (web.root / "global/procedural/deploy.md").read_text()
    again = web.post("/entry/relate", {"id": ENTRY, "type": "semantic", "other": "global-pro-0001"})
    assert again.status == 303 and "already" in again.headers["location"]


def test_bad_changes_are_refused_and_write_nothing(web: WebPage) -> None:
    before = commits(web.root)
    cases = [web.post("/entry/move", {"id": ENTRY, "topic": "infra", "layer": "semantic"}),
             web.post("/entry/move", {"id": ENTRY, "topic": "x", "layer": "nope"}),
             web.post("/entry/relate", {"id": ENTRY, "type": "friendly", "other": "global-pro-0001"}),
             web.post("/entry/relate", {"id": ENTRY, "type": "semantic", "other": ENTRY}),
             web.post("/entry/relate", {"id": ENTRY, "type": "semantic", "other": "global-sem-0404"}),
             web.post("/entry/supersede", {"id": ENTRY, "text": ""}),
             web.post("/entry/supersede", {"id": ENTRY, "text": "key AKIA" + "QWERTYUIOPASDFGH"})]
    for answer in cases:
        assert 400 <= answer.status < 500, answer.text[:300]
        assert 'class="notice error"' in answer.text and "Traceback" not in answer.text
    assert "AKIA" + "QWERTYUIOPASDFGH" not in cases[-1].text
    assert commits(web.root) == before
    assert git(web.root, "status", "--porcelain").strip() == ""


def test_an_entry_holding_a_secret_is_shown_masked_everywhere_and_offers_no_edit_form(
        web: WebPage) -> None:
    """The page never shows a secret let through with --allow-secret: not in the card, the
    history, nor a form prefilled with it (saving the masked text back would lose it)."""
    key = "AKIA" + "QWERTYUIOPASDFGH"
    made = _cli(web, "remember", f"The backup job uses {key}", "-l", "semantic", "-t", "infra",
                "--allow-secret").strip()
    page = web.get(f"/entry?id={made}").text
    assert key not in page and "The backup job uses ***" in page
    assert "does not edit it here" in page and 'action="/entry/edit"' not in page
    assert 'action="/entry/edit"' in web.get(f"/entry?id={ENTRY}").text  # an ordinary entry has it
