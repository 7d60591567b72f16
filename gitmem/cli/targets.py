"""Which store a command reads or writes when spaces are mounted: `--space`, routing, refs."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gitmem.cli.options import emit, get_store
from gitmem.secrets.mask import hide_secrets

if TYPE_CHECKING:
    from gitmem.spaces.lookup import Ref
    from gitmem.store.store import Store
    from gitmem.verbs.routed import Routed

F = TypeVar("F", bound=Callable[..., Any])


def space_option(func: F) -> F:
    return click.option("--space", "space", metavar="NAME",
                        help="A mounted space to use instead of this store ('home': the store itself).")(func)


def print_routed(done: Routed, as_json: bool) -> None:
    """A routed write's report; where it went, on stderr (with --json too), when spaces made that
    a question."""
    emit(done.data, as_json, done.shown)
    if done.note:
        click.echo(f"gitmem: {hide_secrets(done.note)}", err=True)


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
        click.echo(f"gitmem: {hide_secrets(note)}", err=True)
