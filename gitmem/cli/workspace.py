"""CLI verbs of a workspace: state, working, workspaces, associate, context."""

from __future__ import annotations

import click

from gitmem import caller
from gitmem.cli.options import (
    allow_secret_option,
    emit,
    get_store,
    hook_option,
    json_option,
    print_write,
    run_hook,
    text_argument,
    workspace_option,
)


@click.command()
@click.argument("section")
@click.argument("content")
@allow_secret_option
@json_option
@workspace_option
@click.pass_context
def state(ctx: click.Context, section: str, content: str, allow_secret: bool, as_json: bool) -> None:
    """Replace one SECTION of the workspace's state.md with CONTENT (`-`: read it from stdin;
    stamped Verified today)."""
    from gitmem.verbs.workfiles import record_state

    print_write(record_state(get_store(ctx), section, text_argument(content),
                             allow_secret=allow_secret), as_json)


@click.command()
@click.option("--section", "-s", help="Task, Next steps, Plan or Blocked by (replaced).")
@click.option("--content", "-c", help="New content of --section.")
@click.option("--activity", "-a", help="A note for the rolling Recent activity log.")
@click.option("--clear-activity", is_flag=True, help="Empty the Recent activity log.")
@allow_secret_option
@json_option
@workspace_option
@click.pass_context
def working(ctx: click.Context, section: str | None, content: str | None, activity: str | None,
            clear_activity: bool, allow_secret: bool, as_json: bool) -> None:
    """Record what you (the agent) are working on in this workspace's working.md."""
    from gitmem.verbs.workfiles import WorkingUpdate, record_working

    update = WorkingUpdate(section, content, activity, clear_activity, allow_secret)
    print_write(record_working(get_store(ctx), update), as_json)


@click.command()
@json_option
@click.pass_context
def workspaces(ctx: click.Context, as_json: bool) -> None:
    """List workspaces: registered keys, titles, and this machine's associated folders."""
    from dataclasses import asdict

    from gitmem.verbs.workspaces import list_workspaces

    items = list_workspaces(get_store(ctx))
    lines = [f"{w.key}  {w.title}" + (f"  ({', '.join(w.paths)})" if w.paths else "") for w in items]
    emit([asdict(w) for w in items], as_json, "\n".join(lines) or "no workspaces yet")


@click.command()
@click.argument("key")
@click.option("--title", help="Human title of the workspace.")
@click.option("--path", "folder", type=click.Path(file_okay=False), help="Local folder (default: current).")
@json_option
@click.pass_context
def associate(ctx: click.Context, key: str, title: str | None, folder: str | None, as_json: bool) -> None:
    """Register workspace KEY and associate a local folder with it (the path stays on this machine)."""
    from pathlib import Path

    from gitmem.verbs.workspaces import associate as do_associate

    target = Path(caller.absolute(folder or caller.cwd())).resolve()
    done = do_associate(get_store(ctx), key, title, target)
    emit({"key": done, "path": str(target)}, as_json, f"{target} -> {done}")


@click.command()
# Not click.Path(exists=True): that checks against the process's folder, and the warm server
# answers callers standing in other folders (the check is below, against the caller's).
@click.option("--cwd", type=click.Path(file_okay=False),
              help="Resolve the workspace from this folder (it must exist).")
@click.option("--max-chars", type=int, default=None, help="Budget for the card (default from settings).")
@click.option("--subagent", is_flag=True, help="Card for a subagent: read, report, do not write.")
@click.option("--native-memory", is_flag=True,
              help="With --hook: first keep the project's Claude Code auto memory in step (integrate "
                   "claude-code --native-memory).")
@hook_option
@json_option
@workspace_option
@click.pass_context
def context(ctx: click.Context, cwd: str | None, max_chars: int | None, subagent: bool,
            native_memory: bool, hook: bool, as_json: bool) -> None:
    """Print the context card an agent gets at the start of a session (`--hook`: as a
    SessionStart or SubagentStart hook's JSON, for the folder the hook names)."""
    if hook:
        from functools import partial

        from gitmem.integrate.hooks import context_hook

        event = "SubagentStart" if subagent else "SessionStart"
        run_hook(ctx, partial(context_hook, subagent=subagent, native=native_memory),
                 error_as_context=event)
        return
    from pathlib import Path

    from gitmem.verbs.context import card_for

    folder = Path(caller.absolute(cwd)) if cwd else None
    if folder is not None and not folder.is_dir():
        raise click.BadParameter(f"Directory {cwd!r} does not exist.", param_hint="'--cwd'")
    card = card_for(get_store(ctx), cwd=folder, max_chars=max_chars, subagent=subagent)
    emit(card.as_json(), as_json, card.text.rstrip("\n"))


COMMANDS = (state, working, workspaces, associate, context)
