"""Which store a command reads or writes when spaces are mounted: `--space`, routing, refs."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gitmem.cli.options import emit, get_store

if TYPE_CHECKING:
    from gitmem.spaces.lookup import Ref
    from gitmem.spaces.routing import Target
    from gitmem.store.store import Store

F = TypeVar("F", bound=Callable[..., Any])


def space_option(func: F) -> F:
    return click.option("--space", "space", metavar="NAME",
                        help="A mounted space to use instead of this store ('home': the store itself).")(func)


def write_target(ctx: click.Context, space: str | None, layer: str, topic: str | None,
                 text: str) -> tuple[Store, Target]:
    """The home store and where a new entry goes (--space, else the routing rules)."""
    from gitmem.verbs.routed import route_write

    home = get_store(ctx)
    return home, route_write(home, space, layer, topic, text)


def print_routed(home: Store, target: Target, result: Any, as_json: bool) -> None:
    """The write's result; where it went, on stderr, whenever spaces are mounted."""
    from gitmem.spaces.mounts import load_mounts
    from gitmem.verbs.routed import routed_report

    data, note = routed_report(home, target, result)
    emit(data, as_json, result.id or (result.path if result.changed else
                                      f"{result.path}: {result.note or 'unchanged'}"))
    if note and not as_json and (load_mounts(home.root) or not target.home):
        click.echo(f"gitmem: {note}", err=True)


def entry_target(ctx: click.Context, ref: str, space: str | None) -> tuple[Store, Ref]:
    """The store an `ID` or `SPACE/ID` lives in, for a write to that entry."""
    from gitmem.verbs.routed import entry_ref

    home = get_store(ctx)
    return home, entry_ref(home, ref, space)


def print_entry_write(home: Store, ref: Ref, result: Any, as_json: bool) -> None:
    """A write to an entry found by reference; a space it went to is named (and activated)."""
    from gitmem.verbs.routed import entry_write_report

    data, note = entry_write_report(home, ref, result)
    emit(data, as_json, result.id or result.path)
    if note:
        click.echo(f"gitmem: {note}", err=True)
