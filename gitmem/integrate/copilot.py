"""`gitmem integrate copilot`: the MCP server in GitHub Copilot CLI's mcp-config.json, a memory
section in the project's `.github/copilot-instructions.md`, and Copilot CLI's session folder on
the warm server's capture schedule (Copilot CLI has no hook gitmem captures from; it records
every session as events, which capture reads).

Copilot CLI keeps its files in `$COPILOT_HOME`, else `~/.copilot`: `mcp-config.json` holds
`mcpServers` as Claude Code's files do, so the entry is placed, recognised and refused by the
same rules (claude.set_server); the sessions are `session-state/<session id>/events.jsonl`.
The instructions file is the one Copilot reads in every repository, so the section goes there
rather than into AGENTS.md, which other agents' sections may share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitmem import caller
from gitmem.errors import InvalidInputError
from gitmem.integrate.claude import set_server
from gitmem.integrate.codex import AGENTS_SECTION
from gitmem.integrate.files import Change, json_change, rules_change, schedule_change

BEGIN = "<!-- gitmem:begin (written by `gitmem integrate copilot`; --remove takes it out) -->"
END = "<!-- gitmem:end (copilot) -->"


def copilot_home(home: Path) -> Path:
    base = caller.env("COPILOT_HOME")
    return Path(base) if base else home / ".copilot"


def sessions_folder(home: Path) -> Path:
    """Where Copilot CLI records its sessions, one folder each."""
    return copilot_home(home) / "session-state"


def server_entry(gitmem: list[str]) -> dict[str, Any]:
    return {"type": "local", "command": gitmem[0], "args": [*gitmem[1:], "mcp"], "tools": ["*"]}


def plan(gitmem: list[str], *, project: Path | None, home: Path, remove: bool = False,
         store_root: Path | None = None) -> list[Change]:
    """The changes that set up (or with `remove`, take out) gitmem for Copilot CLI."""
    folder = Path(caller.absolute(str(project or '.')))
    if not folder.is_dir():
        raise InvalidInputError(f"--project: {folder} is not a folder")
    config = copilot_home(home) / "mcp-config.json"

    def edit(data: dict[str, Any]) -> None:
        set_server(data, config, None if remove else server_entry(gitmem))

    instructions = folder / ".github" / "copilot-instructions.md"
    changes = [json_change(config, edit), rules_change(instructions, BEGIN, END, AGENTS_SECTION, remove=remove)]
    scheduled = schedule_change(store_root, sessions_folder(home), "copilot", remove=remove) if store_root else None
    return changes + ([scheduled] if scheduled else [])
