"""`gitmem log`: what gitmem has been doing on this machine, newest last; `gitmem log ID`: the
versions of one entry (printed by provenance.py)."""

from __future__ import annotations

import click

from gitmem.cli.options import emit, get_store, json_option
from gitmem.cli.provenance import entry_log
from gitmem.cli.targets import space_option


@click.command(name="log")
@click.argument("entry_id", metavar="[ID]", required=False)
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True,
              help="How many recent actions (or versions of ID) to show.")
@click.option("--all", "show_all", is_flag=True, help="With ID: every version, however many.")
@space_option
@json_option
@click.pass_context
def log(ctx: click.Context, entry_id: str | None, limit: int, show_all: bool, space: str | None,
        as_json: bool) -> None:
    """Recent activity: writes, captures, consolidations, refreshes, history, syncs, failures.
    With an entry ID (or SPACE/ID): that entry's versions, newest first, with the text of each."""
    if entry_id is not None:
        entry_log(ctx, entry_id, space, None if show_all else limit, as_json)
        return
    from gitmem.observe.activity import recent_activity

    records = recent_activity(get_store(ctx).root, limit)

    def text() -> str:
        if not records:
            return "no activity recorded yet"
        return "\n".join(f"{str(r.get('ts', ''))[:19].replace('T', ' ')}  {r.get('event', '-'):<12} "
                         f"{r.get('summary', '')}" for r in records)

    emit(records, as_json, text)


COMMANDS = (log,)
