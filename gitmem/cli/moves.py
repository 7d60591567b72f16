"""CLI verbs that move memory: mv (an entry to another topic file) and mv-topic (a rename)."""

from __future__ import annotations

import click

from gitmem.cli.options import LAYER_HELP, emit, get_store, json_option, scope_option


def _moved(result: object, as_json: bool) -> None:
    from gitmem.verbs.moves import MoveResult

    assert isinstance(result, MoveResult)
    emit(result.as_json(), as_json,
         lambda: f"{', '.join(result.ids) or 'no entries'}: {result.source} -> {result.target}")


@click.command(name="mv")
@click.argument("entry_id", metavar="ID")
@click.option("--topic", "-t", required=True, help="Topic (file) to move the entry to.")
@click.option("--layer", "-l", help=f"Another layer of the entry's scope: {LAYER_HELP}.")
@json_option
@click.pass_context
def mv(ctx: click.Context, entry_id: str, topic: str, layer: str | None, as_json: bool) -> None:
    """Move entry ID to another topic file (and layer) of its scope; its Id and fields stay."""
    from gitmem.verbs.moves import move_entry

    _moved(move_entry(get_store(ctx), entry_id, topic, layer), as_json)


@click.command(name="mv-topic")
@click.argument("old")
@click.argument("new")
@scope_option
@json_option
@click.pass_context
def mv_topic(ctx: click.Context, old: str, new: str, scope: str, as_json: bool) -> None:
    """Rename topic file OLD to NEW: LAYER/TOPIC (e.g. semantic/db) or a store path
    (global/semantic/db.md); every entry keeps its Id."""
    from gitmem.verbs.moves import move_topic

    _moved(move_topic(get_store(ctx), old, new, scope=scope), as_json)


COMMANDS = (mv, mv_topic)
