"""`gitmem integrate codex`: the MCP server in Codex's config.toml and a memory section in the
project's AGENTS.md.

config.toml (`$CODEX_HOME/config.toml`, else `~/.codex/config.toml`) is TOML that people edit by
hand, comments included, so it is never re-serialised: gitmem appends its own table
`[mcp_servers.gitmem]` between two marker comments, and replaces or removes only that block.
The whole file is parsed (tomllib) before and after, so a file that is not valid TOML is refused
and what gitmem writes is checked to be. A `[mcp_servers.gitmem]` table outside the markers is
the person's and is refused, never replaced.

AGENTS.md gets a section between HTML comment markers, so it can be updated or removed alone.
Codex has no session hook, so its session folder goes on the warm server's capture schedule
(capture/scheduled.py).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from gitmem import caller
from gitmem.errors import InvalidInputError
from gitmem.integrate.files import (
    SERVER_NAME,
    Change,
    current,
    joined,
    rules_change,
    schedule_change,
    unjoined,
)

BEGIN = "# >>> gitmem: the MCP server (`gitmem integrate codex --remove` takes it out) >>>"
END = "# <<< gitmem <<<"
AGENTS_BEGIN = "<!-- gitmem:begin (written by `gitmem integrate codex`; --remove takes it out) -->"
AGENTS_END = "<!-- gitmem:end -->"
STARTUP_TIMEOUT = 30  # seconds: the server loads the MCP SDK once, about a second

AGENTS_SECTION = """\
## Memory (gitmem)

This project's long-term memory is served by the `gitmem` MCP server.

- At the start of a task, call `context` for the card of this workspace (runtime memory, state,
  decisions in force, critical facts); call `search` whenever past work may answer a question.
- Before writing, search: a fact already recorded is confirmed with `verify` or replaced with
  `remember` and `supersedes`, never recorded twice.
- Write only what a later session needs and cannot read from the code or the git log: a
  decision and why (`decision`), a lesson learned (`remember`, layer learnings), where the work
  stands (`working`, `state`). Writing nothing is a correct outcome.
- A subagent never writes memory: it reports what it found to its caller.
"""


def config_path(home: Path) -> Path:
    codex_home = caller.env("CODEX_HOME")
    return Path(codex_home) / "config.toml" if codex_home else home / ".codex" / "config.toml"


def toml_string(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's, for the characters json.dumps emits)."""
    return json.dumps(value, ensure_ascii=False)


def server_block(gitmem: list[str]) -> str:
    args = ", ".join(toml_string(a) for a in [*gitmem[1:], "mcp"])
    return (f"{BEGIN}\n[mcp_servers.{SERVER_NAME}]\ncommand = {toml_string(gitmem[0])}\n"
            f"args = [{args}]\nstartup_timeout_sec = {STARTUP_TIMEOUT}\n{END}\n")


def _parse(path: Path, text: str) -> dict[str, object]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInputError(f"{path} is not valid TOML ({exc}); fix it by hand first: gitmem "
                                "does not overwrite it") from None


def _without_block(path: Path, text: str) -> str:
    """`text` without gitmem's marked block (and the blank line set before it)."""
    start = text.find(BEGIN)
    if start < 0:
        return text
    end = text.find(END, start)
    if end < 0:
        raise InvalidInputError(f"{path}: gitmem's block has lost its end marker ({END!r}); put it "
                                "back or delete the block by hand")
    end += len(END)
    if text[end:end + 1] == "\n":
        end += 1
    return unjoined(text[:start]) + text[end:]


def config_change(home: Path, gitmem: list[str], *, remove: bool) -> Change:
    path = config_path(home)
    before = current(path)
    text = before or ""
    _parse(path, text)
    rest = _without_block(path, text)
    servers = _parse(path, rest).get("mcp_servers")
    if isinstance(servers, dict) and SERVER_NAME in servers:
        if remove:
            return Change(path, before, before)
        raise InvalidInputError(f"{path}: an [mcp_servers.{SERVER_NAME}] table that gitmem did not "
                                "write is already there; remove it first")
    if remove:
        after = rest if rest.strip() else None
    else:
        after = joined(rest, server_block(gitmem))
        _parse(path, after)
    if before is None and after is None:
        return Change(path, None, None)
    return Change(path, before, after)


def agents_change(project: Path, *, remove: bool) -> Change:
    return rules_change(project / "AGENTS.md", AGENTS_BEGIN, AGENTS_END, AGENTS_SECTION, remove=remove)


def sessions_folder(home: Path) -> Path:
    """Where Codex CLI keeps its session rollouts (sessions/YYYY/MM/DD/rollout-*.jsonl)."""
    return config_path(home).parent / "sessions"


def plan(gitmem: list[str], *, project: Path | None, home: Path, remove: bool = False,
         store_root: Path | None = None) -> list[Change]:
    """The server table, the AGENTS.md section and, since Codex has no hook to capture with, its
    session folder on the warm server's capture schedule (when the store exists)."""
    folder = Path(caller.absolute(str(project or '.')))
    if not folder.is_dir():
        raise InvalidInputError(f"--project: {folder} is not a folder")
    changes = [config_change(home, gitmem, remove=remove), agents_change(folder, remove=remove)]
    scheduled = schedule_change(store_root, sessions_folder(home), "codex", remove=remove) if store_root else None
    return changes + ([scheduled] if scheduled else [])
