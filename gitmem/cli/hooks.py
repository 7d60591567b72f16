"""CLI commands for writing by hand: `gitmem hooks install|uninstall|status`, `gitmem new`, and the
hidden `gitmem hook NAME` the installed hook scripts can call. Parse, call the library, print.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from gitmem.cli.options import (
    allow_secret_option,
    emit,
    get_store,
    json_option,
    print_write,
    scope_option,
)

if TYPE_CHECKING:
    from gitmem.githooks.install import HooksReport


def _report_text(report: HooksReport) -> str:
    lines = [f"hooks folder: {report.hooks_dir}"]
    for hook in report.hooks:
        extra = " (runs your previous hook first)" if hook.chained else ""
        where = f" [{hook.python}]" if hook.python and hook.state != "installed" else ""
        lines.append(f"  {hook.name}: {hook.state}{where}{extra}")
    lines.append("merge driver: " + ("configured" if report.driver_ok
                                     else f"not configured{' (' + report.driver + ')' if report.driver else ''}"))
    lines.extend(report.notes)
    return "\n".join(lines)


@click.group(name="hooks")
def hooks() -> None:
    """Git hooks of the store: normalize commits made with plain git, keep search current."""


@hooks.command(name="install")
@json_option
@click.pass_context
def hooks_install(ctx: click.Context, as_json: bool) -> None:
    """Install the hooks and the merge driver (idempotent; keeps and chains existing hooks)."""
    from gitmem.githooks.install import install

    report = install(get_store(ctx).root)
    emit(report.as_json(), as_json, _report_text(report))


@hooks.command(name="uninstall")
@json_option
@click.pass_context
def hooks_uninstall(ctx: click.Context, as_json: bool) -> None:
    """Remove gitmem's hooks, restore the hooks and merge settings that were there before."""
    from gitmem.githooks.install import uninstall

    report = uninstall(get_store(ctx).root)
    emit(report.as_json(), as_json, _report_text(report))


@hooks.command(name="status")
@json_option
@click.pass_context
def hooks_status(ctx: click.Context, as_json: bool) -> None:
    """Show which hooks are installed and whether the merge driver is configured."""
    from gitmem.githooks.install import status

    report = status(get_store(ctx).root)
    emit(report.as_json(), as_json, _report_text(report))


@click.command(name="new")
@click.option("--layer", "-l", default="semantic", show_default=True,
              help="semantic, episodic, procedural, learnings, decisions, codebase, history, state, working.")
@click.option("--topic", "-t", help="Topic (file) within the layer; default 'general'.")
@click.option("--title", default="", help="Prefill the heading.")
@allow_secret_option
@scope_option
@json_option
@click.pass_context
def new(ctx: click.Context, layer: str, topic: str | None, title: str, allow_secret: bool, scope: str,
        as_json: bool) -> None:
    """Open an entry template in $VISUAL/$EDITOR and record it when saved."""
    from gitmem.cli.drafts import read_draft, record_draft, render_draft

    store = get_store(ctx)
    original = render_draft(layer, store.now(), title)
    edited = click.edit(original, extension=".md", require_save=True)
    draft = read_draft(edited, original)
    print_write(record_draft(store, draft, layer, topic=topic, scope=scope, allow_secret=allow_secret),
                as_json)


@click.command(name="hook", hidden=True)
@click.argument("name")
@click.argument("args", nargs=-1)
def hook(name: str, args: tuple[str, ...]) -> None:
    """Run one git hook in the current repository (what the installed scripts do)."""
    from pathlib import Path

    from gitmem.githooks.run import run_hook

    sys.exit(run_hook(name, list(args), Path.cwd()))


COMMANDS = (hooks, new, hook)
