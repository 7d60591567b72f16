"""`gitmem relate` and `gitmem related`: typed links between entries."""

from __future__ import annotations

import sys
from typing import Any

import click

from gitmem.cli.options import emit, get_store, json_option
from gitmem.cli.targets import space_option
from gitmem.format.references import RELATION_TYPES as TYPES

# How a link reads from the entry being expanded: (holds the field, is pointed at).
_WORDING = {"causal": ("caused by", "led to"), "temporal": ("after", "before")}


@click.command()
@click.argument("entry_id", metavar="ID")
@click.argument("kind", metavar="TYPE", type=click.Choice(TYPES))
@click.argument("other", metavar="OTHER_ID")
@space_option
@json_option
@click.pass_context
def relate(ctx: click.Context, entry_id: str, kind: str, other: str, space: str | None,
           as_json: bool) -> None:
    """Record a typed link on ID: causal (OTHER caused ID), temporal (OTHER came before ID),
    semantic and entity (symmetric: recorded on both entries)."""
    from gitmem.verbs.relations import relate as do_relate

    result = do_relate(get_store(ctx), entry_id, kind, other, space=space)
    data = {"id": result.id, "path": result.path, "changed": result.changed, "note": result.note}
    emit(data, as_json, f"{result.id}: {result.note}")


def _lines(graph: dict[str, Any]) -> list[str]:
    nodes = {n["ref"]: n for n in graph["nodes"]}
    root = nodes[graph["root"]]
    lines = [f"{root['ref']}  {root['title']}"]
    for edge in graph["edges"]:
        outgoing = edge["from"] in nodes and nodes[edge["from"]]["depth"] <= nodes[edge["to"]]["depth"]
        near, far = (edge["from"], edge["to"]) if outgoing else (edge["to"], edge["from"])
        words = _WORDING.get(edge["type"], ("", ""))[0 if outgoing else 1]
        other = nodes[far]
        title = other["title"] or "(no such entry)"
        derived = " (derived)" if edge["derived"] else ""
        indent = "  " * (nodes[near]["depth"] + 1)
        lines.append(f"{indent}{edge['type']}{derived}: {(words + ' ') if words else ''}"
                     f"{far}  {title}")
    return lines


@click.command()
@click.argument("entry_id", metavar="ID")
@click.option("--type", "types", multiple=True, type=click.Choice([*TYPES, "untyped"]),
              help="Only links of this type (repeatable).")
@click.option("--depth", type=int, default=1, show_default=True, help="How many links away to walk (1-5).")
@click.option("--derive", multiple=True, type=click.Choice(["temporal"]),
              help="Add derived links: temporal = the entries written just before and after in its topic.")
@space_option
@json_option
@click.pass_context
def related(ctx: click.Context, entry_id: str, types: tuple[str, ...], depth: int,
            derive: tuple[str, ...], space: str | None, as_json: bool) -> None:
    """Walk the recorded links of ID (both ways); exit 1 when it has none."""
    from gitmem.verbs.relations import related as walk

    graph = walk(get_store(ctx), entry_id, space=space, types=list(types) or None, depth=depth,
                 derive=list(derive))
    emit(graph, as_json, lambda: "\n".join(_lines(graph)))
    if not graph["edges"]:
        if not as_json:
            click.echo("no links recorded", err=True)
        sys.exit(1)


COMMANDS = (relate, related)
