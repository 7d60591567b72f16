"""CLI verbs for search: `search` and `reindex` (thin: parse, call gitmem.searching, print)."""

from __future__ import annotations

import sys
from typing import Any

import click

from gitmem.cli.options import emit, get_store, hook_option, json_option, run_hook
from gitmem.cli.targets import space_option


def _hit_line(hit: dict[str, Any], spaces: bool) -> str:
    marks = [m for m in (hit["freshness"] if hit["freshness"] not in ("fresh", "aging") else "",
                         "CONFLICT" if hit["conflicted"] else "",
                         "SUSPECT" if hit.get("suspect") else "",
                         hit["status"] if hit["status"] != "live" else "") if m]
    flag = f" [{', '.join(dict.fromkeys(marks))}]" if marks else ""  # expired is a grade and a status
    head = f"{hit.get('ref') or hit['id'] or '(no Id yet)'}  {hit['title']}{flag}"
    where = f"{hit['space']}:" if spaces else ""
    place = hit.get("note") or f"{hit['path']}:{hit['line']}"  # a folder's note: its own place
    line = f"{head}\n    {where}{place}  {hit['scope']}/{hit['layer']}  {hit['snippet']}"
    if hit.get("suspect"):
        from gitmem.verbs.suspects import summary

        line += f"\n    suspect: {summary(hit['suspect'])}"
    if hit.get("explain"):
        line += f"\n    why: {hit['explain']['summary']}"
    return line


@click.command()
@click.argument("query", required=False)
@click.option("--layer", "-l", help="Only this layer (`documents` for project documents).")
@click.option("--scope", type=click.Choice(["global", "workspace"]),
              help="global only, or a workspace plus global (default: every scope).")
@click.option("--workspace", "-w", help="Search this workspace plus global.")
@click.option("--limit", "-n", type=int, default=10, show_default=True, help="Most results to return.")
@click.option("--all", "include_all", is_flag=True, help="Include forgotten, superseded and expired entries, and archived documents.")
@click.option("--rerank/--no-rerank", default=None,
              help="Let the model ladder reorder the top 30 hits (default: setting search.rerank, off); a failing or slow model keeps the lexical order, with a note.")
@click.option("--explain", is_flag=True, help="Say for each hit why it ranked where it did (terms, fields, freshness, importance, date match, neighbour lift).")
@space_option
@hook_option
@json_option
@click.pass_context
def search(ctx: click.Context, query: str | None, layer: str | None, scope: str | None,
           workspace: str | None, limit: int, include_all: bool, rerank: bool | None, explain: bool,
           space: str | None, hook: bool, as_json: bool) -> None:
    """Ranked full-text search over the store and its active spaces, with path:line citations;
    exit 1 when nothing matches (`--hook`: the entries for a UserPromptSubmit hook's prompt)."""
    if hook:
        from gitmem.integrate.hooks import search_hook

        run_hook(ctx, search_hook)
        return
    if query is None:
        raise click.UsageError("missing argument QUERY")
    from gitmem.consolidate.rerank import search as do_search
    from gitmem.verbs.reads import skipped_note
    from gitmem.verbs.search import skipped_files

    store = get_store(ctx)
    hits = do_search(store, query, rerank_hits=rerank, scope=scope, workspace=workspace,
                     layer=layer, limit=limit, include_all=include_all, space=space,
                     explain=explain)
    spaces = len({h["space"] for h in hits}) > 1 or any(h["ref"] != h["id"] for h in hits)
    emit(hits, as_json, lambda: "\n".join(_hit_line(h, spaces) for h in hits) or "no matches")
    skipped = skipped_files(store, scope, workspace)
    if skipped:
        click.echo(f"gitmem: {skipped_note(skipped)}", err=True)
    if not hits:
        sys.exit(1)


@click.command()
@json_option
@click.pass_context
def reindex(ctx: click.Context, as_json: bool) -> None:
    """Rebuild the search index from the Markdown files (nothing is lost by deleting index/)."""
    from gitmem.verbs.search import reindex as do_reindex

    store = get_store(ctx)
    if sys.stderr.isatty() and not as_json:
        with click.progressbar(length=1, label="indexing", file=sys.stderr) as bar:
            def progress(done: int, total: int) -> None:
                bar.length = max(total, 1)
                bar.update(done - bar.pos)

            count = do_reindex(store, progress)
    else:
        count = do_reindex(store)
    emit({"entries": count}, as_json, f"indexed {count} entries")


COMMANDS = (search, reindex)
