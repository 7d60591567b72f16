"""`search --rerank` against fake model commands: a good one reorders, a failing, slow (timed
out), silent or unhelpful one leaves the lexical order with a note, never an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakemodels import fake_model
from gitmem.consolidate import rerank
from gitmem.models import config
from gitmem.models.config import load_ladder
from support import Cli

TEXTS = ["The deploy pipeline runs on GitHub Actions.", "The deploy needs the VPN up.",
         "Deploy reviews happen on Tuesdays."]


def _store(gm: Cli) -> list[str]:
    ids = []
    for text in TEXTS:
        made = gm("remember", text, "--layer", "semantic", "--topic", "deploy", "--json")
        assert made.exit_code == 0, made.output
        ids.append(json.loads(made.stdout)["id"])
    return ids


def _ids(gm: Cli, *args: str) -> tuple[list[str], str]:
    result = gm("search", "deploy", *args, "--json")
    assert result.exit_code == 0, result.output
    return [hit["id"] for hit in json.loads(result.stdout)], result.stderr


def test_a_good_model_reorders_the_hits_and_only_when_asked(gm: Cli, tmp_path: Path) -> None:
    _store(gm)
    config.add_rung(gm.root, "good", fake_model(tmp_path, "good"))
    lexical, _ = _ids(gm)
    reordered, note = _ids(gm, "--rerank")
    assert reordered == lexical[::-1] and "rerank" not in note  # the fake answers in reverse
    assert gm("config", "set", "search.rerank", "true").exit_code == 0
    assert _ids(gm)[0] == lexical[::-1]  # the setting turns it on
    assert _ids(gm, "--no-rerank")[0] == lexical


@pytest.mark.parametrize(("kind", "why"), [("fail", "(fail: exit-2)"), ("slow", "(slow: timeout)"),
                                           ("empty", "(empty: empty)"),
                                           ("prose", "the reply of prose named no entry")])
def test_a_failing_slow_or_unhelpful_model_keeps_the_lexical_order_with_a_note(
        gm: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, why: str) -> None:
    _store(gm)
    monkeypatch.setattr(rerank, "RERANK_SECONDS", 1.0)  # the slow fake sleeps 30 s
    config.add_rung(gm.root, kind, fake_model(tmp_path, kind))
    lexical, _ = _ids(gm)
    kept, note = _ids(gm, "--rerank")
    assert kept == lexical
    assert "rerank skipped, lexical order kept" in note and why in note  # the note says why
    assert load_ladder(gm.root).benched == {}  # a best-effort call benches no rung


def test_no_model_configured_keeps_the_lexical_order(gm: Cli) -> None:
    _store(gm)
    result = gm("search", "deploy", "--rerank")
    assert result.exit_code == 0 and "no model is configured" in result.stderr


def test_the_prompt_lists_the_hits_and_the_reply_is_read_leniently() -> None:
    hits = [{"title": "A", "snippet": "first  one"}, {"title": "B", "snippet": "second"}]
    prompt = rerank.prompt_for("when did we deploy?", hits)
    assert "Question: when did we deploy?" in prompt and "[2] B — second" in prompt
    assert rerank.order_from("2, 1, 2, 7", 2) == [1, 0]
    assert rerank.order_from("none of them", 2) == []
