"""What the page shows and writes, through a real `gitmem web` and the real store."""

from __future__ import annotations

import html
import json
import re
from urllib.parse import quote

from support import git, run_gitmem
from webpage import WebPage, commits

TOPIC = "global/semantic/infra.md"


def _version(page: str) -> str:
    return re.search(r'name="version" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]


def test_every_view_loads_with_the_store_in_it(web: WebPage) -> None:
    views = {"/": "Freshness", "/browse": TOPIC, f"/topic?path={TOPIC}": "db2",
             "/search?q=staging": "db2", "/entry?id=global-sem-0001": "History",
             "/conflicts": "no conflicts", "/hot": "USER.md"}
    for path, needle in views.items():
        answer = web.get(path)
        assert answer.status == 200, (path, answer.text[:300])
        assert needle in answer.text, path
        assert '<input type="search"' in answer.text


def test_search_ranks_as_the_cli_does_cjk_included(web: WebPage) -> None:
    page = web.get("/search?q=" + quote("蓝绿发布"))
    assert page.status == 200
    cli = run_gitmem("--root", str(web.root), "search", "蓝绿发布", "--json", env={"GITMEM_SERVE": "off"})
    assert "global-pro-0001" in cli.stdout and "global-pro-0001" in page.text
    english = web.get("/search?q=staging+database&partial=1")
    assert english.text.startswith('<div id="results"') and "global/semantic/infra.md:" in english.text


def test_an_edit_lands_as_one_commit_keeping_id_and_fields(web: WebPage) -> None:
    before = (web.root / TOPIC).read_text()
    version = _version(web.get("/entry?id=global-sem-0001").text)
    done = web.post("/entry/edit", {"id": "global-sem-0001", "version": version,
                                    "title": "Staging database is db2",
                                    "body": "The staging database moved to db2 on Tuesday, 2 Dec."})
    assert done.status == 303 and done.headers["location"].startswith("/entry?id=global-sem-0001")
    assert commits(web.root)[0] == "edit: global-sem-0001"
    text = (web.root / TOPIC).read_text()
    assert "## Staging database is db2" in text and "2 Dec." in text
    created = re.search(r"\*\*Created:\*\* \S+", before).group(0)  # type: ignore[union-attr]
    assert "**Id:** global-sem-0001" in text and created in text
    assert git(web.root, "status", "--porcelain").strip() == ""


def test_an_edit_of_an_entry_changed_since_is_refused_and_both_are_shown(web: WebPage) -> None:
    version = _version(web.get("/entry?id=global-sem-0001").text)
    path = web.root / TOPIC
    path.write_text(path.read_text().replace("on Tuesday", "on Wednesday"))  # someone's hand edit
    before = commits(web.root)
    refused = web.post("/entry/edit", {"id": "global-sem-0001", "version": version,
                                       "title": "Mine", "body": "My version of the fact"})
    assert refused.status == 409
    assert "Wednesday" in refused.text and "My version of the fact" in refused.text
    assert "on Wednesday" in path.read_text() and "My version" not in path.read_text()
    assert commits(web.root) == before  # a refused write commits nothing, not even the hand edit


def test_a_hand_edit_and_a_cli_write_show_on_the_next_request(web: WebPage) -> None:
    path = web.root / TOPIC
    path.write_text(path.read_text() + "\n## Backups run nightly at 02:00\nOn the NAS.\n")
    assert "Backups run nightly" in web.get("/search?q=backups+nightly").text
    run_gitmem("--root", str(web.root), "remember", "The VPN gateway is vpn3", "-l", "semantic",
               env={"GITMEM_SERVE": "off"})
    assert "vpn3" in web.get("/search?q=vpn+gateway").text


def test_verify_and_forget_then_undo(web: WebPage) -> None:
    assert web.post("/entry/verify", {"id": "global-sem-0001"}).status == 303
    assert web.post("/entry/forget", {"id": "global-sem-0001"}).status == 303
    assert "Undo forget" in web.get("/entry?id=global-sem-0001").text
    assert web.post("/entry/undo", {"id": "global-sem-0001"}).status == 303
    assert commits(web.root)[:2] == ["forget --undo: global-sem-0001", "forget: global-sem-0001"]


def test_bad_input_is_a_clear_4xx_and_writes_nothing(web: WebPage) -> None:
    before = commits(web.root)
    cases = [web.get("/entry?id=global-sem-9999"), web.get("/entry?id=../../etc/passwd"),
             web.get("/topic?path=../../etc/passwd"), web.get("/search?q=x&layer=nope"),
             web.post("/entry/verify", {"id": "global-sem-9999"}),
             web.post("/entry/edit", {"id": "global-sem-0001", "title": "t", "body": "x" * 9000}),
             web.post("/resolve", {"target": "global-sem-0001", "how": "sideways"})]
    for answer in cases:
        assert 400 <= answer.status < 500, answer.text[:200]
        assert "Traceback" not in answer.text and 'class="notice error"' in answer.text
    assert commits(web.root) == before


def test_secrets_are_masked_and_refused(web: WebPage) -> None:
    key = "AKIA" + "QWERTYUIOPASDFGH"
    done = run_gitmem("--root", str(web.root), "remember", f"The deploy key is {key}", "-l", "semantic",
                      "-t", "keys", "--allow-secret", env={"GITMEM_SERVE": "off"})
    assert done.returncode == 0, done.stderr
    for path in ("/search?q=deploy+key", "/topic?path=global/semantic/keys.md"):
        answer = web.get(path)
        assert answer.status == 200 and "deploy key" in answer.text and key not in answer.text
    version = _version(web.get("/entry?id=global-sem-0001").text)
    refused = web.post("/entry/edit", {"id": "global-sem-0001", "version": version, "title": "t",
                                       "body": f"now with {key}"})
    assert refused.status == 400 and key not in refused.text
    assert key not in (web.root / TOPIC).read_text()


def test_the_overview_counts_freshness_as_the_cli_grades_it(web: WebPage) -> None:
    path = web.root / TOPIC
    text = path.read_text()
    old = re.sub(r"\*\*(Created|Verified):\*\* \S+", r"**\1:** 2020-01-02", text)
    path.write_text(old)  # a hand edit: the fact is now stale
    run_gitmem("--root", str(web.root), "remember", "Standups are at 09:30", "-l", "semantic",
               "-t", "team", env={"GITMEM_SERVE": "off"})
    listed = run_gitmem("--root", str(web.root), "list", "--json", env={"GITMEM_SERVE": "off"})
    grades: dict[str, dict[str, int]] = {}
    for record in json.loads(listed.stdout):
        per = grades.setdefault(record["layer"], {})
        per[record["freshness"]] = per.get(record["freshness"], 0) + 1
    assert grades["semantic"] == {"stale": 1, "fresh": 1}, grades
    page = web.get("/").text
    for layer, per in grades.items():
        words = ", ".join(f"{per[g]} {g}" for g in ("fresh", "aging", "stale", "expired") if per.get(g))
        assert f'<th scope="row">{layer}</th>' in page and f'aria-label="{words}"' in page


def test_problems_are_checked_on_their_page_and_shown_while_nothing_changed(web: WebPage) -> None:
    first = web.get("/").text
    assert "check the store" in first  # not checked yet in this process
    clean = web.get("/problems")
    assert clean.status == 200 and "no problems" in clean.text
    assert re.search(r'<a href="/problems">0</a> \(checked at', web.get("/").text)
    path = web.root / TOPIC
    path.write_text(path.read_text() + "\n## A second entry\nbody\n**Id:** not-an-id\n")
    assert "check the store" in web.get("/").text  # the files changed: the old answer is not shown
    found = web.get("/problems").text
    cli = run_gitmem("--root", str(web.root), "status", "--json", env={"GITMEM_SERVE": "off"})
    problems = json.loads(cli.stdout)["problems"]
    assert problems and all(html.escape(p) in found for p in problems)
    assert re.search(rf'<a href="/problems">{len(problems)}</a>', web.get("/").text)


def test_every_answer_says_its_server_time(web: WebPage) -> None:
    from gitmem.web.timing import durations

    for path in ("/", f"/topic?path={TOPIC}", "/search?q=staging", "/search?q=stag&partial=1",
                 "/entry?id=global-sem-0001", "/static/style.css", "/entry?id=nope"):
        answer = web.get(path)
        timing = durations([answer.headers["server-timing"]])
        assert timing["app"] >= 0, path
        if not path.startswith("/static"):  # a view's thread time; a file needs no view
            assert 0 <= timing["cpu"] <= timing["app"] + 1, path


def test_the_live_results_are_the_best_of_the_same_ranking(web: WebPage) -> None:
    """While a person types the box shows the best 20 hits, in the results page's order, and says
    Enter shows more; the results page shows up to 50."""
    entries = "".join(f"## Airship {n}\nThe zeppelin number {n} docks at hangar {n % 7}.\n\n"
                      for n in range(30))
    (web.root / "global/semantic/fleet.md").write_text(f"# Fleet\n\n{entries}", encoding="utf-8")
    live = web.get("/search?q=zeppelin&partial=1")
    full = web.get("/search?q=zeppelin")
    assert live.status == full.status == 200

    def titles(text: str) -> list[str]:
        return re.findall(r"Airship \d+", text)

    assert len(titles(live.text)) == 20 and "press Enter for up to 50" in live.text
    assert len(titles(full.text)) == 30 and "30 results" in full.text
    assert titles(live.text) == titles(full.text)[:20]
