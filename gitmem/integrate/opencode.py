"""`gitmem integrate opencode`: the MCP server in OpenCode's opencode.json, a memory section in
the project's AGENTS.md, and OpenCode's session storage on the warm server's capture schedule
(OpenCode's hooks are JavaScript plugins; gitmem reads the sessions it stores instead).

Project (`--project DIR`): `DIR/opencode.json`; user (`--user`): `~/.config/opencode/opencode.json`
(under `$XDG_CONFIG_HOME` when set). The server is `mcp.gitmem`, a local server whose `command` is
the whole command line as a list; an `mcp.gitmem` that does not run gitmem is refused, never
replaced. The sessions are in OpenCode's data folder, `$XDG_DATA_HOME/opencode` (`~/.local/share/...`):
in its database `opencode.db`, or in the `storage` folder of older versions; the data folder is
scheduled, so both are read whichever OpenCode wrote (and the rest of it never walked)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitmem import caller
from gitmem.errors import InvalidInputError
from gitmem.integrate.codex import AGENTS_SECTION
from gitmem.integrate.files import (
    Change,
    gitmem_words,
    json_change,
    place_server,
    rules_change,
    schedule_change,
)

BEGIN = "<!-- gitmem:begin (written by `gitmem integrate opencode`; --remove takes it out) -->"
END = "<!-- gitmem:end (opencode) -->"
SCHEMA = "https://opencode.ai/config.json"


def config_file(home: Path, project: Path, user: bool) -> Path:
    if not user:
        return project / "opencode.json"
    base = caller.env("XDG_CONFIG_HOME")
    return (Path(base) if base else home / ".config") / "opencode" / "opencode.json"


def data_folder(home: Path) -> Path:
    """OpenCode's data folder: its database, and the storage folder of older versions."""
    base = caller.env("XDG_DATA_HOME")
    return (Path(base) if base else home / ".local" / "share") / "opencode"


def storage_folder(home: Path) -> Path:
    """Where older OpenCode versions keep their sessions, messages and parts as JSON files."""
    return data_folder(home) / "storage"


def server_entry(gitmem: list[str]) -> dict[str, Any]:
    return {"type": "local", "command": [*gitmem, "mcp"], "enabled": True}


def is_our_server(entry: Any) -> bool:
    command = entry.get("command") if isinstance(entry, dict) else None
    if not isinstance(command, list):
        return False
    rest = gitmem_words([str(word) for word in command])
    return rest is not None and "mcp" in rest


def set_server(data: dict[str, Any], path: Path, entry: dict[str, Any] | None) -> None:
    """Put (or with None, take out) the "gitmem" server in `data["mcp"]`; a file gitmem wrote
    (its $schema alone left) goes when the server does."""
    had = "mcp" in data
    if entry is not None and not had:
        data.setdefault("$schema", SCHEMA)
    place_server(data, "mcp", path, entry, is_our_server)
    if had and "mcp" not in data and list(data) == ["$schema"] and data["$schema"] == SCHEMA:
        data.pop("$schema")  # gitmem wrote the file: nothing of the person's is in it


def plan(gitmem: list[str], *, project: Path | None, user: bool, home: Path, remove: bool = False,
         store_root: Path | None = None) -> list[Change]:
    """The changes that set up (or with `remove`, take out) gitmem for OpenCode."""
    folder = Path(caller.absolute(str(project or '.')))
    if not folder.is_dir():
        raise InvalidInputError(f"--project: {folder} is not a folder")
    config = config_file(home, folder, user)

    def edit(data: dict[str, Any]) -> None:
        set_server(data, config, None if remove else server_entry(gitmem))

    changes = [json_change(config, edit),
               rules_change(folder / "AGENTS.md", BEGIN, END, AGENTS_SECTION, remove=remove)]
    scheduled = schedule_change(store_root, data_folder(home), "opencode", remove=remove,
                                replaces=(storage_folder(home),)) if store_root else None
    return changes + ([scheduled] if scheduled else [])
