"""The settings page and the capture-and-review view through a real `gitmem web`."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

from fakemodels import fake_model
from gitmem.capture.digests import PENDING, Digest, new_digest_id, write_digest
from support import git, run_gitmem
from webpage import WebPage, commits

START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _cli(web: WebPage, *args: str) -> str:
    done = run_gitmem("--root", str(web.root), *args, env={"GITMEM_SERVE": "off"})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_shared_settings_are_saved_in_one_commit_and_read_back(web: WebPage) -> None:
    page = web.get("/settings").text
    assert 'name="freshness.stable" value="365"' in page and 'name="runtime.memoryLimitBytes"' in page
    form = dict(re.findall(r'<input id="set-[^"]+" name="([^"]+)" value="([^"]*)"', page))
    assert len(form) >= 20 and "git.remote" not in form  # every shared setting `config` knows
    form.update({"freshness.stable": "400", "runtime.memoryLimitBytes": "4096"})
    done = web.post("/settings/shared", form)
    assert done.status == 303, done.text[:300]
    assert commits(web.root)[0] == "config set freshness.stable=400, runtime.memoryLimitBytes=4096"
    settings = json.loads((web.root / "memory.json").read_text())["settings"]
    assert settings["freshness"]["stable"] == 400 and settings["runtime"]["memoryLimitBytes"] == 4096
    assert "of 4096 bytes" in web.get("/hot").text  # the hot tier reads the new budget
    assert "4096" in _cli(web, "runtime", "show", "--json")
    count = len(commits(web.root))
    again = web.post("/settings/shared", form)
    assert "nothing%20changed" in again.headers["location"] and len(commits(web.root)) == count
    assert git(web.root, "status", "--porcelain").strip() == ""


def test_a_save_writes_what_the_page_changed_and_never_undoes_another_writer(web: WebPage) -> None:
    """The whole form goes back, with the values it showed: a setting changed meanwhile by the
    CLI stays as the CLI set it, and the same setting changed on both is refused (409). An unset
    setting is an empty field the browser does not hold the form for."""
    page = web.get("/settings").text
    assert not re.search(r'<input id="set-[^"]+"[^>]* required', page)
    form = dict(re.findall(r'<input (?:id="set-[^"]+" |type="hidden" )name="([^"]+)" value="([^"]*)"', page))
    assert form["shown:freshness.normal"] == form["freshness.normal"]
    _cli(web, "config", "set", "freshness.normal", "120")
    done = web.post("/settings/shared", {**form, "freshness.stable": "400"})
    assert done.status == 303 and commits(web.root)[0] == "config set freshness.stable=400"
    settings = json.loads((web.root / "memory.json").read_text())["settings"]["freshness"]
    assert settings["normal"] == 120 and settings["stable"] == 400
    before = commits(web.root)
    clash = web.post("/settings/shared", {**form, "freshness.normal": "45"})
    assert clash.status == 409 and "changed to" in clash.text and commits(web.root) == before
    assert json.loads((web.root / "memory.json").read_text())["settings"]["freshness"]["normal"] == 120


def test_a_value_a_reader_would_refuse_is_refused_and_nothing_written(web: WebPage) -> None:
    before, text = commits(web.root), (web.root / "memory.json").read_text()
    for key, value, says in (("freshness.volatile", "0", "from 1 to"), ("runtime.itemLimitBytes", "12", "&gt;= 64"),
                             ("documents.bodyLimitBytes", "100", "&gt;= 1024"), ("freshness.stable", "lots", "whole number"),
                             ("runtime.surprise", "5", "unknown setting")):
        refused = web.post("/settings/shared", {key: value})
        assert refused.status == 400 and says in refused.text, (key, refused.text[-500:])
    assert commits(web.root) == before and (web.root / "memory.json").read_text() == text


def test_the_remote_is_set_and_the_token_is_never_shown_back(web: WebPage, bare_remote: Path) -> None:
    done = web.post("/settings/remote", {"url": str(bare_remote), "branch": "main", "token": ""})
    assert done.status == 303, done.text[:300]
    assert commits(web.root)[0] == f"remote set: {bare_remote}"
    assert git(web.root, "remote", "get-url", "origin").strip() == str(bare_remote)
    url = "https://git.example.invalid/team/memory.git"
    done = web.post("/settings/remote", {"url": url, "branch": "main", "token": TOKEN})
    assert done.status == 303, done.text[:300]
    page = web.get("/settings").text
    assert TOKEN not in page and TOKEN not in done.headers["location"]
    assert 'type="password" autocomplete="off" value=""' in page
    assert TOKEN not in (web.root / "memory.json").read_text() and TOKEN not in git(web.root, "config", "--list")
    assert TOKEN not in git(web.root, "log", "-p")
    stored = web.root / "state" / "git-token"
    assert stored.is_file() and stored.read_text().strip() == TOKEN  # no credential helper here: the file
    refused = web.post("/settings/remote", {"url": url, "branch": "main", "token": "two words"})
    assert refused.status == 400 and "two words" not in refused.text


def test_the_model_ladder_is_edited_for_this_machine_only(web: WebPage) -> None:
    before = commits(web.root)
    done = web.post("/settings/model/add", {"name": "local", "command": "llm --key=sk-secret-value -m x",
                                            "timeout": "30"})
    assert done.status == 303, done.text[:300]
    page = web.get("/settings").text
    assert "local" in page and "sk-secret-value" not in page and "30 s" in page
    assert "local" in _cli(web, "models", "list")
    assert web.post("/settings/model/add", {"name": "bad name!", "command": "x"}).status == 400
    assert web.post("/settings/model/remove", {"name": "local"}).status == 303
    assert web.post("/settings/model/remove", {"name": "local"}).status == 404
    assert commits(web.root) == before  # state/models.json is never committed


def _digest(root: Path, n: int) -> str:
    when = START + timedelta(minutes=n)
    digest = Digest(new_digest_id(root, f"session{n:02d}", when), {
        "session": f"session{n:02d}", "format": "claude-code", "workspace": "acme-api", "branch": "main",
        "first": when.isoformat(), "last": when.isoformat(), "captured": when.isoformat(),
        "summary": "model:good", "status": PENDING, "attempts": "0", "consolidated": "",
    }, ["src/queue/worker.py"], [("2026-12-01", [
        "**Delivery:** the worker acks only after the handler commits.",
        "**Prefetch:** 10, because 50 starved the other consumers.",
    ])])
    write_digest(root, digest)
    return digest.id


def test_review_shows_pending_digests_and_what_the_last_pass_wrote(web: WebPage, tmp_path: Path) -> None:
    empty = web.get("/review").text
    assert "no pending digests" in empty and "no consolidation pass yet" in empty
    _cli(web, "models", "add", "good", fake_model(tmp_path, "good"))
    first = _digest(web.root, 1)
    _cli(web, "consolidate")
    waiting = _digest(web.root, 2)
    page = web.get("/review").text
    pending = page.split("Pending digests", 1)[1].split("<h2>", 1)[0]
    assert waiting in pending and first not in pending and "acks only after the handler" in pending
    last = page.split("Last consolidation pass", 1)[1]
    assert "consolidated" in last
    passes = page.split("Recent consolidation passes", 1)[1]
    subject = git(web.root, "log", "--format=%s", "--grep=^consolidate:").splitlines()[0]
    assert subject in passes
    written = git(web.root, "show", "--name-only", "--format=", "HEAD").split()
    topics = ["global/learnings/rabbitmq.md", "workspaces/acme-api/semantic/queue.md",
              "workspaces/acme-api/codebase/src-queue-worker-py.md"]
    assert set(topics) <= set(written) and all(f"/topic?path={quote(f, safe='')}" in passes for f in topics)
    assert "SYSTEM.md" not in passes and "INDEX.md" not in passes


def test_the_review_queue_is_settled_in_the_page(web: WebPage, tmp_path: Path) -> None:
    from reviewsupport import HALF_SURE, SURE, UNSURE, make_digest, use_model

    _cli(web, "config", "set", "consolidate.review", "everything")
    use_model(web.root, tmp_path)
    make_digest(web.root, 1)
    _cli(web, "consolidate")
    queued = json.loads(_cli(web, "review", "--json"))["items"]
    assert len(queued) >= 3
    page = web.get("/review").text
    assert f"Waiting for review ({len(queued)})" in page and "every proposed fact" in page
    assert all(item["id"] in page for item in queued)
    assert page.count(">Accept</button>") == len(queued) and page.count(">Reject</button>") == len(queued)
    by_text = {item["text"]: item["id"] for item in queued}
    before = len(commits(web.root))
    accepted = web.post("/review/accept", {"item": by_text[SURE]})
    assert accepted.status == 303 and len(commits(web.root)) == before + 1
    assert commits(web.root)[0].startswith(f"review accept {by_text[SURE]}")
    edited = web.post("/review/accept", {"item": by_text[HALF_SURE],
                                         "text": "Staging RabbitMQ listens on port 5674."})
    assert edited.status == 303 and "edited" in edited.headers["location"]
    rejected = web.post("/review/reject", {"item": by_text[UNSURE]})
    assert rejected.status == 303
    left = json.loads(_cli(web, "review", "--json"))
    assert {i["id"] for i in left["items"]} == {i["id"] for i in queued} - {
        by_text[SURE], by_text[HALF_SURE], by_text[UNSURE]}
    assert left["rejectedRemembered"] == 1
    hits = json.loads(_cli(web, "search", "RabbitMQ port", "--json"))
    assert any("5674" in h["title"] + h.get("snippet", "") for h in hits)
    again = web.post("/review/accept", {"item": by_text[SURE]})  # a second click: told, nothing written
    assert again.status == 303 and "already" in again.headers["location"]
    assert web.post("/review/accept", {"item": "rffffffff"}).status in (400, 404)
    assert len(commits(web.root)) == before + 3


def test_a_runtime_merge_waits_in_the_page_with_the_items_it_replaces(web: WebPage, tmp_path: Path) -> None:
    from reviewsupport import use_model

    for text in ("Prefers tabs over spaces in Python code.", "Prefers tabs over spaces in all Python code"):
        _cli(web, "runtime", "add", "-t", "user", text)
    use_model(web.root, tmp_path, "maintain")
    [item] = json.loads(_cli(web, "runtime", "maintain", "--queue", "--json"))["queued"]
    page = web.get("/review").text
    assert item in page and "Replaces:" in page and "Prefers tabs over spaces in Python code." in page
    assert web.post("/review/accept", {"item": item}).status == 303
    assert (web.root / "global/runtime/USER.md").read_text() == "Prefers tabs over spaces in all Python code\n"
