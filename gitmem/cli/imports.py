"""`gitmem import` and `gitmem export`: other tools' memory in, everything out."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from gitmem import caller
from gitmem.cli.options import (
    allow_secret_option,
    emit_json_stream,
    emit_lines,
    get_store,
    json_option,
    workspace_option,
)
from gitmem.imports import SOURCES

_SOURCES = ("gitmem", *SOURCES)  # gitmem.imports holds only the names: cheap for --help
_SHOWN = ("added", "updated", "renumbered", "kept-edit", "duplicate", "unlinked", "linked", "skipped")


def _report_lines(report: Any) -> Iterator[str]:
    verb = "would import" if report.dry_run else "imported"
    for action in report.actions:
        if action.action in _SHOWN or report.dry_run:
            target = action.id or action.path
            yield f"{action.action:<10} {target}  {action.title}  <- {action.source}"
    counts = report.counts()
    summary = ", ".join(f"{n} {what}" for what, n in sorted(counts.items())) or "nothing"
    tail = f" (commit {report.commit[:12]})" if report.commit else ""
    yield f"{report.tool}: {verb} from {report.files} file(s): {summary}{tail}"
    if counts.get("kept-edit"):
        yield ("kept-edit: the entry was edited in gitmem since it was imported; the edit is "
               "kept and the source's new text is not written")


@click.command("import")
@click.argument("source", type=click.Choice(_SOURCES))
@click.argument("path", required=False)
@click.option("--dry-run", is_flag=True, help="Print what would be written; write nothing.")
@click.option("--scope", type=click.Choice(["global", "workspace"]), default=None,
              help="Write everything to this scope (default: a project's files to its workspace, "
                   "user-level files to global).")
@click.option("--layer", default=None,
              help="Write every entry to this layer (default: guessed from each note's wording).")
@workspace_option
@allow_secret_option
@json_option
@click.pass_context
def import_(ctx: click.Context, source: str, path: str | None, dry_run: bool, scope: str | None,
            layer: str | None, allow_secret: bool, as_json: bool) -> None:
    """Import the memory another tool keeps (or a gitmem export): one commit, idempotent."""
    from gitmem.imports.run import import_source

    progress = None
    if sys.stderr.isatty() and not as_json:
        def progress(files: int) -> None:
            if files % 25 == 0:
                click.echo(f"\rimporting: {files} files read", err=True, nl=False)

    home = Path(caller.home())  # where user-level files live, as integrate reads it
    try:
        report = import_source(get_store(ctx), source, path, dry_run=dry_run, scope=scope,
                               layer=layer, allow_secret=allow_secret, home=home, progress=progress)
    finally:
        if progress is not None:
            click.echo("\r\033[K", err=True, nl=False)
    # A report may hold ~100,000 actions: written out as they are read back, never held whole.
    if as_json:
        emit_json_stream(report.head_json(), "actions", (a.as_json() for a in report.actions))
    else:
        emit_lines(_report_lines(report))


@click.command("export")
@click.argument("out", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--format", "fmt", type=click.Choice(["json", "jsonl", "markdown"]), default="json",
              show_default=True, help="JSON and JSONL are lossless (gitmem import gitmem reads them).")
@click.option("--scope", type=click.Choice(["all", "global", "workspace"]), default="all",
              show_default=True, help="Everything, the global scope, or the current workspace only.")
@workspace_option
@click.pass_context
def export(ctx: click.Context, out: str | None, fmt: str, scope: str) -> None:
    """Write every entry (every field), relation, runtime item and document: to OUT, else stdout."""
    from gitmem.imports.export import export as do_export
    from gitmem.imports.outfile import write_export

    store = get_store(ctx)
    key = None if scope == "all" else store.scope_for(scope)
    if out is None or out == "-":
        do_export(store, sys.stdout, fmt, key)
        return
    counts = write_export(store, out, fmt, key)
    click.echo(f"exported {counts.get('entry', 0)} entries, {counts.get('runtime', 0)} runtime items, "
               f"{counts.get('document', 0)} documents to {out}", err=True)


COMMANDS = [import_, export]
