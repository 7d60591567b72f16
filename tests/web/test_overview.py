"""The overview's counts are kept while nothing they are read from changed (store/kept.py):
every change shows on the next request all the same."""

from __future__ import annotations

import re
import time
from pathlib import Path

from support import git, run_gitmem
from webpage import WebPage, start_web, stop_web

OFF = {"GITMEM_SERVE": "off"}


def shown(page: str, fact: str) -> str:
    found = re.search(rf"<dt>{fact}</dt><dd>(?:<a [^>]*>)?([^<]*)", page)
    assert found, page[:500]
    return found.group(1)


def test_the_counts_follow_a_cli_write_a_plain_git_commit_and_hand_edits(web: WebPage) -> None:
    assert shown(web.get("/").text, "Entries") == "2"
    assert shown(web.get("/").text, "Entries") == "2"  # kept: the same answer
    run_gitmem("--root", str(web.root), "remember", "The VPN gateway is vpn3", "-l", "semantic", env=OFF)
    assert shown(web.get("/").text, "Entries") == "3"
    topic = web.root / "global" / "semantic" / "pulled.md"  # as a `git pull` brings a file
    topic.write_text("---\ntopic: pulled\n---\n\n## Pulled fact\nFrom another machine.\n")
    git(web.root, "add", "global/semantic/pulled.md")
    git(web.root, "commit", "-qm", "a commit made with plain git")
    assert shown(web.get("/").text, "Entries") == "4"
    topic.write_text(topic.read_text() + "\n## A hand edit\nNot committed.\n")
    page = web.get("/").text
    assert shown(page, "Entries") == "5" and shown(page, "Uncommitted files") == "1"
    topic.write_text(topic.read_text() + "\n## A second hand edit\nThe same second.\n")
    assert shown(web.get("/").text, "Entries") == "6"  # a file not settled is read every time


def test_the_conflict_count_follows_markers_by_hand_and_committed(web: WebPage) -> None:
    assert shown(web.get("/").text, "Conflicts") == "0"
    topic = web.root / "global" / "semantic" / "infra.md"
    text = topic.read_text()
    topic.write_text(text + "\n<<<<<<< ours\n## Left\na\n=======\n## Right\nb\n>>>>>>> theirs\n")
    assert shown(web.get("/").text, "Conflicts") == "1"
    topic.write_text(text)
    assert shown(web.get("/").text, "Conflicts") == "0"
    other = web.root / "global" / "procedural" / "deploy.md"
    other.write_text(other.read_text() + "\n<<<<<<< ours\n## L\na\n=======\n## R\nb\n>>>>>>> theirs\n")
    git(web.root, "commit", "-qam", "markers committed by a merge")
    assert shown(web.get("/").text, "Conflicts") == "1"  # the file holds HEAD's bytes: git sees no change


def test_a_store_never_read_answers_first_and_counts_after(web_store: Path) -> None:
    for cache in (web_store / "state").glob("catalog.sqlite*"):  # as in a fresh clone
        cache.unlink()
    page = start_web(web_store)
    try:
        signed = page.get(page.start_url[len(page.origin):], cookie=False)  # not sign_in: it reads "/"
        page.cookie = signed.headers["set-cookie"].split(";", 1)[0]
        first = page.get("/").text  # the first answer never waits for the first look
        assert shown(first, "Entries") == "being counted" and shown(first, "Uncommitted files") == "0"
        deadline = time.monotonic() + 60
        while shown(page.get("/").text, "Entries") == "being counted":  # the look began after it
            assert time.monotonic() < deadline, "the first look never ended"
            time.sleep(0.1)
        assert shown(page.get("/").text, "Entries") == "2"
    finally:
        stop_web(page)


def test_a_store_whose_catalog_is_current_is_counted_on_the_first_answer(web_store: Path) -> None:
    page = start_web(web_store)
    try:
        page.sign_in()
        assert shown(page.get("/").text, "Entries") == "2"
    finally:
        stop_web(page)
