"""CLI commands for writing by hand: `gitmem hooks install|uninstall|status`, `gitmem new`, and the
hidden `gitmem hook NAME` the installed hook scripts can call. Parse, call the library, print.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from .hooks import HooksReport
    from .store import Store


def _store(ctx: click.Context) -> Store:
    from .store import open_store

    obj = ctx.find_root().obj or {}
    return open_store(obj.get("root"), workspace=obj.get("workspace"))


def _set_workspace(ctx: click.Context, value: str | None) -> None:
    if value:
        root = ctx.find_root()
        root.obj = {**(root.obj or {}), "workspace": value}


def _emit(data: Any, as_json: bool, text: str) -> None:
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    else:
        click.echo(text)


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
@click.option("--json", "as_json", is_flag=True, help="Print JSON for agents.")
@click.pass_context
def hooks_install(ctx: click.Context, as_json: bool) -> None:
    """Install the hooks and the merge driver (idempotent; keeps and chains existing hooks)."""
    from .hooks import install

    report = install(_store(ctx).root)
    _emit(report.as_json(), as_json, _report_text(report))


@hooks.command(name="uninstall")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for agents.")
@click.pass_context
def hooks_uninstall(ctx: click.Context, as_json: bool) -> None:
    """Remove gitmem's hooks, restore the hooks and merge settings that were there before."""
    from .hooks import uninstall

    report = uninstall(_store(ctx).root)
    _emit(report.as_json(), as_json, _report_text(report))


@hooks.command(name="status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for agents.")
@click.pass_context
def hooks_status(ctx: click.Context, as_json: bool) -> None:
    """Show which hooks are installed and whether the merge driver is configured."""
    from .hooks import status

    report = status(_store(ctx).root)
    _emit(report.as_json(), as_json, _report_text(report))


@click.command(name="new")
@click.option("--layer", "-l", default="semantic", show_default=True,
              help="semantic, episodic, procedural, learnings, decisions, codebase, history, state, working.")
@click.option("--topic", "-t", help="Topic (file) within the layer; default 'general'.")
@click.option("--title", default="", help="Prefill the heading.")
@click.option("--scope", type=click.Choice(["global", "workspace"]), default="global", show_default=True,
              help="Write to the global scope or to the current workspace.")
@click.option("--workspace", "-w", expose_value=False, callback=lambda ctx, _p, v: _set_workspace(ctx, v),
              help="Workspace key (default: from the current directory).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for agents.")
@click.pass_context
def new(ctx: click.Context, layer: str, topic: str | None, title: str, scope: str, as_json: bool) -> None:
    """Open an entry template in $VISUAL/$EDITOR and record it when saved."""
    from .drafts import read_draft, record_draft, render_draft

    store = _store(ctx)
    original = render_draft(layer, store.now(), title)
    edited = click.edit(original, extension=".md", require_save=True)
    result = record_draft(store, read_draft(edited, original), layer, topic=topic, scope=scope)
    data = {"id": result.id, "path": result.path, "changed": result.changed, "note": result.note}
    _emit(data, as_json, result.id or (result.path if result.changed else f"{result.path}: {result.note}"))


@click.command(name="hook", hidden=True)
@click.argument("name")
@click.argument("args", nargs=-1)
def hook(name: str, args: tuple[str, ...]) -> None:
    """Run one git hook in the current repository (what the installed scripts do)."""
    from .hooks import run_hook

    sys.exit(run_hook(name, list(args), Path.cwd()))
