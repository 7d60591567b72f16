"""`gitmem log`: what gitmem has been doing on this machine, newest last."""

from __future__ import annotations

import click

from gitmem.cli.options import emit, get_store, json_option


@click.command(name="log")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True,
              help="How many recent actions to show.")
@json_option
@click.pass_context
def log(ctx: click.Context, limit: int, as_json: bool) -> None:
    """Recent activity: writes, captures, consolidations, refreshes, history, syncs, failures."""
    from gitmem.observe.activity import recent_activity

    records = recent_activity(get_store(ctx).root, limit)

    def text() -> str:
        if not records:
            return "no activity recorded yet"
        return "\n".join(f"{str(r.get('ts', ''))[:19].replace('T', ' ')}  {r.get('event', '-'):<12} "
                         f"{r.get('summary', '')}" for r in records)

    emit(records, as_json, text)


COMMANDS = (log,)
