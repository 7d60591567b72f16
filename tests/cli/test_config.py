"""`gitmem config list|get|set|unset` through the real CLI: every setting checked as gitmem reads
it, one commit per shared change, secrets write-only."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from gitmem.verbs.config import SETTINGS
from tests.support import Cli, commit_count, git, run_gitmem

TOKEN = "ghp_" + "Q7w9ErTy1uIoP2aSdF3gHjK4lZxC5vBnM6qW"


def _memory_json(root: Path) -> dict[str, object]:
    return json.loads((root / "memory.json").read_text(encoding="utf-8"))


def test_list_shows_every_setting_with_its_default(gm: Cli) -> None:
    listed = gm.json("config", "list")
    assert isinstance(listed, list)
    assert [item["key"] for item in listed] == [s.key for s in SETTINGS]
    by_key = {item["key"]: item for item in listed}
    assert by_key["freshness.stable"]["value"] == 365
    assert by_key["runtime.userLimitBytes"] == {**by_key["runtime.userLimitBytes"], "value": 4096,
                                                "explicit": False, "where": "shared"}
    assert by_key["git.token"]["where"] == "local" and by_key["git.token"]["value"] is None
    text = gm("config", "list").stdout
    assert "capture.maxTurns = 60  (default)" in text


def test_set_is_one_commit_and_takes_effect(gm: Cli) -> None:
    before = commit_count(gm.root)
    done = gm("config", "set", "contextMaxChars", "300")
    assert done.exit_code == 0, done.output
    assert "contextMaxChars = 300" in done.stdout
    assert commit_count(gm.root) == before + 1
    assert "config set contextMaxChars=300" in git(gm.root, "log", "-1", "--format=%s")
    assert _memory_json(gm.root)["settings"]["contextMaxChars"] == 300  # type: ignore[index]
    assert git(gm.root, "status", "--porcelain") == ""
    gm("remember", "x" * 200 + " one", "--layer", "semantic", "--importance", "critical")
    assert "Cut to fit" in gm("context").stdout  # the card's budget is the setting
    assert "Cut to fit" not in gm("context", "--max-chars", "6000").stdout
    assert gm.json("config", "get", "contextMaxChars")["value"] == 300  # type: ignore[index]
    before = commit_count(gm.root)
    again = gm("config", "set", "contextMaxChars", "300")
    assert again.exit_code == 0 and "[unchanged]" in again.stdout
    assert commit_count(gm.root) == before  # nothing changed: no commit


@pytest.mark.parametrize(("key", "value", "allowed"), [
    ("freshness.stable", "abc", "whole number of days from 1 to 100000"),
    ("freshness.volatile", "0", "whole number of days from 1 to 100000"),
    ("contextMaxChars", "5", "characters >= 200"),
    ("working.activityMaxItems", "0", "whole number >= 1"),
    ("runtime.userLimitBytes", "10", "bytes >= 64"),
    ("runtime.itemLimitBytes", "true", "bytes >= 64"),
    ("documents.bodyLimitBytes", "100", "bytes >= 1024"),
    ("capture.maxTurns", "-1", "whole number >= 0"),
    ("capture.maxTurnChars", "2.5", "whole number >= 0"),
    ("capture.summaryMaxAttempts", "0", "whole number >= 1"),
    ("consolidate.batchSize", "0", "whole number >= 1"),
    ("consolidate.keepDigests", "\"ten\"", "whole number >= 1"),
    ("serve.autoStart", "yes", "true or false"),
    ("serve.idleMinutes", "-3", "minutes >= 0"),
])
def test_a_bad_value_is_one_line_naming_what_is_allowed(gm: Cli, key: str, value: str, allowed: str) -> None:
    before, memory = commit_count(gm.root), (gm.root / "memory.json").read_bytes()
    done = gm("config", "set", key, value)
    assert done.exit_code == 2
    assert done.stderr.count("\n") == 1 and allowed in done.stderr and key in done.stderr
    assert commit_count(gm.root) == before
    assert (gm.root / "memory.json").read_bytes() == memory


def test_what_config_accepts_is_what_gitmem_reads(gm: Cli) -> None:
    """Each accepted value is read back by the part that uses it."""
    from gitmem.capture.pipeline import capture_settings
    from gitmem.consolidate.run import settings as consolidate_settings
    from gitmem.documents.shelf import limits_of
    from gitmem.runtime.tier import limits_of as runtime_limits
    from gitmem.store.store import open_store

    for key, value in [("capture.maxTurns", "7"), ("consolidate.batchSize", "4"),
                       ("documents.activeLimitBytes", "4096"), ("runtime.memoryLimitBytes", "2000"),
                       ("freshness.normal", "30")]:
        assert gm("config", "set", key, value).exit_code == 0
    store = open_store(gm.root)
    assert capture_settings(store).limits.max_turns == 7
    assert consolidate_settings(store)["batchSize"] == 4
    assert limits_of(store).active == 4096
    assert runtime_limits(store).memory == 2000
    assert store.registry.freshness_windows()["normal"] == 30
    store.close()


def test_unknown_key_lists_the_known_ones(gm: Cli) -> None:
    done = gm("config", "get", "freshness.stabel")
    assert done.exit_code == 2
    assert "unknown setting 'freshness.stabel'" in done.stderr and "freshness.stable" in done.stderr
    assert gm("config", "set", "nope", "1").exit_code == 2


def test_unset_brings_the_default_back_in_one_commit(gm: Cli) -> None:
    gm("config", "set", "freshness.stable", "400")
    before = commit_count(gm.root)
    done = gm.json("config", "unset", "freshness.stable")
    assert done["value"] == 365 and done["explicit"] is False and done["changed"] is True  # type: ignore[index]
    assert commit_count(gm.root) == before + 1
    assert "stable" not in _memory_json(gm.root)["settings"]["freshness"]  # type: ignore[index]


def test_a_subagent_cannot_change_settings(gm: Cli) -> None:
    done = gm("config", "set", "contextMaxChars", "900", env={"GITMEM_SUBAGENT": "1"})
    assert done.exit_code == 2 and "subagent" in done.stderr


def test_token_is_write_only_in_a_private_file(gm: Cli) -> None:
    done = run_gitmem("--root", str(gm.root), "config", "set", "git.token", "-", input_text=TOKEN + "\n")
    assert done.returncode == 0, done.stderr
    assert TOKEN not in done.stdout + done.stderr
    path = gm.root / "state" / "git-token"
    assert path.read_text().strip() == TOKEN
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    shown = run_gitmem("--root", str(gm.root), "config", "get", "git.token", "--json")
    assert json.loads(shown.stdout)["value"] == "***" and TOKEN not in shown.stdout
    listed = run_gitmem("--root", str(gm.root), "config", "list")
    assert "git.token = ***" in listed.stdout and TOKEN not in listed.stdout
    assert TOKEN not in git(gm.root, "log", "-p", "--all") + (gm.root / "memory.json").read_text()
    gone = gm.json("config", "unset", "git.token")
    assert gone["value"] is None and gone["changed"] is True and not path.exists()  # type: ignore[index]


def test_token_goes_to_the_credential_helper_when_one_keeps_it(gm: Cli, tmp_path: Path) -> None:
    git(tmp_path, "config", "--global", "credential.helper", "store")
    assert gm("config", "set", "git.remote", "https://git.example.com/team/memory.git").exit_code == 0
    done = run_gitmem("--root", str(gm.root), "config", "set", "git.token", "-", input_text=TOKEN)
    assert done.returncode == 0, done.stderr
    assert "credential helper" in done.stdout and TOKEN not in done.stdout
    assert TOKEN in (tmp_path / "home" / ".git-credentials").read_text()
    assert not (gm.root / "state" / "git-token").exists()
    shown = gm.json("config", "get", "git.token")
    assert shown["value"] == "***" and "store" in shown["stored_in"]  # type: ignore[index]


def test_remote_set_through_config_moves_a_token_out_of_the_url(gm: Cli) -> None:
    before = commit_count(gm.root)
    done = gm("config", "set", "git.remote", f"https://{TOKEN}@git.example.com/team/memory.git", "--json")
    assert done.exit_code == 0, done.output
    assert TOKEN not in done.stdout and TOKEN not in (gm.root / "memory.json").read_text()
    assert (gm.root / "state" / "git-token").read_text().strip() == TOKEN
    assert commit_count(gm.root) == before + 1
    assert gm.json("config", "get", "git.remote")["value"] == "https://git.example.com/team/memory.git"  # type: ignore[index]
    assert gm.json("config", "set", "git.branch", "trunk")["value"] == "trunk"  # type: ignore[index]
    assert git(gm.root, "rev-parse", "--abbrev-ref", "HEAD").strip() == "trunk"


def test_a_bad_value_already_in_memory_json_is_shown_not_fatal(gm: Cli) -> None:
    data = _memory_json(gm.root)
    data["settings"]["runtime"] = {"userLimitBytes": "lots"}  # type: ignore[index]
    (gm.root / "memory.json").write_text(json.dumps(data), encoding="utf-8")
    listed = gm.json("config", "list")
    item = next(i for i in listed if i["key"] == "runtime.userLimitBytes")  # type: ignore[union-attr]
    assert item["value"] == "lots" and "bytes >= 64" in item["problem"]
    assert gm("config", "set", "runtime.userLimitBytes", "5000").exit_code == 0
