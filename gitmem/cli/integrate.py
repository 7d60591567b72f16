"""`gitmem integrate claude-code | codex | gemini | opencode | generic`: wire an agent to this store
in one command."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gitmem import caller
from gitmem.cli.options import emit, json_option

if TYPE_CHECKING:
    from gitmem.integrate.files import Change

DRY_RUN_HELP = "Print the files that would be written, with their new content; change nothing."


def _home() -> Path:

    return Path(caller.home())


def _gitmem(ctx: click.Context, *, shared: bool = False) -> list[str]:
    """The command the agent will run (`shared`: for files teams commit, see gitmem_command). The store is named with --root unless it is the default
    (~/.gitmem): one found through GITMEM_ROOT or the folder integrate ran in may not be what the
    agent's environment and folder point at."""
    from gitmem.integrate.files import gitmem_command
    from gitmem.store.paths import locate_root

    root, source = locate_root(ctx.find_root().obj["root"])
    if not (root / "memory.json").is_file():
        click.echo(f"gitmem: note: no gitmem store at {root} yet; `gitmem --root {root} init` "
                   "creates it (until then the hooks say memory was not loaded)", err=True)
    return gitmem_command(None if source == "default" else str(root), shared=shared)


def _warn_machine_paths(changes: list[Change], gitmem: list[str]) -> None:
    """Project files are often committed: say when what they hold works only on this machine."""
    from gitmem.integrate.files import machine_paths

    paths = machine_paths(gitmem)
    if paths:
        files = " and ".join(str(c.path) for c in changes)
        click.echo(f"gitmem: warning: {files} name paths of this machine ({', '.join(paths)}); "
                   "before committing them, put `gitmem` on PATH, use the default store "
                   "(~/.gitmem) and run this again, or keep the files out of git "
                   "(docs/integrations.md)", err=True)


def _finish(changes: list[Change], dry_run: bool, as_json: bool) -> None:
    """Write the changes (unless dry_run) and say what was (or would be) done."""
    from gitmem.integrate.files import apply_all

    todo = apply_all(changes, dry_run=dry_run)
    data = {"dryRun": dry_run, "changes": [
        {"path": str(c.path), "action": c.action, **({"content": c.after} if dry_run else {})}
        for c in todo]}

    def text() -> str:
        if not todo:
            return "nothing to change: " + ", ".join(str(c.path) for c in changes)
        if not dry_run:
            return "\n".join(f"{c.action}d {c.path}" for c in todo)
        parts = []
        for change in todo:
            parts.append(f"would {change.action} {change.path}")
            if change.after is not None:
                parts.append(change.after.rstrip("\n"))
        return "\n".join(parts)

    emit(data, as_json, text)


@click.group(name="integrate")
def integrate() -> None:
    """Set up an agent to use this store: MCP server entry, hooks, instructions."""


@integrate.command(name="claude-code")
@click.option("--project", type=click.Path(file_okay=False), help="Project folder (default: the current one).")
@click.option("--user", is_flag=True, help="For every project: ~/.claude.json and ~/.claude/settings.json.")
@click.option("--prompt-hook", is_flag=True,
              help="Also add the 3 most relevant entries to each prompt (UserPromptSubmit).")
@click.option("--native-memory", is_flag=True,
              help="Keep Claude Code's own auto memory (MEMORY.md and its topic files) in step with "
                   "the store, both ways.")
@click.option("--remove", is_flag=True, help="Take out exactly what integrate wrote.")
@click.option("--dry-run", is_flag=True, help=DRY_RUN_HELP)
@json_option
@click.pass_context
def claude_code(ctx: click.Context, project: str | None, user: bool, prompt_hook: bool,
                native_memory: bool, remove: bool, dry_run: bool, as_json: bool) -> None:
    """The gitmem MCP server in .mcp.json (or ~/.claude.json) and the hooks in
    .claude/settings.json: context card at session start, subagent card, capture on compaction,
    at session end and (at most every capture.turnMinutes) at a turn's end."""
    from gitmem.integrate.claude import plan

    if user and project:
        raise click.UsageError("--project and --user exclude each other")
    gitmem = _gitmem(ctx, shared=not user)
    native = _native_projects(ctx) if remove else ()
    changes = plan(gitmem, project=Path(project) if project else None, user=user,
                   home=_home(), remove=remove, prompt_hook=prompt_hook,
                   native_memory=native_memory, native_projects=native)
    _finish(changes, dry_run, as_json)
    if not user and not remove:
        _warn_machine_paths(changes, gitmem)
    if prompt_hook and not remove:
        _advise_server(ctx)
    if dry_run:
        if native_memory and not remove and not user:
            click.echo("gitmem: note: would also import Claude Code's auto-memory folder of the "
                       "project and render gitmem's block of its MEMORY.md", err=True)
        return
    if native_memory and user and not remove:
        click.echo("gitmem: note: each project's Claude Code auto memory is kept in step from its "
                   "next session on", err=True)
    if remove:
        _native_off(ctx, native if user else (Path(caller.absolute(project or ".")),))
    elif native_memory and not user:
        _native_pass(ctx, Path(caller.absolute(project or ".")))


def _existing_root(ctx: click.Context) -> Path | None:
    """The store's root when a store is there (integrate itself works without one)."""
    from gitmem.store.paths import locate_root

    root, _source = locate_root(ctx.find_root().obj["root"])
    return root if (root / "memory.json").is_file() else None


def _native_projects(ctx: click.Context) -> tuple[Path, ...]:
    """The projects whose auto memory this machine keeps in step with the store."""
    from gitmem.imports.native import enabled_projects

    root = _existing_root(ctx)
    return tuple(enabled_projects(root)) if root is not None else ()


def _native_off(ctx: click.Context, projects: tuple[Path, ...]) -> None:
    from gitmem.imports.native import disable

    root = _existing_root(ctx)
    if root is not None:
        for project in projects:
            disable(root, project)


def _native_pass(ctx: click.Context, project: Path) -> None:
    """The first pass: the folder imported, MEMORY.md rendered (said on stderr); without a store
    yet (said above) the first session after `gitmem init` runs it."""
    from gitmem.cli.options import get_store
    from gitmem.imports.native import run_pass

    if _existing_root(ctx) is not None:
        report = run_pass(get_store(ctx), project, _home())
        click.echo(f"gitmem: {report.line()}", err=True)


def _advise_server(ctx: click.Context) -> None:
    """The prompt hook runs before every prompt: when the store's server cannot start by itself
    (GITMEM_SERVE=off or manual, or the setting serve.autoStart false), say how it gets fast."""
    from gitmem.serve.autostart import auto_start_allowed
    from gitmem.serve.client import serve_mode
    from gitmem.serve.control import ping
    from gitmem.store.paths import locate_root

    root, source = locate_root(ctx.find_root().obj["root"])
    if not (root / "memory.json").is_file() or ping(root) is not None:
        return
    if serve_mode() == "auto" and auto_start_allowed(str(root)):
        return  # the hook's first call starts the store's server; the calls after it are served
    prefix = "gitmem" if source == "default" else f"gitmem --root {root}"
    click.echo("gitmem: note: the prompt hook runs before every prompt; it answers in tens of "
               "milliseconds through the store's warm server and in a few hundred on its own, and "
               "here the server does not start by itself (GITMEM_SERVE, or the setting "
               f"serve.autoStart). Keep one running with `{prefix} serve --install`, or run "
               f"`{prefix} serve` (docs/performance.md, Agent hooks)", err=True)


def _store_root(ctx: click.Context) -> Path | None:
    """The store's folder, when a store is there to hold the capture schedule."""
    from gitmem.store.paths import locate_root

    root, _ = locate_root(ctx.find_root().obj["root"])
    return root if (root / "memory.json").is_file() else None


def _advise_schedule(ctx: click.Context, changes: list[Change], agent: str, folder: Path) -> None:
    """Say who captures the session folder: the store's warm server, on its schedule."""
    root = _store_root(ctx)
    if root is None:
        click.echo(f"gitmem: note: no store yet, so {folder} is not on the capture schedule; run "
                   f"this again after `gitmem init` (or capture it by hand: `gitmem capture {folder}`)",
                   err=True)
        return
    if any(c.path == root / "state" / "capture-folders.json" and c.changed for c in changes):
        click.echo(f"gitmem: note: {agent} has no capture hook: the store's warm server captures "
                   f"{folder} every 30 minutes while `gitmem serve` runs (`gitmem serve --install` "
                   f"keeps one running); `gitmem capture {folder}` does it now", err=True)


@integrate.command(name="codex")
@click.option("--project", type=click.Path(file_okay=False),
              help="Project folder whose AGENTS.md gets the memory section (default: the current one).")
@click.option("--remove", is_flag=True, help="Take out exactly what integrate wrote.")
@click.option("--dry-run", is_flag=True, help=DRY_RUN_HELP)
@json_option
@click.pass_context
def codex(ctx: click.Context, project: str | None, remove: bool, dry_run: bool, as_json: bool) -> None:
    """The gitmem MCP server in ~/.codex/config.toml, a memory section in AGENTS.md, and the
    session folder (~/.codex/sessions) on the warm server's capture schedule."""
    from gitmem.integrate.codex import plan, sessions_folder

    changes = plan(_gitmem(ctx), project=Path(project) if project else None, home=_home(),
                   remove=remove, store_root=_store_root(ctx))
    _finish(changes, dry_run, as_json)
    if not remove and not dry_run:
        _advise_schedule(ctx, changes, "Codex CLI", sessions_folder(_home()))


def _scheduled_agent(ctx: click.Context, plan: Any, agent: str, sessions: Path, *, project: str | None,
                     user: bool, remove: bool, dry_run: bool, as_json: bool) -> None:
    """An agent without capture hooks: its MCP entry and rules section (`plan`), then its
    session folder on the warm server's capture schedule."""
    gitmem = _gitmem(ctx, shared=not user)
    changes = plan(gitmem, project=Path(project) if project else None, user=user, home=_home(),
                   remove=remove, store_root=_store_root(ctx))
    _finish(changes, dry_run, as_json)
    if not remove and not dry_run:
        if not user:
            _warn_machine_paths(changes[:1], gitmem)
        _advise_schedule(ctx, changes, agent, sessions)


@integrate.command(name="gemini")
@click.option("--project", type=click.Path(file_okay=False),
              help="Project folder: .gemini/settings.json and GEMINI.md there (default: the current one).")
@click.option("--user", is_flag=True, help="The server in ~/.gemini/settings.json, for every project.")
@click.option("--remove", is_flag=True, help="Take out exactly what integrate wrote.")
@click.option("--dry-run", is_flag=True, help=DRY_RUN_HELP)
@json_option
@click.pass_context
def gemini(ctx: click.Context, project: str | None, user: bool, remove: bool, dry_run: bool,
           as_json: bool) -> None:
    """The gitmem MCP server in Gemini CLI's settings.json, a memory section in GEMINI.md, and
    Gemini's chats (~/.gemini/tmp) on the warm server's capture schedule."""
    from gitmem.integrate.gemini import chats_folder, plan

    _scheduled_agent(ctx, plan, "Gemini CLI", chats_folder(_home()), project=project, user=user,
                     remove=remove, dry_run=dry_run, as_json=as_json)


@integrate.command(name="opencode")
@click.option("--project", type=click.Path(file_okay=False),
              help="Project folder: opencode.json and AGENTS.md there (default: the current one).")
@click.option("--user", is_flag=True, help="The server in ~/.config/opencode/opencode.json, for every project.")
@click.option("--remove", is_flag=True, help="Take out exactly what integrate wrote.")
@click.option("--dry-run", is_flag=True, help=DRY_RUN_HELP)
@json_option
@click.pass_context
def opencode(ctx: click.Context, project: str | None, user: bool, remove: bool, dry_run: bool,
             as_json: bool) -> None:
    """The gitmem MCP server in opencode.json, a memory section in AGENTS.md, and OpenCode's
    data folder (its database, or its older session storage) on the warm server's capture schedule."""
    from gitmem.integrate.opencode import data_folder, plan

    _scheduled_agent(ctx, plan, "OpenCode", data_folder(_home()), project=project, user=user,
                     remove=remove, dry_run=dry_run, as_json=as_json)


@integrate.command(name="copilot")
@click.option("--project", type=click.Path(file_okay=False),
              help="Project folder whose .github/copilot-instructions.md gets the memory section "
                   "(default: the current one).")
@click.option("--remove", is_flag=True, help="Take out exactly what integrate wrote.")
@click.option("--dry-run", is_flag=True, help=DRY_RUN_HELP)
@json_option
@click.pass_context
def copilot(ctx: click.Context, project: str | None, remove: bool, dry_run: bool, as_json: bool) -> None:
    """The gitmem MCP server in ~/.copilot/mcp-config.json, a memory section in
    .github/copilot-instructions.md, and Copilot CLI's sessions (~/.copilot/session-state) on the
    warm server's capture schedule."""
    from gitmem.integrate.copilot import plan, sessions_folder

    changes = plan(_gitmem(ctx), project=Path(project) if project else None, home=_home(),
                   remove=remove, store_root=_store_root(ctx))
    _finish(changes, dry_run, as_json)
    if not remove and not dry_run:
        _advise_schedule(ctx, changes, "Copilot CLI", sessions_folder(_home()))


@integrate.command(name="generic")
@json_option
@click.pass_context
def generic(ctx: click.Context, as_json: bool) -> None:
    """Print the MCP server block (JSON) and the instructions for any MCP client."""
    from gitmem.integrate.generic import INSTRUCTIONS, config, text

    gitmem = _gitmem(ctx)
    emit({**config(gitmem), "instructions": INSTRUCTIONS}, as_json, text(gitmem))


COMMANDS = (integrate,)
