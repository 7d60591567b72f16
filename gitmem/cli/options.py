"""Options and output helpers shared by every command module (none of them imports the group)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from gitmem.store.store import Store

F = TypeVar("F", bound=Callable[..., Any])
LAYER_HELP = "semantic, episodic, procedural, learnings, decisions, codebase, history"


def emit(data: Any, as_json: bool, text: str | Callable[[], str]) -> None:
    """Print JSON for agents, or the human text; either with every likely secret masked."""
    from gitmem.secrets.mask import hide_output, masked_data

    if as_json:
        import json

        click.echo(json.dumps(masked_data(data), ensure_ascii=False, indent=2, default=str))
    else:
        click.echo(hide_output(text() if callable(text) else text))


CHUNK = 500  # lines or items masked at a time by the streaming emitters


def _chunks(items: Iterable[Any]) -> Iterator[list[Any]]:
    it = iter(items)
    while chunk := list(islice(it, CHUNK)):
        yield chunk


def emit_lines(lines: Iterable[str]) -> None:
    """Print human text a few hundred lines at a time, masked: a long report is never held whole."""
    from gitmem.secrets.mask import hide_secrets

    for chunk in _chunks(lines):
        click.echo(hide_secrets("\n".join(chunk)))


def emit_json_stream(head: dict[str, Any], key: str, items: Iterable[Any]) -> None:
    """Print a JSON object whose `key` holds a long list, one item at a time (masked, as emit)."""
    import json

    from gitmem.secrets.mask import masked_data

    click.echo("{")
    for name, value in masked_data(head).items():
        click.echo(f"  {json.dumps(name)}: {json.dumps(value, ensure_ascii=False, default=str)},")
    click.echo(f"  {json.dumps(key)}: [")
    first = True
    for chunk in _chunks(items):
        for item in masked_data(chunk):
            spelled = json.dumps(item, ensure_ascii=False, default=str)
            click.echo(("    " if first else "    ,") + spelled)
            first = False
    click.echo("  ]\n}")


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for agents.")(func)


def get_store(ctx: click.Context) -> Store:
    from gitmem.store.paths import validate_workspace_key
    from gitmem.store.store import open_store

    obj = ctx.find_root().obj
    if obj["workspace"] is not None:  # `--workspace ""` is refused, never "the current folder"
        validate_workspace_key(obj["workspace"])
    from gitmem.store.warm import adopt

    store = open_store(obj["root"], workspace=obj["workspace"])
    adopt(store)  # in the warm server: its open repository, catalog and index (else nothing)
    obj.setdefault("stores", []).append(store)  # the group prints the notes it leaves
    return store


def text_argument(value: str) -> str:
    """A long text argument; `-` reads it from standard input."""
    if value != "-":
        return value
    import sys

    return sys.stdin.read()


def _set_workspace(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        ctx.find_root().obj["workspace"] = value


def workspace_option(func: F) -> F:
    """`--workspace` accepted after the verb too, as people type it."""
    return click.option("--workspace", "-w", expose_value=False, callback=_set_workspace,
                        help="Workspace key (default: from the current directory).")(func)


def allow_secret_option(func: F) -> F:
    return click.option(
        "--allow-secret", is_flag=True,
        help="Record the text even though it holds what looks like a secret (this write only).",
    )(func)


def scope_option(func: F) -> F:
    func = workspace_option(func)
    return click.option(
        "--scope", type=click.Choice(["global", "workspace"]), default="global", show_default=True,
        help="Write to the global scope or to the current workspace.",
    )(func)



def print_write(result: Any, as_json: bool) -> None:
    """The id (or path) a write verb produced; the whole result with --json."""
    data = {"id": result.id, "path": result.path, "changed": result.changed, "note": result.note}
    emit(data, as_json, result.id or (result.path if result.changed else f"{result.path}: {result.note or 'unchanged'}"))


def hook_option(func: F) -> F:
    return click.option("--hook", is_flag=True,
                        help="Run as an agent hook: read the hook's JSON on stdin, answer in the "
                             "hook's JSON; never block the agent.")(func)


def run_hook(ctx: click.Context, answer: Callable[[Any, str | None, str | None], str], *,
             error_exit: int = 0, error_as_context: str | None = None) -> None:
    """Read the hook payload from stdin, print what `answer(payload, root, workspace)` returns;
    an error is one line and exit `error_exit` (see gitmem/integrate/hookrun.py)."""
    import sys

    from gitmem.integrate.hookrun import answer_hook, stdin_text

    obj = ctx.find_root().obj
    reply = answer_hook(stdin_text(), answer, obj["root"], obj["workspace"],
                        error_exit=error_exit, error_as_context=error_as_context)
    if reply.stdout:
        click.echo(reply.stdout)
    if reply.stderr:
        click.echo(reply.stderr, err=True)
    if reply.exit_code:
        sys.exit(reply.exit_code)
