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
    scope_option,
    text_argument,
    workspace_option,
)
from gitmem.cli.targets import print_routed, space_option


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
@click.option("--paths", help="Code the entry describes: paths in the workspace repository, comma-separated.")
@space_option
@allow_secret_option
@scope_option
@json_option
@click.pass_context
def remember(ctx: click.Context, text: str, layer: str, topic: str | None, title: str | None,
             importance: str | None, volatility: str | None, until: str | None, source: str | None,
             supersedes: str | None, force: bool, paths: str | None, space: str | None,
             allow_secret: bool, scope: str, as_json: bool) -> None:
    """Record TEXT (`-`: read it from stdin) as an entry and print its id (an identical live
    entry's id if it exists)."""
    from gitmem.verbs import routed

    text = text_argument(text)
    print_routed(routed.remember(
        get_store(ctx), text, layer, space=space, paths=paths, topic=topic,
        title=title, importance=importance, volatility=volatility, until=until, source=source,
        supersedes=supersedes, scope=scope, force=force, allow_secret=allow_secret), as_json)


@click.command()
@click.argument("entry_id", metavar="ID")
@space_option
@json_option
@click.pass_context
def show(ctx: click.Context, entry_id: str, space: str | None, as_json: bool) -> None:
    """Show one entry (ID, or SPACE/ID) with its fields, location and freshness."""
    from gitmem.verbs.reads import show as read_show

    record = read_show(get_store(ctx), entry_id, space=space)

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
        where = f"{record['space']}:" if record["ref"] != record["id"] else ""
        suspect = "".join(f"\nSUSPECT: {reason}" for reason in record["suspect"])
        place = record.get("note") or f"{record['path']}:{record['line']}"
        return (f"{record['title']}{label}\n{where}{place}  "
                f"[{record['scope']}/{record['layer']}, {record['status']}, {record['freshness']}]"
                f"{suspect}\n\n{record['body']}\n\n{fields}")

    emit(record, as_json, text)


@click.command(name="list")
@click.option("--layer", "-l", help=f"Only this layer: {LAYER_HELP}.")
@click.option("--scope", type=click.Choice(["global", "workspace", "all"]), default="all", show_default=True,
              help="Which scope to list.")
@click.option("--all", "include_all", is_flag=True, help="Include forgotten, superseded and expired entries.")
@space_option
@json_option
@workspace_option
@click.pass_context
def list_cmd(ctx: click.Context, layer: str | None, scope: str, include_all: bool, space: str | None,
             as_json: bool) -> None:
    """List entries (id, title, freshness) of the store and its active spaces, optionally of one layer."""
    from gitmem.verbs.base import record_ref
    from gitmem.verbs.reads import list_entries, skipped_note

    store = get_store(ctx)
    scopes = None if scope == "all" else [store.scope_for(scope)]
    skipped: set[str] = set()
    records = list_entries(store, layer=layer, scopes=scopes, include_all=include_all, space=space,
                           skipped=skipped)
    lines = [f"{r['ref'] or '(' + record_ref(r) + ')'}  {r['title']}{' ' + r['label'] if r['label'] else ''}" for r in records]
    emit(records, as_json, "\n".join(lines) or "no entries")
    if skipped:
        click.echo(f"gitmem: {skipped_note(skipped)}", err=True)
    if not records:
        sys.exit(1)


@click.command()
@click.argument("entry_id", metavar="ID")
@click.option("--undo", is_flag=True, help="Release a forgotten entry.")
@space_option
@json_option
@click.pass_context
def forget(ctx: click.Context, entry_id: str, undo: bool, space: str | None, as_json: bool) -> None:
    """Forget an entry (soft: hidden from search and context, re-adding refused); --undo releases it."""
    from gitmem.verbs import routed

    print_routed(routed.forget(get_store(ctx), entry_id, undo=undo, space=space), as_json)


@click.command()
@click.argument("entry_id", metavar="ID")
@space_option
@json_option
@click.pass_context
def verify(ctx: click.Context, entry_id: str, space: str | None, as_json: bool) -> None:
    """Re-confirm an entry today (its freshness counts from now; a suspect mark clears)."""
    from gitmem.verbs import routed

    print_routed(routed.verify(get_store(ctx), entry_id, space=space), as_json)


@click.command()
@click.argument("statement", metavar="DECISION")
@click.option("--rationale", "-r", required=True, help="Why this option won.")
@click.option("--context", "-c", "context_text", help="The situation that forced the choice.")
@click.option("--alternatives", "-a", multiple=True, help="An option considered and rejected (repeatable).")
@click.option("--consequences", help="What follows from the decision.")
@click.option("--topic", "-t", help="Topic within the decisions layer; default 'general'.")
@click.option("--importance", type=click.Choice(["critical", "high", "normal", "low"]),
              help="How much the entry matters (default normal).")
@space_option
@allow_secret_option
@scope_option
@json_option
@click.pass_context
def decision(ctx: click.Context, statement: str, rationale: str, context_text: str | None,
             alternatives: tuple[str, ...], consequences: str | None, topic: str | None,
             importance: str | None, space: str | None, allow_secret: bool, scope: str,
             as_json: bool) -> None:
    """Record a settled choice (the heading) with context, rationale, alternatives, consequences
    (`--rationale -` reads the rationale from stdin)."""
    from gitmem.verbs import routed

    rationale = text_argument(rationale)
    print_routed(routed.decision(
        get_store(ctx), statement, rationale=rationale, space=space,
        context=context_text, alternatives=list(alternatives), consequences=consequences,
        topic=topic, importance=importance, scope=scope, allow_secret=allow_secret), as_json)


@click.command()
@click.argument("topic")
@click.argument("text")
@click.option("--importance", type=click.Choice(["critical", "high", "normal", "low"]),
              help="How much the entry matters (default normal).")
@space_option
@allow_secret_option
@json_option
@workspace_option
@click.pass_context
def codebase(ctx: click.Context, topic: str, text: str, importance: str | None, space: str | None,
             allow_secret: bool,
             as_json: bool) -> None:
    """Record what a path or subsystem (TOPIC) of the current workspace does (TEXT `-`: from
    stdin); re-recording updates it."""
    from gitmem.verbs import routed

    text = text_argument(text)
    print_routed(routed.codebase(get_store(ctx), topic, text, space=space,
                                 importance=importance, allow_secret=allow_secret), as_json)


COMMANDS = (remember, show, list_cmd, forget, verify, decision, codebase)
