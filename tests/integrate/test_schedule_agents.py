"""`gitmem integrate gemini`, `opencode` and `copilot` (and codex's schedule): the MCP entry in the agent's
config, the rules section, and the agent's session folder on the warm server's capture
schedule; `--remove` takes out exactly that, and the person's edits stay."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from gitmem.capture.scheduled import SCHEDULE_FILE, scheduled_folders
from gitmem.serve.jobs import capture_job
from support import Cli

SAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"
SETTINGS = {"theme": "GitHub", "mcpServers": {"docs": {"command": "docs-server", "args": ["--stdio"]}}}


@pytest.fixture
def home() -> Path:
    return Path(os.environ["HOME"])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    (folder / "GEMINI.md").write_text("# Shop\n\nUse pnpm, never npm.\n")
    (folder / "AGENTS.md").write_text("# Rules\n\nRun the tests before you commit.\n")
    return folder


def schedule(gm: Cli) -> dict[str, object]:
    path = gm.root / SCHEDULE_FILE
    return json.loads(path.read_text()) if path.exists() else {}


def test_gemini_gets_its_server_rules_and_scheduled_chats(gm: Cli, home: Path, project: Path) -> None:
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(SETTINGS, indent=2))
    done = gm("integrate", "gemini", "--project", str(project))
    assert done.exit_code == 0, done.output
    data = json.loads(settings.read_text())
    assert data["theme"] == "GitHub" and data["mcpServers"]["docs"]["command"] == "docs-server"
    server = data["mcpServers"]["gitmem"]
    assert server["args"][-1] == "mcp" and "--root" in server["args"]
    rules = (project / "GEMINI.md").read_text()
    assert rules.startswith("# Shop\n\nUse pnpm, never npm.\n") and "## Memory (gitmem)" in rules
    assert schedule(gm) == {str(home / ".gemini" / "tmp"): {"agent": "gemini"}}
    assert "warm server captures" in done.stderr


def test_gemini_remove_keeps_a_hand_edit_and_restores_the_rest(gm: Cli, home: Path, project: Path) -> None:
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(SETTINGS, indent=2))
    gm("integrate", "gemini", "--project", str(project))
    data = json.loads(settings.read_text())
    data["mcpServers"]["gitmem"]["trust"] = True  # the person's own addition to gitmem's entry
    data["model"] = {"name": "gemini-2.5-pro"}
    settings.write_text(json.dumps(data, indent=2))
    again = gm("integrate", "gemini", "--project", str(project))
    assert again.stdout.startswith("nothing to change") and json.loads(settings.read_text()) == data
    done = gm("integrate", "gemini", "--project", str(project), "--remove")
    assert done.exit_code == 0, done.output
    assert json.loads(settings.read_text()) == {**SETTINGS, "model": {"name": "gemini-2.5-pro"}}
    assert (project / "GEMINI.md").read_text() == "# Shop\n\nUse pnpm, never npm.\n"
    assert not (gm.root / SCHEDULE_FILE).exists()


def test_gemini_user_settings_and_a_foreign_server_refused(gm: Cli, home: Path, project: Path) -> None:
    done = gm("integrate", "gemini", "--user", "--project", str(project))
    assert done.exit_code == 0, done.output
    assert "gitmem" in json.loads((home / ".gemini" / "settings.json").read_text())["mcpServers"]
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"mcpServers": {"gitmem": {"command": "someone-else"}}}))
    refused = gm("integrate", "gemini", "--project", str(project))
    assert refused.exit_code != 0 and "does not run gitmem" in refused.stderr
    assert json.loads(settings.read_text()) == {"mcpServers": {"gitmem": {"command": "someone-else"}}}


def test_opencode_gets_its_server_rules_and_scheduled_storage(gm: Cli, home: Path, project: Path) -> None:
    config = project / "opencode.json"
    config.write_text(json.dumps({"$schema": "https://opencode.ai/config.json", "model": "anthropic/claude-sonnet-4"}))
    done = gm("integrate", "opencode", "--project", str(project))
    assert done.exit_code == 0, done.output
    data = json.loads(config.read_text())
    server = data["mcp"]["gitmem"]
    assert server["type"] == "local" and server["command"][-1] == "mcp" and server["enabled"] is True
    assert data["model"] == "anthropic/claude-sonnet-4"
    agents = (project / "AGENTS.md").read_text()
    assert agents.startswith("# Rules\n") and "integrate opencode" in agents
    data = home / ".local" / "share" / "opencode"
    assert schedule(gm) == {str(data): {"agent": "opencode"}}
    gm("integrate", "opencode", "--project", str(project), "--remove")
    assert json.loads(config.read_text()) == {"$schema": "https://opencode.ai/config.json",
                                              "model": "anthropic/claude-sonnet-4"}
    assert (project / "AGENTS.md").read_text() == "# Rules\n\nRun the tests before you commit.\n"
    assert schedule(gm) == {}


def test_opencode_and_codex_sections_live_side_by_side_in_agents_md(gm: Cli, home: Path, project: Path) -> None:
    gm("integrate", "codex", "--project", str(project))
    gm("integrate", "opencode", "--project", str(project))
    agents = (project / "AGENTS.md").read_text()
    assert "integrate codex" in agents and "integrate opencode" in agents
    assert set(schedule(gm)) == {str(home / ".codex" / "sessions"), str(home / ".local" / "share" / "opencode")}
    gm("integrate", "codex", "--project", str(project), "--remove")
    agents = (project / "AGENTS.md").read_text()
    assert "integrate codex" not in agents and "integrate opencode" in agents
    assert set(schedule(gm)) == {str(home / ".local" / "share" / "opencode")}
    gm("integrate", "opencode", "--project", str(project), "--remove")
    assert not (project / "opencode.json").exists()
    assert (project / "AGENTS.md").read_text() == "# Rules\n\nRun the tests before you commit.\n"


def test_the_scheduled_capture_reads_each_folder_on_the_schedule(gm: Cli, home: Path, project: Path) -> None:
    assert capture_job(gm.root).startswith("skipped: no session folder")
    assert gm("config", "set", "capture.minSignalChars", "0").exit_code == 0
    gm("integrate", "opencode", "--project", str(project))
    gm("integrate", "gemini", "--project", str(project))
    storage = home / ".local" / "share" / "opencode" / "storage"
    shutil.copytree(SAMPLES / "opencode" / "storage", storage)
    chats = home / ".gemini" / "tmp" / "shop" / "chats"
    chats.mkdir(parents=True)
    shutil.copy(SAMPLES / "gemini-session.jsonl", chats / "session-2026-12-02T10-00-8c1d2e3f.jsonl")
    assert [f.agent for f in scheduled_folders(gm.root)] == ["opencode", "gemini"]
    assert capture_job(gm.root) == "2 digest(s) from 3 transcript(s) in 2 folders"
    assert capture_job(gm.root) == "0 digest(s) from 3 transcript(s) in 2 folders"  # nothing new


def test_opencode_schedule_moves_from_the_storage_folder_to_the_data_folder(gm: Cli, home: Path, project: Path) -> None:
    storage = home / ".local" / "share" / "opencode" / "storage"
    (gm.root / SCHEDULE_FILE).parent.mkdir(parents=True, exist_ok=True)
    (gm.root / SCHEDULE_FILE).write_text(json.dumps({str(storage): {"agent": "opencode"},
                                                     "/elsewhere": {"agent": "gemini"}}))
    gm("integrate", "opencode", "--project", str(project))  # what an earlier gitmem scheduled is replaced
    assert schedule(gm) == {"/elsewhere": {"agent": "gemini"}, str(storage.parent): {"agent": "opencode"}}


def test_the_scheduled_capture_reads_opencodes_database_in_its_data_folder(gm: Cli, home: Path, project: Path) -> None:
    import sqlite3

    assert gm("config", "set", "capture.minSignalChars", "0").exit_code == 0
    gm("integrate", "opencode", "--project", str(project))
    data = home / ".local" / "share" / "opencode"
    (data / "snapshot").mkdir(parents=True)
    with sqlite3.connect(data / "opencode.db") as db:
        db.executescript((SAMPLES / "opencode" / "opencode-db.sql").read_text(encoding="utf-8"))
    assert capture_job(gm.root) == "2 digest(s) from 3 transcript(s) in 1 folder"
    assert capture_job(gm.root) == "0 digest(s) from 3 transcript(s) in 1 folder"


def test_copilot_gets_its_server_instructions_and_scheduled_sessions(gm: Cli, home: Path, project: Path) -> None:
    config = home / ".copilot" / "mcp-config.json"
    config.parent.mkdir()
    config.write_text(json.dumps(SETTINGS))
    instructions = project / ".github" / "copilot-instructions.md"
    instructions.parent.mkdir()
    instructions.write_text("# Shop\n\nPrices are in cents.\n")
    done = gm("integrate", "copilot", "--project", str(project))
    assert done.exit_code == 0, done.output
    server = json.loads(config.read_text())["mcpServers"]["gitmem"]
    assert server["type"] == "local" and server["args"][-1] == "mcp" and server["tools"] == ["*"]
    assert json.loads(config.read_text())["mcpServers"]["docs"] == SETTINGS["mcpServers"]["docs"]
    text = instructions.read_text()
    assert text.startswith("# Shop\n") and "integrate copilot" in text and "`context`" in text
    state = home / ".copilot" / "session-state"
    assert schedule(gm) == {str(state): {"agent": "copilot"}}
    shutil.copytree(SAMPLES / "copilot" / "session-state", state)
    assert gm("config", "set", "capture.minSignalChars", "0").exit_code == 0
    assert capture_job(gm.root).startswith("2 digest(s) from 2 transcript(s) in 1 folder")  # the third is skipped
    gm("integrate", "copilot", "--project", str(project), "--remove")
    assert json.loads(config.read_text()) == SETTINGS
    assert instructions.read_text() == "# Shop\n\nPrices are in cents.\n"
    assert schedule(gm) == {}


def test_copilot_home_moves_every_copilot_file(gm: Cli, home: Path, project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "copilot-home"
    done = gm("integrate", "copilot", "--project", str(project), env={"COPILOT_HOME": str(elsewhere)})
    assert done.exit_code == 0, done.output
    assert "gitmem" in json.loads((elsewhere / "mcp-config.json").read_text())["mcpServers"]
    assert schedule(gm) == {str(elsewhere / "session-state"): {"agent": "copilot"}}
