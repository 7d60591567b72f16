"""`gitmem integrate gemini`: the MCP server in Gemini CLI's settings.json, a memory section in
the project's GEMINI.md, and Gemini's chat folder on the warm server's capture schedule (Gemini
CLI has no hook gitmem can capture from).

Project (`--project DIR`, the default being the current folder): `DIR/.gemini/settings.json`;
user (`--user`): `~/.gemini/settings.json`. Both hold `mcpServers` as Claude Code's files do, so
the entry is placed, recognised and refused by the same rules (claude.set_server). The chats are
under `~/.gemini/tmp/<project>/chats/`, all projects in one folder: each session's workspace is
its own project's (`.project_root`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitmem import caller
from gitmem.errors import InvalidInputError
from gitmem.integrate.claude import set_server
from gitmem.integrate.codex import AGENTS_SECTION
from gitmem.integrate.files import Change, json_change, rules_change, schedule_change

BEGIN = "<!-- gitmem:begin (written by `gitmem integrate gemini`; --remove takes it out) -->"
END = "<!-- gitmem:end -->"
TIMEOUT_MS = 30_000  # the server loads the MCP SDK once, about a second


def gemini_home(home: Path) -> Path:
    return home / ".gemini"


def chats_folder(home: Path) -> Path:
    """Gemini CLI's per-project temporary folders, where its chats are recorded."""
    return gemini_home(home) / "tmp"


def server_entry(gitmem: list[str]) -> dict[str, Any]:
    return {"command": gitmem[0], "args": [*gitmem[1:], "mcp"], "timeout": TIMEOUT_MS}


def plan(gitmem: list[str], *, project: Path | None, user: bool, home: Path, remove: bool = False,
         store_root: Path | None = None) -> list[Change]:
    """The changes that set up (or with `remove`, take out) gitmem for Gemini CLI."""
    folder = Path(caller.absolute(str(project or '.')))
    if not folder.is_dir():
        raise InvalidInputError(f"--project: {folder} is not a folder")
    settings = gemini_home(home) / "settings.json" if user else folder / ".gemini" / "settings.json"

    def edit(data: dict[str, Any]) -> None:
        set_server(data, settings, None if remove else server_entry(gitmem))

    changes = [json_change(settings, edit),
               rules_change(folder / "GEMINI.md", BEGIN, END, AGENTS_SECTION, remove=remove)]
    scheduled = schedule_change(store_root, chats_folder(home), "gemini", remove=remove) if store_root else None
    return changes + ([scheduled] if scheduled else [])
