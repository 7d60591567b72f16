"""The context card again during a long session: whole after a compaction (saying what changed),
and every context.refreshMinutes through the prompt hook, only what changed since the session's
last card (recorded per session in state/injections.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitmem.cli import cli
from gitmem.integrate.reinject import INJECTIONS_FILE
from gitmem.store.store import Store
from gitmem.verbs.workspaces import associate
from support import Cli, git

HOOKS = Path(__file__).resolve().parent.parent / "fixtures" / "hooks"
SESSION = "4f2a9c1e-7d3b-4c55-9a1e-2b8f0c6d7e11"


@pytest.fixture
def project(store: Store, tmp_path: Path) -> Path:
    folder = tmp_path / "acme-api"
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    associate(store, "acme-api", "The API", folder.resolve())
    return folder


def payload(name: str, project: Path, **extra: str) -> str:
    data = json.loads((HOOKS / f"{name}.json").read_text())
    data.update(cwd=str(project), **extra)
    return json.dumps(data)


def run_hook(store: Store, *args: str, stdin: str) -> str:
    """The hook's additionalContext ('' when it printed nothing)."""
    done = CliRunner().invoke(cli, ["--root", str(store.root), *args], input=stdin, catch_exceptions=False)
    assert done.exit_code == 0 and done.stderr == "", done.stderr
    if not done.stdout.strip():
        return ""
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])


def session_start(store: Store, project: Path, source: str = "startup") -> str:
    return run_hook(store, "context", "--hook", stdin=payload("session_start", project, source=source))


def prompt(store: Store, project: Path, text: str = "What is the weather on Mars?") -> str:
    return run_hook(store, "search", "--hook", stdin=payload("user_prompt_submit", project, prompt=text))


def age_the_record(store: Store, minutes: float) -> None:
    """Move the session's last card `minutes` into the past (the hooks' clock is the wall clock)."""
    path = store.root / INJECTIONS_FILE
    data = json.loads(path.read_text())
    data[SESSION]["at"] -= minutes * 60
    path.write_text(json.dumps(data))


def test_the_card_is_recorded_per_session_as_hashes(store: Store, gm: Cli, project: Path) -> None:
    gm("decision", "Use Postgres 16 for every service", "--rationale", "one engine to run", workspace="acme-api")
    card = session_start(store, project)
    assert "Use Postgres 16" in card
    record = json.loads((store.root / INJECTIONS_FILE).read_text())[SESSION]
    assert record["workspace"] == "acme-api" and record["sections"]["Decisions in force"]
    assert "Postgres" not in (store.root / INJECTIONS_FILE).read_text()  # hashes, not the text
    subagent = run_hook(store, "context", "--hook", "--subagent", stdin=payload("subagent_start", project))
    assert "You are a subagent" in subagent
    after = json.loads((store.root / INJECTIONS_FILE).read_text())[SESSION]
    assert after["sections"] == record["sections"]  # the subagent's card is not the session's


def test_after_a_compaction_the_whole_card_comes_again_saying_what_changed(store: Store, gm: Cli,
                                                                          project: Path) -> None:
    gm("decision", "Use Postgres 16 for every service", "--rationale", "one engine to run", workspace="acme-api")
    session_start(store, project)
    # Another session records a lesson while this one runs.
    gm("remember", "The staging deploy needs the VPN up first", "--layer", "learnings", workspace="acme-api")
    again = session_start(store, project, source="compact")
    assert "Use Postgres 16" in again and "needs the VPN up first" in again  # the whole card
    assert "_Again after the compaction; changed since this session's last card: Learnings._" in again
    once_more = session_start(store, project, source="compact")
    assert "nothing changed since this session's last card" in once_more


def test_the_prompt_hook_hands_over_only_what_changed_on_its_cadence(store: Store, gm: Cli,
                                                                     project: Path) -> None:
    assert gm("config", "set", "context.refreshMinutes", "15").exit_code == 0
    gm("decision", "Use Postgres 16 for every service", "--rationale", "one engine to run", workspace="acme-api")
    old = gm.json("remember", "Deploys go out on Tuesdays", "--layer", "learnings", workspace="acme-api")
    session_start(store, project)
    gm("remember", "The staging deploy needs the VPN up first", "--layer", "learnings", workspace="acme-api")
    gm("forget", old["id"])  # type: ignore[index]
    assert prompt(store, project) == ""  # 15 minutes have not passed since the card
    age_the_record(store, 16)
    changed = prompt(store, project)
    assert changed.startswith("## gitmem memory — changed since this session's card of ")
    assert "### Learnings" in changed and "needs the VPN up first" in changed
    assert "1 line(s) of the earlier card no longer shown here" in changed
    assert "Postgres" not in changed and "### Decisions in force" not in changed  # unchanged: not repeated
    assert prompt(store, project) == ""  # recorded again: the next one is 15 minutes away
    age_the_record(store, 16)
    assert prompt(store, project) == ""  # due, but nothing changed


def test_the_changes_come_before_the_prompt_s_entries(store: Store, gm: Cli, project: Path) -> None:
    assert gm("config", "set", "context.refreshMinutes", "1").exit_code == 0
    session_start(store, project)
    gm("remember", "Deploy step: the VPN must be up before running the deploy script.", "--layer",
       "learnings", workspace="acme-api")
    age_the_record(store, 2)
    both = prompt(store, project, "what do we need before running the deploy?")
    assert both.index("## gitmem memory — changed") < both.index("gitmem entries that may bear")


def test_without_the_setting_or_a_recorded_card_nothing_is_handed_over(store: Store, gm: Cli,
                                                                       project: Path) -> None:
    session_start(store, project)
    gm("remember", "The staging deploy needs the VPN up first", "--layer", "learnings", workspace="acme-api")
    age_the_record(store, 24 * 60)
    assert prompt(store, project) == ""  # context.refreshMinutes is 0 by default: never
    assert gm("config", "set", "context.refreshMinutes", "1").exit_code == 0
    (store.root / INJECTIONS_FILE).unlink()
    assert prompt(store, project) == ""  # no card of this session known: it is recorded now
    assert SESSION in json.loads((store.root / INJECTIONS_FILE).read_text())
    refused = gm("config", "set", "context.refreshMinutes", "-1")
    assert refused.exit_code != 0 and "context.refreshMinutes cannot be -1" in refused.output


def test_ages_growing_with_the_clock_are_not_changes() -> None:
    from gitmem.integrate.reinject import changes_since, fingerprint
    from gitmem.verbs.context import Card, Section

    def card(*lines: str) -> Card:
        return Card("acme-api", [Section("Runtime memory", list(lines)),
                                 Section("Learnings", ["- Deploys freeze on Fridays [STALE 40d] (acme-api-lrn-0001)"])])

    before = card("- [importance=high; created=14d; updated=2d]\n  Prefers short answers")
    record = {"at": 1.0, "sections": fingerprint(before)}
    later = card("- [importance=high; created=16d; updated=4d]\n  Prefers short answers")
    later.sections[1].lines = ["- Deploys freeze on Fridays [STALE 42d] (acme-api-lrn-0001)"]
    assert changes_since(later, record).empty
    edited = card("- [importance=high; created=16d; updated=0d]\n  Prefers answers with the command first")
    changes = changes_since(edited, record)
    assert changes.names() == ["Runtime memory"] and changes.sections[0].removed == 1
