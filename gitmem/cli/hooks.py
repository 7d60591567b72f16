"""CLI commands for writing by hand: `gitmem hooks install|uninstall|status`, `gitmem new`, and the
hidden `gitmem hook NAME` the installed hook scripts can call. Parse, call the library, print.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gitmem import caller
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
    from gitmem.history.codehook import CodeHookReport

F = TypeVar("F", bound=Callable[..., Any])


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


def _code_text(report: CodeHookReport) -> str:
    extra = " (runs your previous hook first)" if report.chained else ""
    store = f", records into {report.store}" if report.store else ""
    return "\n".join([f"code repository: {report.repo}", f"  post-commit: {report.state}{store}{extra}",
                      *report.notes])


def repo_option(func: F) -> F:
    return click.option("--repo", type=click.Path(file_okay=False),
                        help="A code repository: its post-commit hook records commits in history.")(func)


@hooks.command(name="install")
@repo_option
@json_option
@click.pass_context
def hooks_install(ctx: click.Context, repo: str | None, as_json: bool) -> None:
    """Install the store's hooks and merge driver, or with --repo a code repository's post-commit
    hook that records each commit in the background (idempotent; existing hooks are chained)."""
    store = get_store(ctx)
    if repo:
        from pathlib import Path

        from gitmem.history.codehook import install as install_code

        workspace = ctx.find_root().obj.get("workspace")
        code = install_code(store.root, Path(repo), workspace=workspace)
        emit(code.as_json(), as_json, _code_text(code))
        return
    from gitmem.githooks.install import install

    report = install(store.root)
    emit(report.as_json(), as_json, _report_text(report))


@hooks.command(name="uninstall")
@repo_option
@json_option
@click.pass_context
def hooks_uninstall(ctx: click.Context, repo: str | None, as_json: bool) -> None:
    """Remove gitmem's hooks (of the store, or with --repo of a code repository) and restore
    what was there before."""
    store = get_store(ctx)
    if repo:
        from pathlib import Path

        from gitmem.history.codehook import uninstall as uninstall_code

        code = uninstall_code(store.root, Path(repo))
        emit(code.as_json(), as_json, _code_text(code))
        return
    from gitmem.githooks.install import uninstall

    report = uninstall(store.root)
    emit(report.as_json(), as_json, _report_text(report))


@hooks.command(name="status")
@repo_option
@json_option
@click.pass_context
def hooks_status(ctx: click.Context, repo: str | None, as_json: bool) -> None:
    """Show which hooks are installed (with --repo: a code repository's post-commit hook)."""
    store = get_store(ctx)
    if repo:
        from pathlib import Path

        from gitmem.history.codehook import status as code_status

        code = code_status(store.root, Path(repo))
        emit(code.as_json(), as_json, _code_text(code))
        return
    from gitmem.githooks.install import status

    report = status(store.root)
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
    from gitmem.cli.drafts import edit_draft, read_draft, record_draft, render_draft

    store = get_store(ctx)
    store.require()
    original = render_draft(layer, store.now(), title)
    edited, path = edit_draft(store.root, original)
    if edited is None or edited == original or not edited.strip():
        path.unlink(missing_ok=True)  # unchanged or empty: nothing typed to keep
    draft = read_draft(edited, original)  # a draft refused otherwise stays in state/drafts/
    result = record_draft(store, draft, layer, topic=topic, scope=scope, allow_secret=allow_secret)
    path.unlink(missing_ok=True)
    print_write(result, as_json)


@click.command(name="hook", hidden=True)
@click.argument("name")
@click.argument("args", nargs=-1)
def hook(name: str, args: tuple[str, ...]) -> None:
    """Run one git hook in the current repository (what the installed scripts do)."""
    from pathlib import Path

    from gitmem.githooks.run import run_hook

    sys.exit(run_hook(name, list(args), Path(caller.cwd())))


COMMANDS = (hooks, new, hook)
