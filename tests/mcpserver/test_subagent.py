"""A server started with --subagent (or under GITMEM_SUBAGENT=1) reads but refuses every write;
errors reach the agent as one line, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.mcp.session import Session
from support import git

WRITE_CALLS = {
    "remember": {"text": "A fact", "layer": "semantic"},
    "forget": {"entry_id": "global-sem-0001"},
    "verify": {"entry_id": "global-sem-0001"},
    "decision": {"statement": "Use X", "rationale": "Because"},
    "codebase": {"topic": "app.py", "text": "Entry point"},
    "state": {"section": "Status", "content": "Alpha"},
    "working": {"activity": "did a thing"},
    "sync": {},
    "history": {},
    "capture": {"transcript": "/nonexistent.jsonl"},
    "runtime_add": {"text": "An item"},
    "runtime_replace": {"old": "An item", "new": "Another"},
    "runtime_remove": {"old": "An item"},
    "doc_add": {"text": "# Doc", "title": "Doc"},
    "batch": {"items": [{"op": "remember", "text": "A fact", "layer": "semantic"}]},
    "review_accept": {"item": "r0123456789"},
    "review_reject": {"item": "r0123456789", "reason": "wrong"},
}


def test_a_subagent_server_refuses_every_write_and_reads_freely(subagent_world) -> None:
    client = subagent_world.client
    head = git(subagent_world.root, "rev-parse", "HEAD")
    for name, arguments in WRITE_CALLS.items():
        result = client.call(name, arguments)
        assert result.is_error, name
        text = result.content[0].text
        assert text.startswith("gitmem: error: `gitmem ") and "subagents do not write memory" in text, text
    assert git(subagent_world.root, "rev-parse", "HEAD") == head
    card = client.call("context").content[0].text
    assert "You are a subagent" in card
    assert not client.call("search", {"query": "anything"}).is_error


def test_gitmem_subagent_in_the_environment_refuses_writes(store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITMEM_SUBAGENT", "1")
    session = Session(str(store.root), cwd=store.root.parent)
    try:
        assert session.subagent
        outcome = session.run(lambda s: "written", verb="remember")
        assert outcome.error is not None and "subagents do not write memory" in outcome.error
        assert session.run(lambda s: "read").data == "read"
    finally:
        session.close()


def test_an_unexpected_exception_is_one_internal_error_line(store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITMEM_DEBUG", raising=False)
    session = Session(str(store.root), cwd=store.root.parent)

    def broken(_store: object) -> None:
        raise RuntimeError("boom\nsecond line")

    try:
        outcome = session.run(broken)
        assert outcome.error is not None and outcome.error.startswith(
            "gitmem: internal error: RuntimeError: boom")
        assert "Traceback" not in outcome.shown()
    finally:
        session.close()


def test_a_missing_store_is_the_cli_message(tmp_path: Path) -> None:
    session = Session(str(tmp_path / "nowhere"), cwd=tmp_path)
    try:
        outcome = session.run(lambda s: None)
        assert outcome.error is not None and outcome.error.startswith("gitmem: error: ")
    finally:
        session.close()
