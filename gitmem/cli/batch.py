"""`gitmem batch`: JSON lines of writes on stdin, one commit (see gitmem/verbs/batch.py)."""

from __future__ import annotations

import sys

import click

from gitmem.cli.options import emit, get_store, json_option, workspace_option


@click.command(name="batch")
@workspace_option
@json_option
@click.pass_context
def batch(ctx: click.Context, as_json: bool) -> None:
    """Read one write per line on stdin ({"op": "remember", "text": ..., "layer": ...}; ops:
    remember, supersede, decision, codebase, forget, verify, relate) and commit them as one
    commit; one bad line refuses the whole batch, naming its line."""
    from gitmem.verbs.batch import parse_lines, run_batch

    items = parse_lines(sys.stdin.read())  # every line is checked before the store is touched
    result = run_batch(get_store(ctx), items)

    def text() -> str:
        lines = [f"line {i.line}: {i.op}: {i.id or i.path}" + ("" if i.changed else f" ({i.note or 'unchanged'})")
                 for i in result.items]
        written = sum(i.changed for i in result.items)
        tail = f"{written} of {len(result.items)} written in commit {result.commit[:12]}" if result.commit \
            else "nothing written"
        return "\n".join([*lines, tail])

    emit(result.as_json(), as_json, text)


COMMANDS = (batch,)
