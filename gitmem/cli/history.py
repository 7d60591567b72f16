"""`gitmem history`: a code repository's commits into its workspace's history layer."""

from __future__ import annotations

import sys

import click

from gitmem.cli.options import emit, get_store, json_option, workspace_option


def _say(message: str) -> None:
    if sys.stderr.isatty():
        click.echo(f"gitmem: {message}…", err=True)


@click.command(name="history")
@click.option("--repo", type=click.Path(file_okay=False), help="The code repository (default: the current one).")
@click.option("--limit", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Commits per pass; the first pass records the newest ones.")
@json_option
@workspace_option
@click.pass_context
def history(ctx: click.Context, repo: str | None, limit: int, as_json: bool) -> None:
    """Record the repository's new commits, one history topic per day (incremental)."""
    from pathlib import Path

    from gitmem.history.ingest import ingest

    report = ingest(get_store(ctx), Path(repo) if repo else None, limit=limit, say=_say)

    def text() -> str:
        noun = "commit" if report.recorded == 1 else "commits"
        lines = [f"{report.workspace}: {report.recorded} new {noun} recorded"
                 + (f" ({report.already_recorded} already there)" if report.already_recorded else "")]
        if report.result != "recorded":
            known = f" ({report.already_recorded} already recorded)" if report.already_recorded else ""
            lines[0] = f"{report.workspace}: {report.result.replace('-', ' ')}{known}"
        if report.days:
            lines.append(f"  days: {report.days[0]} … {report.days[-1]}" if len(report.days) > 1
                         else f"  day: {report.days[0]}")
        if report.more:
            lines.append(f"  more commits wait: run `gitmem history` again (--limit {limit})")
        if report.message:
            lines.append(f"  {report.message}")
        lines += [f"  skipped {why}" for why in report.skipped]
        return "\n".join(lines)

    emit(report.as_json(), as_json, text)


COMMANDS = (history,)
