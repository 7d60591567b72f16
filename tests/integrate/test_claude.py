"""`gitmem integrate claude-code`: merged into the person's files, idempotent, removable exactly,
a dry run that changes nothing; and the hook commands it writes really answer."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from gitmem.store.store import Store
from support import Cli

USER_SETTINGS = {
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}],
    },
}
USER_SERVERS = {"mcpServers": {"github": {"command": "npx", "args": ["-y", "server-github"]}}}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "acme-api"
    (folder / ".claude").mkdir(parents=True)
    (folder / ".claude" / "settings.json").write_text(json.dumps(USER_SETTINGS, indent=4))
    (folder / ".mcp.json").write_text(json.dumps(USER_SERVERS))
    return folder


def read(path: Path) -> dict:
    return json.loads(path.read_text())


def ours(settings: dict, event: str) -> list[str]:
    return [h["command"] for g in settings["hooks"].get(event, []) for h in g["hooks"]
            if "--hook" in h["command"]]


def test_project_setup_merges_with_what_is_there(gm: Cli, project: Path) -> None:
    done = gm("integrate", "claude-code", "--project", str(project))
    assert done.exit_code == 0, done.output
    servers = read(project / ".mcp.json")["mcpServers"]
    assert servers["github"] == USER_SERVERS["mcpServers"]["github"]
    assert servers["gitmem"]["args"][-1] == "mcp" and servers["gitmem"]["type"] == "stdio"
    assert "--root" in servers["gitmem"]["args"]
    settings = read(project / ".claude" / "settings.json")
    assert settings["permissions"] == USER_SETTINGS["permissions"]
    assert settings["hooks"]["PreToolUse"] == USER_SETTINGS["hooks"]["PreToolUse"]
    assert settings["hooks"]["SessionStart"][0] == USER_SETTINGS["hooks"]["SessionStart"][0]
    assert ours(settings, "SessionStart")[0].endswith("context --hook")
    assert ours(settings, "SubagentStart")[0].endswith("context --hook --subagent")
    assert ours(settings, "PreCompact")[0].endswith("capture --hook")
    assert ours(settings, "SessionEnd")[0].endswith("capture --hook")
    assert "UserPromptSubmit" not in settings["hooks"]


def test_twice_changes_nothing_and_remove_gives_back_the_persons_files(gm: Cli, project: Path) -> None:
    gm("integrate", "claude-code", "--project", str(project), "--prompt-hook")
    files = [project / ".mcp.json", project / ".claude" / "settings.json"]
    first = [f.read_bytes() for f in files]
    again = gm("integrate", "claude-code", "--project", str(project), "--prompt-hook")
    assert again.stdout.startswith("nothing to change")
    assert [f.read_bytes() for f in files] == first
    assert ours(read(files[1]), "UserPromptSubmit")[0].endswith("search --hook")
    removed = gm("integrate", "claude-code", "--project", str(project), "--remove")
    assert removed.exit_code == 0
    assert read(files[0]) == USER_SERVERS and read(files[1]) == USER_SETTINGS


def test_remove_deletes_files_that_held_only_gitmem(gm: Cli, tmp_path: Path) -> None:
    empty = tmp_path / "fresh"
    empty.mkdir()
    gm("integrate", "claude-code", "--project", str(empty))
    assert (empty / ".mcp.json").exists() and (empty / ".claude" / "settings.json").exists()
    gm("integrate", "claude-code", "--project", str(empty), "--remove")
    assert not (empty / ".mcp.json").exists() and not (empty / ".claude" / "settings.json").exists()


def test_dry_run_prints_the_files_and_changes_nothing(gm: Cli, project: Path) -> None:
    before = (project / ".claude" / "settings.json").read_bytes()
    done = gm("integrate", "claude-code", "--project", str(project), "--dry-run")
    assert done.exit_code == 0
    assert f"would update {project / '.mcp.json'}" in done.stdout
    assert f"would update {project / '.claude' / 'settings.json'}" in done.stdout
    assert "context --hook" in done.stdout
    assert (project / ".claude" / "settings.json").read_bytes() == before
    assert read(project / ".mcp.json") == USER_SERVERS


def test_user_setup_writes_the_home_files_and_keeps_their_state(gm: Cli, tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    state = {"numStartups": 12, "projects": {"/x": {"mcpServers": {}}}, "mcpServers": {}}
    (home / ".claude.json").write_text(json.dumps(state))
    done = gm("integrate", "claude-code", "--user")
    assert done.exit_code == 0, done.output
    written = read(home / ".claude.json")
    assert written["numStartups"] == 12 and written["projects"] == state["projects"]
    assert written["mcpServers"]["gitmem"]["args"][-1] == "mcp"
    assert ours(read(home / ".claude" / "settings.json"), "SessionStart")
    gm("integrate", "claude-code", "--user", "--remove")
    assert read(home / ".claude.json") == {"numStartups": 12, "projects": state["projects"]}


def test_someone_elses_server_named_gitmem_is_refused(gm: Cli, project: Path) -> None:
    theirs = {"mcpServers": {"gitmem": {"command": "node", "args": ["my-memory.js"]}}}
    (project / ".mcp.json").write_text(json.dumps(theirs))
    done = gm("integrate", "claude-code", "--project", str(project))
    assert done.exit_code == 2
    assert "does not run gitmem" in done.stderr
    assert read(project / ".mcp.json") == theirs
    assert read(project / ".claude" / "settings.json") == USER_SETTINGS  # nothing half-written
    gm("integrate", "claude-code", "--project", str(project), "--remove")
    assert read(project / ".mcp.json") == theirs


def test_a_broken_settings_file_is_refused_not_overwritten(gm: Cli, project: Path) -> None:
    (project / ".claude" / "settings.json").write_text('{"hooks": ')
    done = gm("integrate", "claude-code", "--project", str(project))
    assert done.exit_code == 2 and "is not valid JSON" in done.stderr
    assert (project / ".claude" / "settings.json").read_text() == '{"hooks": '
    assert read(project / ".mcp.json") == USER_SERVERS


@pytest.mark.parametrize(("text", "says"), [
    ('{"env": {"HUGE": 1e400}}', "1e400"),
    ('{"model": "sonnet", "model": "opus"}', "'model' twice"),
    ('{"ratio": NaN}', "NaN"),
])
def test_a_settings_file_writing_back_would_change_is_refused(gm: Cli, project: Path, text: str,
                                                              says: str) -> None:
    """A number JSON tools cannot read back, or a key given twice: rewriting the file would lose
    or corrupt it, so nothing is written (the other files neither)."""
    settings = project / ".claude" / "settings.json"
    settings.write_text(text)
    servers = (project / ".mcp.json").read_bytes()
    refused = gm("integrate", "claude-code", "--project", str(project))
    assert refused.exit_code == 2 and says in refused.output and "does not overwrite" in refused.output
    assert settings.read_text() == text and (project / ".mcp.json").read_bytes() == servers


def test_the_persons_indentation_is_kept(gm: Cli, project: Path) -> None:
    assert gm("integrate", "claude-code", "--project", str(project)).exit_code == 0
    text = (project / ".claude" / "settings.json").read_text()
    assert '\n    "permissions": {' in text and '\n  "permissions"' not in text


def test_the_written_hook_commands_answer(gm: Cli, store: Store, project: Path) -> None:
    """Run the SessionStart and SubagentStart commands as Claude Code would: a shell line with the
    payload on stdin."""
    gm("integrate", "claude-code", "--project", str(project))
    settings = read(project / ".claude" / "settings.json")
    for event, marker in (("SessionStart", "## gitmem memory"), ("SubagentStart", "You are a subagent")):
        command = ours(settings, event)[0]
        payload = json.dumps({"hook_event_name": event, "cwd": str(project), "session_id": "s"})
        done = subprocess.run(command, shell=True, input=payload, capture_output=True, text=True,
                              cwd=project)
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)["hookSpecificOutput"]
        assert answer["hookEventName"] == event and marker in answer["additionalContext"]


def test_the_store_is_named_unless_it_is_the_default(store: Store, project: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from gitmem.cli import cli

    monkeypatch.setenv("GITMEM_ROOT", str(store.root))
    CliRunner().invoke(cli, ["integrate", "claude-code", "--project", str(project)])
    args = read(project / ".mcp.json")["mcpServers"]["gitmem"]["args"]
    assert args[-3:] == ["--root", str(store.root), "mcp"]
    monkeypatch.delenv("GITMEM_ROOT")
    done = CliRunner().invoke(cli, ["integrate", "claude-code", "--project", str(project)])
    assert read(project / ".mcp.json")["mcpServers"]["gitmem"]["args"] == ["-m", "gitmem", "mcp"]
    assert "no gitmem store at" in done.stderr and ".gitmem" in done.stderr
    assert all("--root" not in c for c in ours(read(project / ".claude" / "settings.json"), "SessionStart"))


def test_the_written_server_entry_starts_a_server(gm: Cli, store: Store, project: Path) -> None:
    """Start the server exactly as .mcp.json says, with the SDK's client, and read the card."""
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    gm("integrate", "claude-code", "--project", str(project))
    entry = read(project / ".mcp.json")["mcpServers"]["gitmem"]
    params = StdioServerParameters(command=entry["command"], args=entry["args"], cwd=str(project),
                                   # no warm server left running after the test
                                   env={"HOME": os.environ["HOME"], **entry["env"], "GITMEM_SERVE": "off"})

    async def card() -> str:
        async with stdio_client(params) as (read_stream, write_stream), \
                ClientSession(read_stream, write_stream) as session:
            await session.initialize()
            result = await session.call_tool("context", {})
            assert not result.is_error, result.content
            return str(result.content[0].text)

    assert anyio.run(card).startswith("## gitmem memory")


def test_the_prompt_hook_says_how_to_keep_it_fast(gm: Cli, project: Path) -> None:
    from servers import QUIET, start_server, stop

    plain = gm("integrate", "claude-code", "--project", str(project))
    assert "serve" not in plain.stderr
    alone = gm("integrate", "claude-code", "--project", str(project), "--prompt-hook")
    assert alone.exit_code == 0
    assert f"gitmem --root {gm.root} serve --install" in alone.stderr
    # Where the server starts by itself (the hook's first call starts it), nothing is said.
    starts = gm("integrate", "claude-code", "--project", str(project), "--prompt-hook",
                env={"GITMEM_SERVE": "auto"})
    assert starts.exit_code == 0 and "serve" not in starts.stderr
    proc = start_server(gm.root, *QUIET)
    try:
        served = gm("integrate", "claude-code", "--project", str(project), "--prompt-hook")
    finally:
        stop(proc)
    assert served.exit_code == 0 and "serve" not in served.stderr
