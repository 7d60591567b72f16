"""The model ladder with fake model commands: who answers, who is benched, what is logged."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fakemodels import fake_model
from gitmem.errors import InvalidInputError, ModelError
from gitmem.models import config
from gitmem.models.ladder import ask
from gitmem.models.reply import clean_reply, fresh_lines
from gitmem.store.store import Store
from support import Cli


def _events(root: Path, event: str) -> list[dict[str, object]]:
    lines = (root / "logs" / "memory.log").read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e["event"] == event]


def _metrics(root: Path) -> dict[str, object]:
    return json.loads((root / "state" / "metrics.json").read_text(encoding="utf-8"))


def test_first_rung_with_text_wins_and_is_remembered(store: Store, tmp_path: Path) -> None:
    config.add_rung(store.root, "mute", fake_model(tmp_path, "empty"))
    config.add_rung(store.root, "good", fake_model(tmp_path, "good"))
    before = datetime.now(UTC)
    reply = ask(store.root, "Summarize this.", purpose="summarize")
    assert reply.rung == "good" and "**Delivery:**" in reply.text
    assert [(a.rung, a.outcome) for a in reply.attempts] == [("mute", "empty"), ("good", "ok")]
    ladder = config.load_ladder(store.root)
    assert [r.name for r in ladder.rungs] == ["good", "mute"]  # winner first, failed one last
    assert ladder.last_winner == "good"
    until = ladder.benched_until("mute", datetime.now(UTC))
    assert until is not None
    assert before + timedelta(minutes=14) < until <= datetime.now(UTC) + timedelta(minutes=15)
    # The next call costs one call: the remembered winner goes first.
    assert [a.rung for a in ask(store.root, "Again.", purpose="summarize").attempts] == ["good"]
    calls = _events(store.root, "model-call")
    assert [(c["rung"], c["outcome"]) for c in calls] == [("mute", "empty"), ("good", "ok"), ("good", "ok")]
    assert all(c["bytes_in"] > 0 and c["duration_ms"] >= 0 for c in calls)
    assert calls[1]["bytes_out"] > 100
    metrics = _metrics(store.root)
    assert metrics["modelCalls"] == {"total": 3, "summarize": 3}
    assert metrics["failures"] == {"model": {"empty": 1}}


def test_nonzero_exit_and_timeout_bench_the_rung_and_move_it_last(store: Store, tmp_path: Path) -> None:
    config.add_rung(store.root, "crashy", fake_model(tmp_path, "fail"))
    config.add_rung(store.root, "sleepy", fake_model(tmp_path, "slow"), timeout=0.5)
    config.add_rung(store.root, "good", fake_model(tmp_path, "good"))
    reply = ask(store.root, "Summarize this.", purpose="consolidate")
    assert [(a.rung, a.outcome) for a in reply.attempts] == [
        ("crashy", "exit-2"), ("sleepy", "timeout"), ("good", "ok")]
    assert reply.attempts[0].detail == "error: the model server refused the request"
    ladder = config.load_ladder(store.root)
    assert [r.name for r in ladder.rungs] == ["good", "crashy", "sleepy"]
    assert set(ladder.benched) == {"crashy", "sleepy"}
    report = config.ladder_report(store.root)
    assert [r["benched"] for r in report["rungs"]] == [False, True, True]
    assert report["rungs"][1]["benchedUntil"]


def test_all_rungs_failing_is_an_error_and_benched_rungs_are_still_tried(store: Store, tmp_path: Path) -> None:
    config.add_rung(store.root, "mute", fake_model(tmp_path, "empty"))
    config.add_rung(store.root, "crashy", fake_model(tmp_path, "fail"))
    with pytest.raises(ModelError, match="mute: empty; crashy: exit-2"):
        ask(store.root, "Summarize this.", purpose="summarize")
    # Both are benched now; fix one of them: a benched rung is still tried, and answers.
    config.add_rung(store.root, "crashy", fake_model(tmp_path, "good"))  # same name, new command
    with config.editing(store.root) as ladder:
        ladder.benched["crashy"] = (datetime.now(UTC) + timedelta(minutes=10)).isoformat()
    assert ask(store.root, "Summarize this.", purpose="summarize").rung == "crashy"
    assert _events(store.root, "model-failed")


def test_a_reply_of_reasoning_only_counts_as_empty(store: Store, tmp_path: Path) -> None:
    script = tmp_path / "thinker.sh"
    script.write_text("#!/bin/sh\ncat >/dev/null\necho '<think>I should answer with bullets.</think>'\n")
    script.chmod(0o755)
    config.add_rung(store.root, "thinker", str(script))
    with pytest.raises(ModelError, match="thinker: empty"):
        ask(store.root, "Summarize this.", purpose="summarize")


def test_reasoning_preamble_and_echoed_prompt_are_not_read_as_the_answer() -> None:
    prompt = "Reply with bullets like:\n- **label:** fact\nMaterial:\nuser: the port is 5433"
    reply = ("<think>maybe\n- **Guess:** not this</think>\n" + prompt + "\n- **Port:** staging uses 5433\n")
    cleaned = clean_reply(reply, prompt)
    assert "Guess" not in cleaned and "Material:" not in cleaned
    assert fresh_lines(cleaned, prompt) == ["- **Port:** staging uses 5433"]
    # A reply whose reasoning never closed (cut off) has no answer at all.
    assert clean_reply("<think>I will now write the bul", prompt) == ""
    # A closing tag whose opener was lost: the answer is what follows it.
    assert clean_reply("weighing options...</think>\nDONE x", prompt) == "DONE x"


def test_gitmem_model_is_a_one_rung_override_never_saved(store: Store, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    config.add_rung(store.root, "mute", fake_model(tmp_path, "empty"))
    monkeypatch.setenv("GITMEM_MODEL", fake_model(tmp_path, "good"))
    reply = ask(store.root, "Summarize this.", purpose="summarize")
    assert reply.rung == "GITMEM_MODEL" and len(reply.attempts) == 1
    monkeypatch.delenv("GITMEM_MODEL")
    saved = config.load_ladder(store.root)
    assert [r.name for r in saved.rungs] == ["mute"] and saved.last_winner is None


def test_ladder_holds_at_most_four_rungs(store: Store, tmp_path: Path) -> None:
    for n in range(4):
        config.add_rung(store.root, f"m{n}", "cat")
    with pytest.raises(InvalidInputError, match="already has 4 models"):
        config.add_rung(store.root, "m4", "cat")
    config.remove_rung(store.root, "m0")
    config.add_rung(store.root, "m4", "cat")
    assert [r.name for r in config.load_ladder(store.root).rungs] == ["m1", "m2", "m3", "m4"]


def test_models_cli_add_list_test_remove(gm: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gitmem.redaction

    monkeypatch.setattr(gitmem.redaction, "_SECRETS", set())  # secrets other tests registered
    assert gm("models", "add", "good", fake_model(tmp_path, "good")).exit_code == 0
    added = gm("models", "add", "keyed", "OPENAI_API_KEY=sk-live-123 llm --token abc -m x")
    assert added.exit_code == 0
    assert "sk-live-123" not in added.output and "abc" not in added.output
    listed = gm.json("models", "list")
    assert isinstance(listed, dict)
    assert [r["name"] for r in listed["rungs"]] == ["good", "keyed"]
    assert listed["rungs"][1]["command"] == "OPENAI_API_KEY=*** llm --token *** -m x"
    assert listed["rungs"][0]["benched"] is False and listed["rungs"][0]["benchedUntil"] is None
    tested = gm("models", "test", "good")
    assert tested.exit_code == 0 and "good: ok" in tested.output
    assert gm("models", "add", "crashy", fake_model(tmp_path, "fail")).exit_code == 0
    failed = gm("models", "test", "crashy")
    assert failed.exit_code == 3 and "exit-2" in failed.output
    assert gm("models", "test", "nobody").exit_code == 1
    assert gm("models", "add", "../bad", "cat").exit_code == 2
    assert gm("models", "remove", "keyed").exit_code == 0
    assert gm("models", "remove", "keyed").exit_code == 1
    # `models test` reports; it does not bench.
    assert gm.json("models", "list")["rungs"][1]["benched"] is False  # type: ignore[index]
    # The ladder is machine-local: never committed.
    assert "state/" in (gm.root / ".gitignore").read_text()


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0"])
def test_a_time_out_that_is_not_a_positive_finite_number_is_refused(gm: Cli, value: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    refused = gm("models", "add", "m", "cat", "--timeout", value)
    assert refused.exit_code == 2 and "positive, finite" in refused.output
    assert not (gm.root / config.LADDER_FILE).exists()
    assert gm("models", "add", "m", "cat").exit_code == 0
    monkeypatch.setenv("GITMEM_MODEL_TIMEOUT", value)
    with pytest.raises(InvalidInputError, match="positive, finite"):
        config.load_saved_ladder(gm.root)


def test_a_saved_time_out_that_is_not_a_number_falls_back_to_the_default(store: Store) -> None:
    """A state/models.json an earlier gitmem wrote with NaN (or edited by hand): the rung keeps
    working with the default time-out instead of every model call failing."""
    path = store.root / config.LADDER_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"rungs": [{"name": "m", "command": "cat", "timeout": NaN},'
                    ' {"name": "n", "command": "cat", "timeout": "soon"}]}')
    ladder = config.load_saved_ladder(store.root)
    assert [r.timeout for r in ladder.rungs] == [config.DEFAULT_TIMEOUT, config.DEFAULT_TIMEOUT]
