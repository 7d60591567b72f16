"""The `gitmem` command line: parse options, call the library, print. Nothing else lives here.

Library modules are imported inside each command so that `gitmem --help` starts fast.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .errors import GitmemError

if TYPE_CHECKING:
    from .store import Store

F = TypeVar("F", bound=Callable[..., Any])
LAYER_HELP = "semantic, episodic, procedural, learnings, decisions, codebase, history"


def emit(data: Any, as_json: bool, text: str | Callable[[], str]) -> None:
    """Print JSON for agents, or the human text."""
    if as_json:
        import json

        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    else:
        click.echo(text() if callable(text) else text)


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for agents.")(func)


def get_store(ctx: click.Context) -> Store:
    from .store import open_store

    obj = ctx.find_root().obj
    return open_store(obj["root"], workspace=obj["workspace"])


def _set_workspace(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value:
        ctx.find_root().obj["workspace"] = value


def workspace_option(func: F) -> F:
    """`--workspace` accepted after the verb too, as people type it."""
    return click.option("--workspace", "-w", expose_value=False, callback=_set_workspace,
                        help="Workspace key (default: from the current directory).")(func)


def scope_option(func: F) -> F:
    func = workspace_option(func)
    return click.option(
        "--scope", type=click.Choice(["global", "workspace"]), default="global", show_default=True,
        help="Write to the global scope or to the current workspace.",
    )(func)


class GitmemGroup(click.Group):
    """Turns every error into a one-line message and its exit code; never a traceback."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        try:
            result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else exc.format_message())
            sys.exit(2)
        except click.ClickException as exc:
            ctx = getattr(exc, "ctx", None)
            where = ctx.command_path if isinstance(ctx, click.Context) else "gitmem"
            click.echo(f"{where}: error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("gitmem: aborted", err=True)
            sys.exit(1)
        if not standalone_mode:
            return result
        sys.exit(result if isinstance(result, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except GitmemError as exc:
            click.echo(f"gitmem: error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("gitmem: interrupted", err=True)
            sys.exit(130)
        except Exception as exc:  # noqa: BLE001 - the promise is one line, never a traceback
            if os.environ.get("GITMEM_DEBUG"):
                raise
            from .redaction import redact

            click.echo(f"gitmem: internal error: {type(exc).__name__}: {redact(str(exc))}", err=True)
            sys.exit(1)


@click.group(cls=GitmemGroup)
@click.option("--root", type=click.Path(file_okay=False), envvar="GITMEM_ROOT",
              help="Store folder (default: $GITMEM_ROOT, else ~/.gitmem).")
@click.option("--workspace", "-w", help="Workspace key (default: from the current directory).")
@click.version_option(package_name="gitmem")
@click.pass_context
def cli(ctx: click.Context, root: str | None, workspace: str | None) -> None:
    """gitmem: a git-native Markdown memory store for coding agents and the people who work with them."""
    ctx.obj = {"root": root, "workspace": workspace}


def main() -> None:
    cli(prog_name="gitmem")


# -- store ----------------------------------------------------------------------------------
@cli.command()
@click.option("--remote", help="Remote to sync with: cloned when it has history, else set as origin.")
@click.option("--branch", default="main", show_default=True, help="Branch for a new store.")
@json_option
@click.pass_context
def init(ctx: click.Context, remote: str | None, branch: str, as_json: bool) -> None:
    """Create the store (or adopt an existing git repo) with its layout, SYSTEM.md and .gitignore."""
    from .store import Store
    from .sync_remote import init_store

    obj = ctx.find_root().obj
    store = Store(obj["root"], workspace=obj["workspace"])
    created = init_store(store, remote=remote, branch=branch)
    verb = "created" if created else "already initialised"
    emit({"root": str(store.root), "created": created}, as_json, f"gitmem store {verb} at {store.root}")


@cli.command()
@json_option
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Where the store lives, what it holds, and what needs attention."""
    from .reads import status as read_status

    data = read_status(get_store(ctx))

    def text() -> str:
        lines = [f"root: {data['root']}", f"branch: {data['branch']}  head: {(data['head'] or '-')[:12]}",
                 f"remote: {data['remote'] or 'none'}", f"entries: {data['entries']}"]
        for scope, per_layer in data["layers"].items():
            lines.append(f"  {scope}: " + ", ".join(f"{k} {v['entries']}" for k, v in per_layer.items()))
        if data["dirty"]:
            lines.append(f"uncommitted: {len(data['dirty'])} file(s) (committed as a hand edit by the next write)")
        if data["system_doc_stale"]:
            lines.append("SYSTEM.md is stale: run `gitmem system`")
        if data["conflicts"]:
            lines.append("conflicts: " + ", ".join(data["conflicts"]))
        sync_state = data["sync"] or {}
        if sync_state:
            lines.append(f"sync: last attempt {sync_state.get('lastAttempt', '-')}, "
                         f"last success {sync_state.get('lastSuccess', 'never')}, "
                         f"ahead {sync_state.get('ahead', 0)}, behind {sync_state.get('behind', 0)}")
            if sync_state.get("error"):
                lines.append(f"sync error: {sync_state['error']}")
        return "\n".join(lines)

    emit(data, as_json, text)


@cli.command()
@json_option
@click.pass_context
def system(ctx: click.Context, as_json: bool) -> None:
    """Regenerate SYSTEM.md, the store's self-description, and commit it if it changed."""
    from .system_doc import write_system_doc

    store = get_store(ctx)
    changed = write_system_doc(store)
    emit({"path": "SYSTEM.md", "changed": changed}, as_json,
         "SYSTEM.md regenerated" if changed else "SYSTEM.md is up to date")


@cli.command()
@click.option("--fix", is_flag=True, help="Apply the safe fixes (ids, dates, legacy layers) and commit.")
@json_option
@click.pass_context
def check(ctx: click.Context, fix: bool, as_json: bool) -> None:
    """Check every memory file against the format rules; exit 2 when problems remain."""
    from .check import check_tree

    report = check_tree(get_store(ctx), fix=fix)
    remaining = report.remaining
    data = {"problems": [str(p) for p in report.problems], "remaining": [str(p) for p in remaining],
            "fixed": report.fixed, "assigned": report.assigned}
    lines = [str(p) for p in remaining] + [f"fixed: {p}" for p in report.fixed]
    emit(data, as_json, "\n".join(lines) or "all memory files are well-formed")
    if remaining:
        sys.exit(2)


# -- entries --------------------------------------------------------------------------------
def print_write(result: Any, as_json: bool) -> None:
    """The id (or path) a write verb produced; the whole result with --json."""
    data = {"id": result.id, "path": result.path, "changed": result.changed, "note": result.note}
    emit(data, as_json, result.id or (result.path if result.changed else f"{result.path}: {result.note or 'unchanged'}"))


@cli.command()
@click.argument("text")
@click.option("--layer", "-l", required=True, help=f"Layer: {LAYER_HELP}.")
@click.option("--topic", "-t", help="Topic (file) within the layer; default 'general'.")
@click.option("--title", help="Heading of the entry; default: the first line of TEXT.")
@click.option("--importance", type=click.Choice(["critical", "high", "normal", "low"]),
              help="How much the entry matters (default normal).")
@click.option("--volatility", type=click.Choice(["stable", "normal", "volatile"]),
              help="How fast it decays: 365, 90 or 3 days (default: guessed from the wording).")
@click.option("--until", help="Valid-until date (YYYY-MM-DD): the fact expires after it.")
@click.option("--source", help="Where the fact comes from, e.g. session:4f2a.")
@click.option("--supersedes", help="Id of the entry this one replaces (linked both ways).")
@click.option("--force", is_flag=True, help="Add even if the same text was forgotten.")
@scope_option
@json_option
@click.pass_context
def remember(ctx: click.Context, text: str, layer: str, topic: str | None, title: str | None,
             importance: str | None, volatility: str | None, until: str | None, source: str | None,
             supersedes: str | None, force: bool, scope: str, as_json: bool) -> None:
    """Record TEXT as an entry and print its id (an identical live entry's id if it exists)."""
    from .writes import remember as do_remember

    result = do_remember(get_store(ctx), text, layer, topic=topic, title=title, importance=importance,
                         volatility=volatility, until=until, source=source, supersedes=supersedes,
                         scope=scope, force=force)
    print_write(result, as_json)


@cli.command()
@click.argument("entry_id", metavar="ID")
@json_option
@click.pass_context
def show(ctx: click.Context, entry_id: str, as_json: bool) -> None:
    """Show one entry with its fields, location and freshness."""
    from .reads import show as read_show

    record = read_show(get_store(ctx), entry_id)

    def text() -> str:
        fields = "\n".join(f"{k}: {v}" for k, v in record["fields"].items())
        label = f" {record['label']}" if record["label"] else ""
        return (f"{record['title']}{label}\n{record['path']}:{record['line']}  "
                f"[{record['scope']}/{record['layer']}, {record['status']}, {record['freshness']}]\n\n"
                f"{record['body']}\n\n{fields}")

    emit(record, as_json, text)


@cli.command(name="list")
@click.option("--layer", "-l", help=f"Only this layer: {LAYER_HELP}.")
@click.option("--scope", type=click.Choice(["global", "workspace", "all"]), default="all", show_default=True,
              help="Which scope to list.")
@click.option("--all", "include_all", is_flag=True, help="Include forgotten, superseded and expired entries.")
@json_option
@workspace_option
@click.pass_context
def list_cmd(ctx: click.Context, layer: str | None, scope: str, include_all: bool, as_json: bool) -> None:
    """List entries (id, title, freshness), optionally of one layer."""
    from .reads import list_entries

    store = get_store(ctx)
    scopes = None if scope == "all" else [store.scope_for(scope)]
    records = list_entries(store, layer=layer, scopes=scopes, include_all=include_all)
    lines = [f"{r['id'] or '-'}  {r['title']}{' ' + r['label'] if r['label'] else ''}" for r in records]
    emit(records, as_json, "\n".join(lines) or "no entries")
    if not records:
        sys.exit(1)


@cli.command()
@click.argument("entry_id", metavar="ID")
@click.option("--undo", is_flag=True, help="Release a forgotten entry.")
@json_option
@click.pass_context
def forget(ctx: click.Context, entry_id: str, undo: bool, as_json: bool) -> None:
    """Forget an entry (soft: hidden from search and context, re-adding refused); --undo releases it."""
    from .writes import forget as do_forget

    print_write(do_forget(get_store(ctx), entry_id, undo=undo), as_json)


@cli.command()
@click.argument("entry_id", metavar="ID")
@json_option
@click.pass_context
def verify(ctx: click.Context, entry_id: str, as_json: bool) -> None:
    """Re-confirm an entry today (its freshness counts from now)."""
    from .writes import verify as do_verify

    print_write(do_verify(get_store(ctx), entry_id), as_json)


@cli.command()
@click.argument("statement", metavar="DECISION")
@click.option("--rationale", "-r", required=True, help="Why this option won.")
@click.option("--context", "-c", "context_text", help="The situation that forced the choice.")
@click.option("--alternatives", "-a", multiple=True, help="An option considered and rejected (repeatable).")
@click.option("--consequences", help="What follows from the decision.")
@click.option("--topic", "-t", help="Topic within the decisions layer; default 'general'.")
@click.option("--importance", type=click.Choice(["critical", "high", "normal", "low"]),
              help="How much the entry matters (default normal).")
@scope_option
@json_option
@click.pass_context
def decision(ctx: click.Context, statement: str, rationale: str, context_text: str | None,
             alternatives: tuple[str, ...], consequences: str | None, topic: str | None,
             importance: str | None, scope: str, as_json: bool) -> None:
    """Record a settled choice (the heading) with context, rationale, alternatives, consequences."""
    from .writes import decision as do_decision

    result = do_decision(get_store(ctx), statement, rationale=rationale, context=context_text,
                         alternatives=list(alternatives), consequences=consequences, topic=topic,
                         importance=importance, scope=scope)
    print_write(result, as_json)


@cli.command()
@click.argument("topic")
@click.argument("text")
@click.option("--importance", type=click.Choice(["critical", "high", "normal", "low"]),
              help="How much the entry matters (default normal).")
@json_option
@workspace_option
@click.pass_context
def codebase(ctx: click.Context, topic: str, text: str, importance: str | None, as_json: bool) -> None:
    """Record what a path or subsystem (TOPIC) of the current workspace does; re-recording updates it."""
    from .writes import codebase as do_codebase

    print_write(do_codebase(get_store(ctx), topic, text, importance=importance), as_json)


# -- workspace files ------------------------------------------------------------------------
@cli.command()
@click.argument("section")
@click.argument("content")
@json_option
@workspace_option
@click.pass_context
def state(ctx: click.Context, section: str, content: str, as_json: bool) -> None:
    """Replace one SECTION of the workspace's state.md with CONTENT (stamped Verified today)."""
    from .workfiles import record_state

    print_write(record_state(get_store(ctx), section, content), as_json)


@cli.command()
@click.option("--section", "-s", help="Task, Next steps, Plan or Blocked by (replaced).")
@click.option("--content", "-c", help="New content of --section.")
@click.option("--activity", "-a", help="A note for the rolling Recent activity log.")
@click.option("--clear-activity", is_flag=True, help="Empty the Recent activity log.")
@json_option
@workspace_option
@click.pass_context
def working(ctx: click.Context, section: str | None, content: str | None, activity: str | None,
            clear_activity: bool, as_json: bool) -> None:
    """Record what you (the agent) are working on in this workspace's working.md."""
    from .workfiles import WorkingUpdate, record_working

    update = WorkingUpdate(section, content, activity, clear_activity)
    print_write(record_working(get_store(ctx), update), as_json)


@cli.command()
@json_option
@click.pass_context
def workspaces(ctx: click.Context, as_json: bool) -> None:
    """List workspaces: registered keys, titles, and this machine's associated folders."""
    from dataclasses import asdict

    from .workspaces import list_workspaces

    items = list_workspaces(get_store(ctx))
    lines = [f"{w.key}  {w.title}" + (f"  ({', '.join(w.paths)})" if w.paths else "") for w in items]
    emit([asdict(w) for w in items], as_json, "\n".join(lines) or "no workspaces yet")


@cli.command()
@click.argument("key")
@click.option("--title", help="Human title of the workspace.")
@click.option("--path", "folder", type=click.Path(file_okay=False), help="Local folder (default: current).")
@json_option
@click.pass_context
def associate(ctx: click.Context, key: str, title: str | None, folder: str | None, as_json: bool) -> None:
    """Register workspace KEY and associate a local folder with it (the path stays on this machine)."""
    from pathlib import Path

    from .workspaces import associate as do_associate

    target = Path(folder or os.getcwd()).resolve()
    done = do_associate(get_store(ctx), key, title, target)
    emit({"key": done, "path": str(target)}, as_json, f"{target} -> {done}")


@cli.command()
@click.option("--cwd", type=click.Path(file_okay=False), help="Resolve the workspace from this folder.")
@click.option("--max-chars", type=int, default=None, help="Budget for the card (default from settings).")
@click.option("--subagent", is_flag=True, help="Card for a subagent: read, report, do not write.")
@json_option
@workspace_option
@click.pass_context
def context(ctx: click.Context, cwd: str | None, max_chars: int | None, subagent: bool, as_json: bool) -> None:
    """Print the context card an agent gets at the start of a session."""
    from pathlib import Path

    from .context import build_card
    from .errors import InvalidInputError

    store = get_store(ctx)
    workspace = None
    try:
        workspace = store.resolve_workspace(cwd=Path(cwd).resolve() if cwd else None)
    except InvalidInputError:
        if store.workspace_flag:
            raise
    budget = max_chars or int(store.registry.setting("contextMaxChars") or 6000)
    card = build_card(store, workspace=workspace, max_chars=budget, subagent=subagent)
    emit(card.as_json(), as_json, card.text.rstrip("\n"))


def _register_verbs() -> None:
    """Verbs kept in their own modules (each imports only click at load time)."""
    from .cli_hooks import hook, hooks, new
    from .cli_search import reindex, search
    from .cli_sync import COMMANDS as SYNC_COMMANDS

    for command in (search, reindex, hooks, new, hook, *SYNC_COMMANDS):
        cli.add_command(command)


_register_verbs()
