"""Every core verb through click's CliRunner, bad input, and the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from support import Cli, commit_count, git, run_gitmem


def test_init_creates_layout_and_one_commit(gm: Cli) -> None:
    root = gm.root
    for name in (".gitignore", ".gitattributes", "memory.json", "SYSTEM.md", "global/INDEX.md"):
        assert (root / name).is_file(), name
    assert "/index/" in (root / ".gitignore").read_text()
    assert commit_count(root) == 1
    assert git(root, "status", "--porcelain") == ""
    again = gm("init")
    assert again.exit_code == 0 and "already initialised" in again.output
    assert commit_count(root) == 1


def test_remember_prints_id_and_commits_once(gm: Cli) -> None:
    result = gm("remember", "Deploys go through staging", "--layer", "procedural", "--topic", "deploy")
    assert result.exit_code == 0
    assert result.stdout.strip() == "global-pro-0001"
    assert commit_count(gm.root) == 2
    assert "remember: global-pro-0001" in git(gm.root, "log", "-1", "--format=%s")
    text = (gm.root / "global/procedural/deploy.md").read_text()
    assert "**Id:** global-pro-0001" in text
    index = (gm.root / "global/procedural.md").read_text()
    assert "[deploy](procedural/deploy.md) — 1 entry" in index
    assert git(gm.root, "status", "--porcelain") == ""


def test_remember_all_options_and_show_json(gm: Cli) -> None:
    first = gm("remember", "old port 5432", "-l", "semantic", "-t", "db").stdout.strip()
    out = gm("remember", "Staging database listens on 5433", "-l", "semantic", "-t", "db",
             "--title", "Staging DB port", "--importance", "high", "--volatility", "volatile",
             "--until", "2099-01-01", "--source", "session:42", "--supersedes", first)
    new = out.stdout.strip()
    assert new == "global-sem-0002"
    record = gm.json("show", new)
    assert record["title"] == "Staging DB port"
    assert record["fields"]["Importance"] == "high"
    assert record["fields"]["Valid-until"] == "2099-01-01"
    assert record["fields"]["Source"] == "session:42"
    assert record["fields"]["Supersedes"] == first
    assert record["path"] == "global/semantic/db.md"
    old = gm.json("show", first)
    assert old["fields"]["Superseded-by"] == new
    assert old["status"] == "superseded"
    listed = gm.json("list", "--layer", "semantic")
    assert [r["id"] for r in listed] == [new]
    assert {r["id"] for r in gm.json("list", "--all")} == {first, new}


def test_duplicate_text_returns_existing_id_without_commit(gm: Cli) -> None:
    first = gm("remember", "Use uv  for installs", "-l", "semantic").stdout.strip()
    before = commit_count(gm.root)
    again = gm("remember", "use UV for installs", "-l", "semantic")
    assert again.stdout.strip() == first
    assert commit_count(gm.root) == before


def test_forget_refuses_readd_and_undo_releases(gm: Cli) -> None:
    entry = gm("remember", "a fact to forget", "-l", "semantic").stdout.strip()
    assert gm("forget", entry).exit_code == 0
    assert gm.json("show", entry)["status"] == "forgotten"
    refused = gm("remember", "a fact to forget", "-l", "semantic")
    assert refused.exit_code == 2 and entry in refused.stderr
    assert gm("forget", entry, "--undo").exit_code == 0
    assert gm.json("show", entry)["status"] == "live"
    forced = gm("forget", entry)
    assert forced.exit_code == 0
    assert gm("remember", "a fact to forget", "-l", "semantic", "--force").stdout.strip() == "global-sem-0002"


def test_verify_updates_verified(gm: Cli) -> None:
    entry = gm("remember", "x", "-l", "learnings").stdout.strip()
    result = gm("verify", entry)
    assert result.exit_code == 0
    assert gm.json("show", entry)["fields"]["Verified"]


def test_decision_sections_are_parsed_back(gm: Cli) -> None:
    from gitmem.verbs.decisions import parse_decision_body

    result = gm("decision", "Use pygit2 for git", "--rationale", "no subprocess per commit",
                "--context", "every write commits", "-a", "GitPython", "-a", "the git binary",
                "--consequences", "only git.py imports pygit2")
    entry_id = result.stdout.strip()
    assert entry_id == "global-dec-0001"
    record = gm.json("show", entry_id)
    fields = parse_decision_body(record["body"])
    assert record["decision"] == fields
    assert fields == {"context": "every write commits", "rationale": "no subprocess per commit",
                      "alternatives": ["GitPython", "the git binary"],
                      "consequences": "only git.py imports pygit2"}
    assert "decision: global-dec-0001" in git(gm.root, "log", "-1", "--format=%s")


def test_workspace_verbs_state_working_codebase(gm: Cli) -> None:
    assert gm("state", "Layout", "src/ has code", workspace="proj").exit_code == 0
    assert gm("state", "Health", "green", workspace="proj").exit_code == 0
    assert gm("state", "Layout", "src/ and tests/", workspace="proj").exit_code == 0
    state = (gm.root / "workspaces/proj/state.md").read_text()
    assert state.count("## Layout") == 1 and "src/ and tests/" in state and "src/ has code" not in state
    assert state.count("\n**Verified:** 2") == 2
    assert "\n\n## Health" in state
    assert gm("working", "--section", "Task", "--content", "ship it", workspace="proj").exit_code == 0
    for note in ("one", "one", "two"):
        gm("working", "--activity", note, workspace="proj")
    working = (gm.root / "workspaces/proj/working.md").read_text()
    assert "THIS FILE BELONGS TO THE AGENT" in working
    assert working.count("— one") == 1 and "— two" in working
    cod = gm("codebase", "src/store.py", "the store API", workspace="proj").stdout.strip()
    again = gm("codebase", "src/store.py", "the store API, now with locks", workspace="proj").stdout.strip()
    assert cod == again == "proj-cod-0001"
    assert gm.json("show", cod)["body"] == "the store API, now with locks"
    workspaces = gm.json("workspaces")
    assert [w["key"] for w in workspaces] == ["proj"]


def test_working_activity_log_is_trimmed(gm: Cli) -> None:
    for number in range(30):
        gm("working", "--activity", f"note {number}", workspace="proj")
    body = gm.root.joinpath("workspaces/proj/working.md").read_text()
    assert "note 29" in body and "note 9 " not in body and body.count("— note") == 20


def test_associate_and_context(gm: Cli, tmp_path: Path) -> None:
    folder = tmp_path / "checkout"
    folder.mkdir()
    assert gm("associate", "myproj", "--title", "My project", "--path", str(folder)).exit_code == 0
    data = json.loads((gm.root / "memory.json").read_text())
    assert data["workspaces"]["myproj"]["title"] == "My project"
    assert str(folder) not in (gm.root / "memory.json").read_text()  # machine paths stay local
    gm("state", "Layout", "all in src", workspace="myproj")
    gm("decision", "Tabs over spaces", "-r", "team vote", workspace="myproj", )
    card = gm.json("context", "--cwd", str(folder))
    assert card["workspace"] == "myproj"
    assert "all in src" in card["text"]
    assert "Tabs over spaces" in card["text"]
    assert "nothing recorded yet" in card["text"]  # working memory
    assert "Writing nothing is a correct outcome" in card["text"]
    sub = gm("context", "--cwd", str(folder), "--subagent")
    assert "do not write" in sub.stdout


def test_context_budget_says_when_cut(gm: Cli) -> None:
    for number in range(40):
        gm("remember", f"lesson number {number} with some words", "-l", "learnings")
    card = gm.json("context", "--max-chars", "400")
    assert len(card["text"]) <= 400
    assert card["truncated"]
    assert "Absence here is not deletion" in card["text"]


def test_status_system_check(gm: Cli) -> None:
    gm("remember", "fact", "-l", "semantic")
    data = gm.json("status")
    assert data["entries"] == 1 and data["dirty"] == [] and data["system_doc_stale"] is False
    assert gm("system").exit_code == 0
    assert gm("check").exit_code == 0


def test_subagent_writes_refused(gm: Cli) -> None:
    result = gm("remember", "x", "-l", "semantic", env={"GITMEM_SUBAGENT": "1"})
    assert result.exit_code == 2 and "subagent" in result.stderr
    assert commit_count(gm.root) == 1


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["remember", "x", "--layer", "nonsense"], "unknown layer"),
        (["remember", "   ", "--layer", "semantic"], "must not be empty"),
        (["remember", "x" * 9000, "--layer", "semantic"], "8 KiB"),
        (["--workspace", "../../x", "state", "S", "c"], "invalid workspace key"),
        (["remember", "x", "-l", "semantic", "--topic", "../../etc/passwd"], "escape"),
        (["remember", "x", "-l", "semantic", "--until", "tomorrow"], "YYYY-MM-DD"),
        (["--workspace", "global", "remember", "x", "-l", "codebase"], "invalid workspace key"),
        (["remember", "x"], "Missing option '--layer'"),
        (["show", "not-an-id"], "malformed Id"),
        (["working", "--section", "Mood", "--content", "x", "--workspace", "w"], "unknown working section"),
    ],
)
def test_bad_input_is_one_line_exit_2_nothing_written(gm: Cli, args: list[str], needle: str) -> None:
    before = commit_count(gm.root)
    result = gm(*args)
    assert result.exit_code == 2, result.output
    assert needle in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output
    assert commit_count(gm.root) == before
    assert git(gm.root, "status", "--porcelain") == ""


def test_malformed_hand_written_entry_is_left_out_and_refuses_only_writes_into_it(gm: Cli) -> None:
    topic = gm.root / "global/semantic/hand.md"
    topic.parent.mkdir(parents=True, exist_ok=True)
    text = "## A hand entry\nbody\n\n**Id:** global-sem-12ab\n"
    topic.write_text(text)
    before = commit_count(gm.root)
    result = gm("remember", "x", "-l", "semantic")
    assert result.exit_code == 0, result.output
    assert "global/semantic/hand.md:1 (malformed Id 'global-sem-12ab'" in result.stderr
    assert commit_count(gm.root) == before + 1 and topic.read_text() == text
    into = gm("remember", "y", "-l", "semantic", "-t", "hand")
    assert into.exit_code == 2
    assert "global/semantic/hand.md:1: malformed Id 'global-sem-12ab'" in into.stderr
    assert "uncommitted hand edit" in into.stderr
    assert commit_count(gm.root) == before + 1
    assert topic.read_text() == text


def test_a_hint_in_a_hand_edit_does_not_stop_a_write(gm: Cli) -> None:
    topic = gm.root / "global/semantic/hand.md"
    topic.parent.mkdir(parents=True, exist_ok=True)
    topic.write_text("## A hand entry\nbody\n\n**Importance:** urgent\n")
    result = gm("remember", "x", "-l", "semantic")
    assert result.exit_code == 0, result.output
    assert git(gm.root, "status", "--porcelain") == ""
    assert "**Importance:** urgent" in topic.read_text()  # kept as written; check hints at it
    check = gm("check")
    assert check.exit_code == 0
    assert "hint: global/semantic/hand.md:1: bad Importance 'urgent'" in check.stdout


def test_broken_memory_json_is_reported_and_never_committed(gm: Cli) -> None:
    """A broken memory.json stops no write: gitmem reads the last good version from git, says so,
    and leaves the broken file out of every commit until it is fixed (decision 0030)."""
    (gm.root / "memory.json").write_text("{not json")
    result = gm("remember", "x", "-l", "semantic")
    assert result.exit_code == 0, result.output
    assert "memory.json is not valid JSON" in result.stderr and "gitmem reads the version committed" in result.stderr
    assert "memory.json" not in git(gm.root, "show", "--name-only", "--format=", "HEAD")
    assert git(gm.root, "status", "--porcelain").strip() == "M memory.json"
    assert (gm.root / "memory.json").read_text() == "{not json"
    check = gm("check")
    assert check.exit_code == 2 and "memory.json:1: memory.json is not valid JSON" in check.stdout


def test_unknown_id_is_exit_1(gm: Cli) -> None:
    result = gm("show", "global-sem-0042")
    assert result.exit_code == 1 and "no entry" in result.stderr


def test_no_store_is_a_clear_error(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from gitmem.cli.main import cli

    result = CliRunner().invoke(cli, ["--root", str(tmp_path / "none"), "status"])
    assert result.exit_code == 2 and "gitmem init" in result.stderr


def test_workspace_from_origin_url_of_cwd_repo(store_root: Path, tmp_path: Path) -> None:
    """Inside a git repo with an origin, workspace verbs need no flag; the cwd repo is untouched."""
    assert run_gitmem("--root", str(store_root), "init").returncode == 0
    repo = tmp_path / "checkout"
    repo.mkdir()
    git(repo, "init", "-b", "main")
    git(repo, "remote", "add", "origin", "https://github.com/Acme/Rocket.git")
    done = run_gitmem("--root", str(store_root), "state", "Layout", "rockets", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert (store_root / "workspaces/acme-rocket/state.md").is_file()
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "log", check=False) == ""  # no commit landed in the caller's repo


def test_end_to_end_subprocess(tmp_path: Path) -> None:
    root = tmp_path / "e2e"
    env = {"GITMEM_ROOT": str(root)}
    assert run_gitmem("init", env=env).returncode == 0
    done = run_gitmem("remember", "Subprocess fact", "--layer", "semantic", env=env)
    assert done.returncode == 0 and done.stdout.strip() == "global-sem-0001"
    shown = run_gitmem("show", "global-sem-0001", "--json", env=env)
    assert json.loads(shown.stdout)["title"] == "Subprocess fact"
    bad = run_gitmem("remember", "x", "--layer", "bogus", env=env)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
    assert run_gitmem("--help").returncode == 0
    assert os.path.basename(sys.executable)
