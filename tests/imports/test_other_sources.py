"""`gitmem import` for Codex, Cursor, Copilot, Gemini CLI, mem0 and Letta, each from a fixture
written from the tool's documented file format (tests/fixtures/imports/<tool>/)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from importfixtures import stage

from support import Cli, commit_count


def _report(gm: Cli, tool: str, path: Path) -> dict[str, Any]:
    report = gm.json("import", tool, str(path))
    assert isinstance(report, dict)
    return report


def _added(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["title"]: a for a in report["actions"] if a["action"] == "added"}


def _text(gm: Cli, action: dict[str, Any]) -> str:
    return (gm.root / action["path"]).read_text(encoding="utf-8")


def _home(copy: Path) -> None:
    shutil.copytree(copy / "home", Path(os.environ["HOME"]), dirs_exist_ok=True)


def test_codex_agents_files(gm: Cli, tmp_path: Path) -> None:
    copy = stage("codex", tmp_path)
    _home(copy)
    got = _added(_report(gm, "codex", copy / "project"))
    assert got["Shell"]["path"].startswith("global/")
    assert {"Setup commands", "Code style", "Testing instructions", "Release freeze", "Routing"} <= set(got)
    assert got["Routing"]["source"] == "packages/web/AGENTS.md:3"
    assert "überall" in _text(gm, got["Release freeze"])
    assert "Source:** import:codex:AGENTS.override.md#override/release-freeze" in _text(gm, got["Release freeze"])


def test_cursor_rules_with_front_matter(gm: Cli, tmp_path: Path) -> None:
    copy = stage("cursor", tmp_path)
    got = _added(_report(gm, "cursor", copy / "project"))
    typescript = got["TypeScript conventions for the web app"]
    assert "**Applies-to:** **/*.ts, **/*.tsx" in _text(gm, typescript)
    assert "**Always-apply:** False" in _text(gm, typescript)
    assert "ça va sans dire" in _text(gm, got["Styling"])
    assert got["Structure"]["source"] == ".cursor/rules/frontend/components.mdc:8"
    assert got["Mobile rules"]["source"].startswith("apps/mobile/.cursor/rules/native.mdc")
    assert "Lumen" in _text(gm, got[".cursorrules"])


def test_copilot_instructions(gm: Cli, tmp_path: Path) -> None:
    copy = stage("copilot", tmp_path)
    got = _added(_report(gm, "copilot", copy / "project"))
    assert "Harbor" in _text(gm, got["Copilot instructions"])
    assert "ruff format" in _text(gm, got["Conventions"])
    assert '**Applies-to:** **/migrations/*.py' in _text(gm, got["Migrations"])


def test_gemini_context_files_and_saved_memories(gm: Cli, tmp_path: Path) -> None:
    copy = stage("gemini", tmp_path)
    _home(copy)
    report = _report(gm, "gemini", copy / "project")
    got = _added(report)
    for fact in ("My preferred language is Rust.", "The staging cluster is called kestrel-staging.",
                 "私の名前はミラです。"):
        assert got[fact]["path"].startswith("global/"), fact
    assert "Gemini Added Memories" not in got
    assert got["Services"]["source"] == "docs/architecture.md:3"  # followed @import
    assert got["Database"]["path"].startswith("workspaces/project/")
    # The save-memory tool appends: a new fact is added, the others stay unchanged.
    memory = Path(os.environ["HOME"]) / ".gemini" / "GEMINI.md"
    memory.write_text(memory.read_text(encoding="utf-8") + "- Deploys happen on Tuesdays.\n", encoding="utf-8")
    again = _report(gm, "gemini", copy / "project")
    assert again["counts"].get("added") == 1 and "updated" not in again["counts"]


def test_mem0_export(gm: Cli, tmp_path: Path) -> None:
    copy = stage("mem0", tmp_path)
    got = _added(_report(gm, "mem0", copy / "export.json"))
    food = _text(gm, got["Prefers vegetarian food and avoids mushrooms"])
    assert "**Created:** 2026-10-02" in food and "**Tags:** food, preferences" in food
    assert "**Mem0-user:** mira" in food
    assert got["Decided to use Postgres over MongoDB for the billing service"]["id"].startswith("global-dec-")
    export = copy / "export.json"
    export.write_text(export.read_text(encoding="utf-8").replace("lives in Zürich", "lives in Basel"),
                      encoding="utf-8")
    updated = [a for a in _report(gm, "mem0", export)["actions"] if a["action"] == "updated"]
    assert [a["id"] for a in updated] == [got["Works at Orbit Labs as a backend engineer; lives in Zürich"]["id"]]


def test_letta_agent_files(gm: Cli, tmp_path: Path) -> None:
    copy = stage("letta", tmp_path)
    got = _added(_report(gm, "letta", copy / "support-agent.af"))
    assert set(got) == {"support-bot: human", "support-bot: persona", "support-bot: known_issues"}
    human = _text(gm, got["support-bot: human"])
    assert "Jonas Ødegård" in human and "**Letta-block:** human" in human
    assert got["support-bot: known_issues"]["id"].startswith("global-lrn-")
    legacy = _added(_report(gm, "letta", copy / "legacy.af"))
    assert set(legacy) == {"old-agent: human", "old-agent: persona"}


@pytest.mark.parametrize(("tool", "place", "message"), [
    ("codex", "project/AGENTS.md", "AGENTS.md:4: not UTF-8 text"),
    ("cursor", "project/.cursor/rules/broken.mdc", ".cursor/rules/broken.mdc:2: front matter is not valid YAML"),
    ("copilot", "project/.github/instructions/bad.instructions.md",
     ".github/instructions/bad.instructions.md:2: front matter is not valid YAML"),
    ("gemini", "project/GEMINI.md", "GEMINI.md:2: front matter is not valid YAML"),
])
def test_a_malformed_instruction_file_stops_the_import(gm: Cli, tmp_path: Path, tool: str, place: str,
                                                       message: str) -> None:
    copy = stage(tool, tmp_path)
    broken = next((copy / "malformed").iterdir())
    shutil.copy(broken, copy / place)
    before = commit_count(gm.root)
    result = gm("import", tool, str(copy / "project"))
    assert result.exit_code == 2
    assert result.output.strip() == f"gitmem: error: cannot import {message}; nothing was written"
    assert commit_count(gm.root) == before


@pytest.mark.parametrize(("tool", "name", "message"), [
    ("mem0", "malformed.json", "malformed.json:4: not JSON (Expecting ',' delimiter)"),
    ("letta", "malformed.af", "malformed.af:1: memory block 'human' has no text value"),
])
def test_malformed_json_sources_name_file_and_line(gm: Cli, tmp_path: Path, tool: str, name: str,
                                                   message: str) -> None:
    copy = stage(tool, tmp_path)
    before = commit_count(gm.root)
    result = gm("import", tool, str(copy / name))
    assert result.exit_code == 2
    assert result.output.strip() == f"gitmem: error: cannot import {message}; nothing was written"
    assert commit_count(gm.root) == before


def test_two_memories_under_one_id_are_both_kept_and_a_second_import_changes_nothing(
        gm: Cli, tmp_path: Path) -> None:
    """A source that gives two notes one anchor (two mem0 memories with one id, or 7 and "7"):
    each is an entry, in the order they come, and importing the file again finds each."""
    export = tmp_path / "mem0.json"
    export.write_text(json.dumps({"results": [
        {"id": "7", "memory": "Prefers tea in the morning", "user_id": "mira"},
        {"id": 7, "memory": "Lives in Oslo and cycles to work", "user_id": "mira"},
        {"id": "7", "memory": "Reads crime novels on the train", "user_id": "mira"},
    ]}), encoding="utf-8")
    first = _report(gm, "mem0", export)
    assert sorted(_added(first)) == ["Lives in Oslo and cycles to work", "Prefers tea in the morning",
                                     "Reads crime novels on the train"]
    commits = commit_count(gm.root)
    again = _report(gm, "mem0", export)
    assert {a["action"] for a in again["actions"]} == {"unchanged"} and commit_count(gm.root) == commits
