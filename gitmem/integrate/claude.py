"""`gitmem integrate claude-code`: the MCP server entry and the session hooks, merged into Claude
Code's own files.

Project (`--project DIR`, the default being the current folder): the server in `DIR/.mcp.json`,
the hooks in `DIR/.claude/settings.json`. User (`--user`): the server in `~/.claude.json`
(top-level `mcpServers`), the hooks in `~/.claude/settings.json`.

gitmem's entries are recognised by their command, which runs gitmem with `--hook` (hooks) or the
`mcp` verb (the server named "gitmem"); everything else in the files is the person's and is kept
as it is. A "gitmem" server entry that does not run gitmem is refused, never replaced.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmem import caller
from gitmem.errors import InvalidInputError
from gitmem.integrate.files import (
    Change,
    gitmem_words,
    json_change,
    place_server,
    shell_line,
    split_command,
)

HOOK_TIMEOUT = 30  # seconds; the hooks answer in well under one, the capture runs detached
PROMPT_TIMEOUT = 10


@dataclass(frozen=True)
class Hook:
    event: str
    args: tuple[str, ...]  # after the gitmem program and its --root
    timeout: int = HOOK_TIMEOUT


HOOKS = (
    Hook("SessionStart", ("context", "--hook")),
    Hook("SubagentStart", ("context", "--hook", "--subagent")),
    Hook("PreCompact", ("capture", "--hook")),
    Hook("SessionEnd", ("capture", "--hook")),
    Hook("Stop", ("capture", "--hook", "--turn")),  # throttled per session: capture.turnMinutes
)
PROMPT_HOOK = Hook("UserPromptSubmit", ("search", "--hook"), PROMPT_TIMEOUT)
# With --native-memory the session's start also keeps the project's auto memory in step
# (gitmem/imports/native.py); the flag travels in the hook, so a clone's first session turns it on.
NATIVE_START = Hook("SessionStart", ("context", "--hook", "--native-memory"))
ALL_EVENTS = tuple(h.event for h in (*HOOKS, PROMPT_HOOK))


def locations(project: Path | None, user: bool, home: Path) -> tuple[Path, Path]:
    """(the file with the MCP server entry, the settings file with the hooks)."""
    if user:
        return home / ".claude.json", home / ".claude" / "settings.json"
    folder = Path(caller.absolute(str(project or '.')))
    if not folder.is_dir():
        raise InvalidInputError(f"--project: {folder} is not a folder")
    return folder / ".mcp.json", folder / ".claude" / "settings.json"


def plan(gitmem: list[str], *, project: Path | None, user: bool, home: Path,
         remove: bool = False, prompt_hook: bool = False, native_memory: bool = False,
         native_projects: tuple[Path, ...] = ()) -> list[Change]:
    """The changes to Claude Code's files that set up (or with `remove`, take out) gitmem; a
    removal also takes gitmem's block out of the MEMORY.md of the project (with `user`, of
    `native_projects`, those this machine kept in step)."""
    servers, settings = locations(project, user, home)
    hooks = [NATIVE_START if native_memory and h.event == "SessionStart" else h for h in HOOKS]
    wanted = [] if remove else [*hooks, *([PROMPT_HOOK] if prompt_hook else [])]
    events = ALL_EVENTS if remove else tuple(h.event for h in wanted)

    def edit_servers(data: dict[str, Any]) -> None:
        set_server(data, servers, None if remove else server_entry(gitmem))

    def edit_hooks(data: dict[str, Any]) -> None:
        set_hooks(data, settings, {h.event: h for h in wanted}, events, gitmem)

    changes = [json_change(servers, edit_servers), json_change(settings, edit_hooks)]
    if remove:
        folders = native_projects if user else (settings.parent.parent,)
        changes += native_removals(home, folders)
    return changes


def native_removals(home: Path, projects: tuple[Path, ...]) -> list[Change]:
    """MEMORY.md of each project without gitmem's block (removed when nothing else is left)."""
    from gitmem.imports.native import without_block

    found = []
    for project in projects:
        path, before, after = without_block(home, project)
        if before is not None and after != before:
            found.append(Change(path, before, after))
    return found


def server_entry(gitmem: list[str]) -> dict[str, Any]:
    return {"type": "stdio", "command": gitmem[0], "args": [*gitmem[1:], "mcp"], "env": {}}


def is_our_server(entry: Any) -> bool:
    """A server entry that runs `gitmem ... mcp`."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args") or []
    if not isinstance(args, list):
        return False
    rest = gitmem_words([entry["command"], *(str(a) for a in args)])
    return rest is not None and "mcp" in rest


def set_server(data: dict[str, Any], path: Path, entry: dict[str, Any] | None) -> None:
    """Put (or with None, take out) the "gitmem" server in `data["mcpServers"]`."""
    place_server(data, "mcpServers", path, entry, is_our_server)


def hook_of(item: Any) -> tuple[str, ...] | None:
    """The gitmem words of a hook item gitmem wrote (verb and options after the program and its
    --root), or None for anyone else's."""
    if not isinstance(item, dict) or item.get("type") != "command":
        return None
    words = gitmem_words(split_command(str(item.get("command", ""))))
    if not words or "--hook" not in words:
        return None
    if words[:1] == ["--root"]:
        words = words[2:]
    return tuple(words)


def set_hooks(data: dict[str, Any], path: Path, wanted: dict[str, Hook], events: tuple[str, ...],
              gitmem: list[str]) -> None:
    """Make gitmem's hooks for `events` exactly `wanted` (an event absent from `wanted` loses
    gitmem's hooks); the person's hooks, and their order, stay as they are."""
    hooks = data.get("hooks")
    if hooks is None:
        if not wanted:
            return
        hooks = data["hooks"] = {}
    if not isinstance(hooks, dict):
        raise InvalidInputError(f"{path}: hooks is not an object; gitmem does not overwrite it")
    for event in events:
        hook = wanted.get(event)
        groups = hooks.get(event)
        if groups is None:
            groups = []
        if not isinstance(groups, list):
            raise InvalidInputError(f"{path}: hooks.{event} is not a list; gitmem does not overwrite it")
        item = None if hook is None else {"type": "command",
                                          "command": shell_line([*gitmem, *hook.args]),
                                          "timeout": hook.timeout}
        groups = _placed(groups, hook, item)
        if groups:
            hooks[event] = groups
        else:
            hooks.pop(event, None)
    if not hooks:
        data.pop("hooks")


def _placed(groups: list[Any], hook: Hook | None, item: dict[str, Any] | None) -> list[Any]:
    """`groups` with gitmem's item for this event where it was (updated), or added in a group of
    its own, or (item None) taken out; groups it leaves empty go too."""
    placed = False
    result: list[Any] = []
    for group in groups:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list):
            result.append(group)
            continue
        kept = []
        for entry in inner:
            if hook is not None and item is not None and hook_of(entry) == hook.args and not placed:
                kept.append({**entry, **item})
                placed = True
            elif hook_of(entry) is None:
                kept.append(entry)
        if kept or len(inner) == 0:
            result.append({**group, "hooks": kept})
    if item is not None and not placed:
        result.append({"hooks": [item]})
    return result
