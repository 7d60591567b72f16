"""CLI verbs for entries: remember, show, list, forget, verify, decision, codebase."""

from __future__ import annotations

import sys

import click

from gitmem.cli.options import (
    LAYER_HELP,
    allow_secret_option,
    emit,
    get_store,
    json_option,
    print_write,
    scope_option,
    text_argument,
    workspace_option,
)


@click.command()
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
@allow_secret_option
@scope_option
@json_option
@click.pass_context
def remember(ctx: click.Context, text: str, layer: str, topic: str | None, title: str | None,
             importance: str | None, volatility: str | None, until: str | None, source: str | None,
             supersedes: str | None, force: bool, allow_secret: bool, scope: str, as_json: bool) -> None:
    """Record TEXT (`-`: read it from stdin) as an entry and print its id (an identical live
    entry's id if it exists)."""
    from gitmem.verbs.entries import remember as do_remember

    result = do_remember(get_store(ctx), text_argument(text), layer, topic=topic, title=title, importance=importance,
                         volatility=volatility, until=until, source=source, supersedes=supersedes,
                         scope=scope, force=force, allow_secret=allow_secret)
    print_write(result, as_json)


@click.command()
@click.argument("entry_id", metavar="ID")
@json_option
@click.pass_context
def show(ctx: click.Context, entry_id: str, as_json: bool) -> None:
    """Show one entry with its fields, location and freshness."""
    from gitmem.verbs.reads import show as read_show

    record = read_show(get_store(ctx), entry_id)

    def text() -> str:
        conflict = record.get("conflict")
        if conflict:
            versions = "\n".join(f"--- version from {v['from']}:\n{v['text'].rstrip()}"
                                 for v in conflict["versions"])
            return (f"{entry_id} is in conflict: {len(conflict['versions'])} versions between markers"
                    f" at {record['path']}:{conflict['line']}\n\n{versions}\n\nsettle it with `gitmem"
                    f" resolve {entry_id} --ours|--theirs|--both`, or edit the file and run"
                    f" `gitmem resolve {entry_id}`")
        fields = "\n".join(f"{k}: {v}" for k, v in record["fields"].items())
        label = f" {record['label']}" if record["label"] else ""
        return (f"{record['title']}{label}\n{record['path']}:{record['line']}  "
                f"[{record['scope']}/{record['layer']}, {record['status']}, {record['freshness']}]\n\n"
                f"{record['body']}\n\n{fields}")

    emit(record, as_json, text)


@click.command(name="list")
@click.option("--layer", "-l", help=f"Only this layer: {LAYER_HELP}.")
@click.option("--scope", type=click.Choice(["global", "workspace", "all"]), default="all", show_default=True,
              help="Which scope to list.")
@click.option("--all", "include_all", is_flag=True, help="Include forgotten, superseded and expired entries.")
@json_option
@workspace_option
@click.pass_context
def list_cmd(ctx: click.Context, layer: str | None, scope: str, include_all: bool, as_json: bool) -> None:
    """List entries (id, title, freshness), optionally of one layer."""
    from gitmem.verbs.reads import list_entries, skipped_note

    store = get_store(ctx)
    scopes = None if scope == "all" else [store.scope_for(scope)]
    skipped: set[str] = set()
    records = list_entries(store, layer=layer, scopes=scopes, include_all=include_all, skipped=skipped)
    lines = [f"{r['id'] or '-'}  {r['title']}{' ' + r['label'] if r['label'] else ''}" for r in records]
    emit(records, as_json, "\n".join(lines) or "no entries")
    if skipped:
        click.echo(f"gitmem: {skipped_note(skipped)}", err=True)
    if not records:
        sys.exit(1)


@click.command()
@click.argument("entry_id", metavar="ID")
@click.option("--undo", is_flag=True, help="Release a forgotten entry.")
@json_option
@click.pass_context
def forget(ctx: click.Context, entry_id: str, undo: bool, as_json: bool) -> None:
    """Forget an entry (soft: hidden from search and context, re-adding refused); --undo releases it."""
    from gitmem.verbs.entries import forget as do_forget

    print_write(do_forget(get_store(ctx), entry_id, undo=undo), as_json)


@click.command()
@click.argument("entry_id", metavar="ID")
@json_option
@click.pass_context
def verify(ctx: click.Context, entry_id: str, as_json: bool) -> None:
    """Re-confirm an entry today (its freshness counts from now)."""
    from gitmem.verbs.entries import verify as do_verify

    print_write(do_verify(get_store(ctx), entry_id), as_json)


@click.command()
@click.argument("statement", metavar="DECISION")
@click.option("--rationale", "-r", required=True, help="Why this option won.")
@click.option("--context", "-c", "context_text", help="The situation that forced the choice.")
@click.option("--alternatives", "-a", multiple=True, help="An option considered and rejected (repeatable).")
@click.option("--consequences", help="What follows from the decision.")
@click.option("--topic", "-t", help="Topic within the decisions layer; default 'general'.")
@click.option("--importance", type=click.Choice(["critical", "high", "normal", "low"]),
              help="How much the entry matters (default normal).")
@allow_secret_option
@scope_option
@json_option
@click.pass_context
def decision(ctx: click.Context, statement: str, rationale: str, context_text: str | None,
             alternatives: tuple[str, ...], consequences: str | None, topic: str | None,
             importance: str | None, allow_secret: bool, scope: str, as_json: bool) -> None:
    """Record a settled choice (the heading) with context, rationale, alternatives, consequences
    (`--rationale -` reads the rationale from stdin)."""
    from gitmem.verbs.decisions import decision as do_decision

    result = do_decision(get_store(ctx), statement, rationale=text_argument(rationale), context=context_text,
                         alternatives=list(alternatives), consequences=consequences, topic=topic,
                         importance=importance, scope=scope, allow_secret=allow_secret)
    print_write(result, as_json)


@click.command()
@click.argument("topic")
@click.argument("text")
@click.option("--importance", type=click.Choice(["critical", "high", "normal", "low"]),
              help="How much the entry matters (default normal).")
@allow_secret_option
@json_option
@workspace_option
@click.pass_context
def codebase(ctx: click.Context, topic: str, text: str, importance: str | None, allow_secret: bool,
             as_json: bool) -> None:
    """Record what a path or subsystem (TOPIC) of the current workspace does (TEXT `-`: from
    stdin); re-recording updates it."""
    from gitmem.verbs.entries import codebase as do_codebase

    print_write(do_codebase(get_store(ctx), topic, text_argument(text), importance=importance,
                            allow_secret=allow_secret), as_json)


COMMANDS = (remember, show, list_cmd, forget, verify, decision, codebase)
