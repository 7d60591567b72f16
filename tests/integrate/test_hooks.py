"""The agent hooks against recorded Claude Code payloads (tests/fixtures/hooks): the context card
at SessionStart and SubagentStart, the prompt's entries at UserPromptSubmit, the background
capture at PreCompact and SessionEnd; every failure one line, never a blocking exit code."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitmem.cli import cli
from gitmem.store.store import Store
from gitmem.verbs.workspaces import associate
from support import Cli, git, run_gitmem

HOOKS = Path(__file__).resolve().parent.parent / "fixtures" / "hooks"
TRANSCRIPTS = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"


def payload(name: str, project: Path, transcript: Path | None = None) -> str:
    """A recorded payload with its folder (and transcript) pointed at this test's files."""
    data = json.loads((HOOKS / f"{name}.json").read_text())
    data["cwd"] = str(project)
    if transcript is not None:
        data["transcript_path"] = str(transcript)
    return json.dumps(data)


@pytest.fixture
def project(store: Store, tmp_path: Path) -> Path:
    folder = tmp_path / "acme-api"
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    associate(store, "acme-api", "The API", folder.resolve())
    return folder


def hook(store: Store, *args: str, stdin: str):
    return CliRunner().invoke(cli, ["--root", str(store.root), *args], input=stdin,
                              catch_exceptions=False)


def context_of(output: str, event: str) -> str:
    answer = json.loads(output)
    assert answer["hookSpecificOutput"]["hookEventName"] == event
    return str(answer["hookSpecificOutput"]["additionalContext"])


def test_session_start_gets_the_card_of_the_payloads_folder(store: Store, gm: Cli, project: Path) -> None:
    gm("working", "--section", "Task", "--content", "Move the queue to SQLite", workspace="acme-api")
    done = hook(store, "context", "--hook", stdin=payload("session_start", project))
    assert done.exit_code == 0
    card = context_of(done.stdout, "SessionStart")
    assert card.startswith("## gitmem memory — workspace acme-api")
    assert "Move the queue to SQLite" in card and "Writing nothing is a correct outcome" in card


def test_subagent_start_gets_the_subagent_card(store: Store, project: Path) -> None:
    done = hook(store, "context", "--hook", "--subagent", stdin=payload("subagent_start", project))
    card = context_of(done.stdout, "SubagentStart")
    assert "You are a subagent" in card and "do not write" in card


def test_a_prompt_gets_its_three_most_relevant_entries(store: Store, gm: Cli, project: Path) -> None:
    for n in range(5):
        gm("remember", f"Deploy step {n}: the VPN must be up before running the deploy script.",
           "--layer", "procedural", "--topic", f"deploy-{n}")
    gm("remember", "Lunch is at noon.", "--layer", "semantic")
    done = hook(store, "search", "--hook", stdin=payload("user_prompt_submit", project))
    assert done.exit_code == 0
    text = context_of(done.stdout, "UserPromptSubmit")
    assert len([line for line in text.splitlines() if line.startswith("- ")]) == 3
    assert "VPN must be up" in text and "Lunch" not in text


def test_a_prompt_with_nothing_relevant_adds_nothing(store: Store, project: Path) -> None:
    done = hook(store, "search", "--hook", stdin=payload("user_prompt_submit", project))
    assert done.exit_code == 0 and done.stdout == ""


def test_session_end_captures_in_the_background(store: Store, project: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "session.jsonl"
    shutil.copy(TRANSCRIPTS / "claude-code.jsonl", transcript)
    done = run_gitmem("--root", str(store.root), "capture", "--hook",
                      input_text=payload("session_end", project, transcript))
    assert done.returncode == 0, done.stderr
    assert "started in the background" in done.stdout
    digests = _wait_for(lambda: list((store.root / "digests").rglob("*.md")))
    assert digests, "the background capture wrote no digest"
    # The job records the hook once its capture has returned, a moment after the digest lands.
    log = store.root / "logs" / "memory.log"
    assert _wait_for(lambda: '"hook": "agent-capture"' in log.read_text()), log.read_text()


def test_a_failed_background_capture_is_logged(store: Store, project: Path, tmp_path: Path) -> None:
    missing = tmp_path / "gone.jsonl"
    done = run_gitmem("--root", str(store.root), "capture", "--hook",
                      input_text=payload("pre_compact", project, missing))
    assert done.returncode == 0, done.stderr
    log = store.root / "logs" / "memory.log"
    found = _wait_for(lambda: [line for line in log.read_text().splitlines()
                               if '"hook-failed"' in line] if log.exists() else [])
    assert found and "gone.jsonl" in found[0]


def test_hook_errors_are_one_line_and_never_block(store: Store, project: Path, tmp_path: Path) -> None:
    bad = hook(store, "context", "--hook", stdin="not json")
    assert bad.exit_code == 0
    assert "gitmem memory was not loaded: gitmem: error: --hook:" in context_of(bad.stdout, "SessionStart")
    nowhere = CliRunner().invoke(cli, ["--root", str(tmp_path / "none"), "search", "--hook"],
                                 input=payload("user_prompt_submit", project))
    assert nowhere.exit_code == 0 and nowhere.stdout == ""
    assert nowhere.stderr.startswith("gitmem: error: no gitmem store")
    no_transcript = hook(store, "capture", "--hook", stdin=json.dumps({"cwd": str(project)}))
    assert no_transcript.exit_code == 1
    assert no_transcript.stderr.strip() == "gitmem: error: --hook: the hook payload names no transcript_path"


def test_without_hook_the_argument_is_still_required(store: Store) -> None:
    assert CliRunner().invoke(cli, ["--root", str(store.root), "search"]).exit_code == 2
    assert CliRunner().invoke(cli, ["--root", str(store.root), "capture"]).exit_code == 2


def _wait_for(probe, seconds: float = 60.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.2)
    return probe()


def test_the_quick_path_answers_as_the_command_line_does(store: Store, gm: Cli, project: Path) -> None:
    from gitmem.integrate.hookrun import quick_argv

    assert quick_argv(["--root", "/s", "search", "--hook"]) == ("/s", None, "prompt")
    assert quick_argv(["-w", "k", "search", "--hook"]) == (None, "k", "prompt")
    assert quick_argv(["--root", "/s", "capture", "--hook", "--turn"]) == ("/s", None, "turn")
    assert quick_argv(["capture", "--hook"]) is None
    assert quick_argv(["search", "--hook", "--json"]) is None
    assert quick_argv(["search", "deploy"]) is None
    gm("remember", "The VPN must be up before running the deploy script.", "--layer", "procedural")
    stdin = payload("user_prompt_submit", project)
    quick = run_gitmem("--root", str(store.root), "search", "--hook", input_text=stdin)
    through_click = hook(store, "search", "--hook", stdin=stdin)
    assert quick.returncode == 0 and quick.stdout == through_click.stdout
    assert "VPN must be up" in quick.stdout


def test_a_bug_in_a_hook_is_one_line_and_exit_0(store: Store, project: Path) -> None:
    from gitmem.integrate.hookrun import answer_hook

    def broken(_payload: object, _root: object, _workspace: object) -> str:
        raise KeyError("token=abc123secretsecret")

    reply = answer_hook(payload("user_prompt_submit", project), broken, str(store.root), None)
    assert reply.exit_code == 0 and reply.stdout == ""
    assert reply.stderr.startswith("gitmem: internal error: KeyError:")
    card = answer_hook("{}", broken, None, None, error_as_context="SessionStart")
    assert "gitmem memory was not loaded: gitmem: internal error" in context_of(card.stdout, "SessionStart")


def test_the_quick_path_never_fails_the_prompt(store: Store, project: Path, tmp_path: Path) -> None:
    stdin = payload("user_prompt_submit", project)
    nowhere = run_gitmem("--root", str(tmp_path / "none"), "search", "--hook", input_text=stdin)
    assert nowhere.returncode == 0 and nowhere.stdout == ""
    assert nowhere.stderr.startswith("gitmem: error: no gitmem store")
    garbage = run_gitmem("--root", str(store.root), "search", "--hook", input_text="{not json")
    assert garbage.returncode == 0 and garbage.stdout == "" and garbage.stderr.count("\n") == 1
