"""The store's own history, per entry: `why`, `as-of DATE|REV search|show`, `revert`, and what
`gitmem log ID` prints (the `log` command itself is in activity.py)."""

from __future__ import annotations

from typing import Any

import click

from gitmem.cli.options import emit, get_store, json_option
from gitmem.cli.targets import entry_target, print_entry_write, space_option

ALL_HELP = "Every change, however many (default: the newest {n})."


def _entry_store(ctx: click.Context, entry_id: str, space: str | None) -> tuple[Any, str, str]:
    """The store an `ID`/`SPACE/ID` belongs to, the bare id (the entry may be gone now), and
    the reference to show."""
    from gitmem.errors import NotFoundError
    from gitmem.spaces.lookup import split_ref
    from gitmem.spaces.mounts import is_home, open_for_read

    home = get_store(ctx)
    named, bare = split_ref(entry_id)
    name = named or space
    if name:
        return open_for_read(home, name), bare, bare if is_home(home, name) else f"{name}/{bare}"
    from gitmem.verbs.routed import entry_ref

    try:
        ref = entry_ref(home, entry_id, None)  # the store opened above: opened once a call
        return ref.store, bare, ref.qualified
    except NotFoundError:
        return home, bare, bare  # removed since: its history is still in the store


def _commit_line(change: dict[str, Any]) -> str:
    machine = f" on {change['machine']}" if change["machine"] else ""
    return f"{change['short']} {change['date']} {change['author']}{machine}: {change['message']}"


class Progress:
    """How far reading history into the index got, on one line of stderr rewritten in place:
    only on a terminal, only once reading has taken a second, at most twice a second."""

    FIRST, EVERY = 1.0, 0.5

    def __init__(self) -> None:
        import time

        self.began = time.monotonic()
        self.last = 0.0
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        import sys
        import time

        from gitmem import caller

        now = time.monotonic()
        if done < total and (now - self.began < self.FIRST or now - self.last < self.EVERY):
            return
        if caller.current() is not None or not sys.stderr.isatty() or (done == total and not self.shown):
            return  # a call the warm server answers prints at its end: no progress to show
        self.last, self.shown = now, True
        click.echo(f"\rgitmem: reading history into the index: {done:,}/{total:,} commits", err=True,
                   nl=done == total)


@click.command()
@click.argument("entry_id", metavar="ID")
@click.option("--all", "show_all", is_flag=True, help=ALL_HELP.format(n=20))
@space_option
@json_option
@click.pass_context
def why(ctx: click.Context, entry_id: str, show_all: bool, space: str | None, as_json: bool) -> None:
    """Where an entry comes from: the commit that created it (date, author, machine), its
    source (session, digest, space), and its later changes (the newest 20; --all for every one),
    from the store's git history."""
    from gitmem.provenance.why import why as explain

    store, bare, ref = _entry_store(ctx, entry_id, space)
    data = {**explain(store, bare, limit=None if show_all else 20, progress=Progress()), "ref": ref}

    def text() -> str:
        where = data["path"] or "(removed from the store)"
        lines = [f"{ref}  {data['title']}", f"  now in {where}",
                 f"created {_commit_line(data['created'])}", f"  in {data['created']['path']}"]
        lines += [f"source: {s['raw']} ({s['meaning']})" for s in data["source"]] or ["source: not recorded"]
        if data["changes"]:
            lines.append("changes:")
            if data["more"]:
                lines.append(f"  … up to {data['more']:,} older changes not shown (--all shows every one)")
            lines += [f"  {_commit_line(c)}\n      {c['summary']}" for c in data["changes"]]
        return "\n".join(lines)

    emit(data, as_json, text)


def entry_log(ctx: click.Context, entry_id: str, space: str | None, limit: int | None, as_json: bool) -> None:
    """`gitmem log ID`: the newest `limit` versions of one entry (None: all), newest first, with
    the text of each; only those are read."""
    from gitmem.provenance.why import entry_log as versions_of

    store, bare, _ref = _entry_store(ctx, entry_id, space)
    versions = versions_of(store, bare, limit, progress=Progress())

    def text() -> str:
        blocks = []
        for version in versions:
            body = version["text"] or "(removed)\n"
            blocks.append(f"{_commit_line(version)}\n  {version['kind']}: {version['summary']}\n\n"
                          + "".join(f"    {line}\n" for line in body.splitlines()))
        return "\n".join(blocks).rstrip("\n")

    emit(versions, as_json, text)


@click.group(name="as-of")
@click.argument("when", metavar="DATE|REV")
def as_of(when: str) -> None:
    """Read the store as it was at DATE (YYYY-MM-DD: the end of that day) or REV, from git,
    without touching the files: `as-of DATE search QUERY`, `as-of REV show ID`."""


def _when(ctx: click.Context) -> str:
    parent = ctx.parent
    assert parent is not None
    return str(parent.params["when"])


@as_of.command(name="show")
@click.argument("entry_id", metavar="ID")
@space_option
@json_option
@click.pass_context
def as_of_show(ctx: click.Context, entry_id: str, space: str | None, as_json: bool) -> None:
    """Entry ID as it was then."""
    from gitmem.provenance.asof import show_at

    store, bare, ref = _entry_store(ctx, entry_id, space)
    record = {**show_at(store, _when(ctx), bare, progress=Progress()), "ref": ref}

    def text() -> str:
        fields = "\n".join(f"{k}: {v}" for k, v in record["fields"].items())
        at = record["as_of"]
        return (f"as of {at['commit'][:7]} ({at['date']}): {at['message']}\n\n"
                f"{record['title']}\n{record['path']}:{record['line']}  [{record['scope']}/"
                f"{record['layer']}, {record['status']}, {record['freshness']}]\n\n"
                f"{record['body']}\n\n{fields}")

    emit(record, as_json, text)


@as_of.command(name="search")
@click.argument("query")
@click.option("--layer", "-l", help="Only this layer.")
@click.option("--scope", type=click.Choice(["global", "workspace"]),
              help="global only, or a workspace plus global (default: every scope).")
@click.option("--workspace", "-w", help="Search this workspace plus global.")
@click.option("--limit", "-n", type=int, default=10, show_default=True, help="Most results to return.")
@click.option("--all", "include_all", is_flag=True, help="Include forgotten, superseded and expired entries.")
@space_option
@json_option
@click.pass_context
def as_of_search(ctx: click.Context, query: str, layer: str | None, scope: str | None,
                 workspace: str | None, limit: int, include_all: bool, space: str | None,
                 as_json: bool) -> None:
    """Ranked search over the store as it was then; exit 1 when nothing matches."""
    import sys

    from gitmem.cli.search import _hit_line
    from gitmem.errors import InvalidInputError
    from gitmem.provenance.asof import search_at
    from gitmem.spaces.mounts import open_for_read
    from gitmem.verbs.search import MAX_LIMIT, search_scopes

    if not query.strip():
        raise InvalidInputError("query must not be empty")
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInputError(f"--limit must be between 1 and {MAX_LIMIT}")
    home = get_store(ctx)
    store = open_for_read(home, space) if space else home
    data = search_at(store, _when(ctx), query, scopes=search_scopes(home, scope, workspace),
                     layer=layer, limit=limit, include_all=include_all, progress=Progress())
    if store is not home:
        for hit in data["hits"]:
            hit.update(space=space, ref=f"{space}/{hit['id']}" if hit["id"] else None)
    at = data["as_of"]
    emit(data, as_json, lambda: "\n".join([f"as of {at['commit'][:7]} ({at['date']})",
                                           *(_hit_line(h, False) for h in data["hits"])]))
    if not data["hits"]:
        sys.exit(1)


@click.command()
@click.argument("entry_id", metavar="ID")
@click.option("--to", "to", metavar="DATE|REV", help="The version to bring back (default: the previous one).")
@space_option
@json_option
@click.pass_context
def revert(ctx: click.Context, entry_id: str, to: str | None, space: str | None, as_json: bool) -> None:
    """Bring entry ID's text back as it was (at --to, else before its last change), in one commit."""
    from gitmem.errors import NotFoundError
    from gitmem.verbs.revert import revert as do_revert

    try:
        home, ref = entry_target(ctx, entry_id, space)
        store, bare = ref.store, ref.id
    except NotFoundError:  # removed since: bring it back from history
        store, bare, _ref = _entry_store(ctx, entry_id, space)
        home, ref = get_store(ctx), None
    result = do_revert(store, bare, to=to)
    if not result.changed and not as_json:  # the id alone would read as a revert made
        click.echo(f"gitmem: note: {result.note or 'nothing changed'}", err=True)
    if ref is not None:
        print_entry_write(home, ref, result, as_json)
    else:
        emit({"id": result.id, "path": result.path, "changed": result.changed, "note": result.note},
             as_json, result.id or result.path)


COMMANDS = (why, as_of, revert)
