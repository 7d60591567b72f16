"""CLI verbs for project documents: `gitmem doc add | update | show | list | archive | restore`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from gitmem.cli.options import allow_secret_option, emit, get_store, json_option, workspace_option


def _read_text(source: str) -> str:
    """FILE's text, or standard input for `-`; UTF-8 only."""
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as exc:
        raise click.BadParameter(f"cannot read {source}: {exc.strerror}") from None
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise click.BadParameter(f"{source} is not UTF-8 text") from None


@click.group(name="doc")
def doc() -> None:
    """Project documents: designs, runbooks, reviews; searchable, archived when the shelf is full."""


@doc.command(name="add")
@click.argument("source", metavar="FILE|-")
@click.option("--title", required=True, help="Title of the document.")
@click.option("--description", default="", help="One line saying what it is for (shown in the card).")
@click.option("--source-path", "source_paths", multiple=True,
              help="A file of the workspace repository the document describes (repeatable).")
@click.option("--session", default="", help="The session that wrote it, e.g. session:4f2a.")
@click.option("--scope", type=click.Choice(["global", "workspace"]), default=None,
              help="Where it lives (default: the current workspace if there is one, else global).")
@allow_secret_option
@json_option
@workspace_option
@click.pass_context
def add_cmd(ctx: click.Context, source: str, title: str, description: str,
            source_paths: tuple[str, ...], session: str, scope: str | None, allow_secret: bool,
            as_json: bool) -> None:
    """Add the text of FILE (or standard input) as a document and print its id."""
    from gitmem.documents.verbs import add

    result = add(get_store(ctx), _read_text(source), title=title, description=description,
                 source_paths=source_paths, scope=scope, session=session, allow_secret=allow_secret)
    emit(result.as_json(), as_json, result.text)


@doc.command(name="update")
@click.argument("doc_id", metavar="ID")
@click.argument("source", metavar="FILE|-")
@click.option("--revision", type=int, default=None,
              help="The revision you read; refused if the document has moved on since.")
@allow_secret_option
@json_option
@click.pass_context
def update_cmd(ctx: click.Context, doc_id: str, source: str, revision: int | None, allow_secret: bool,
               as_json: bool) -> None:
    """Replace the text of document ID by FILE (or standard input)."""
    from gitmem.documents.verbs import update

    result = update(get_store(ctx), doc_id, _read_text(source), revision=revision,
                    allow_secret=allow_secret)
    emit(result.as_json(), as_json, result.text)


@doc.command(name="show")
@click.argument("doc_id", metavar="ID")
@json_option
@click.pass_context
def show_cmd(ctx: click.Context, doc_id: str, as_json: bool) -> None:
    """Print a document (active or archived) with its metadata."""
    from gitmem.documents.verbs import show

    data = show(get_store(ctx), doc_id)

    def text() -> str:
        sources = ", ".join(data["sourcePaths"]) or "-"
        edited = "\n(the copy was edited by hand since this revision)" if data["editedByHand"] else ""
        return (f"{data['id']}  {data['title']}  [{data['status']}, revision {data['revision']}, "
                f"updated {data['updatedAt']}]\n{data['path']}\n{data['description']}\n"
                f"sources: {sources}{edited}\n\n{data['body']}").rstrip("\n")

    emit(data, as_json, text)


@doc.command(name="list")
@click.option("--all", "include_all", is_flag=True, help="Include archived documents.")
@click.option("--scope", type=click.Choice(["global", "workspace"]), default=None,
              help="Only this scope (default: every scope).")
@json_option
@workspace_option
@click.pass_context
def list_cmd(ctx: click.Context, include_all: bool, scope: str | None, as_json: bool) -> None:
    """Documents: id, title, status, size, last update."""
    from gitmem.documents.verbs import list_documents

    rows = list_documents(get_store(ctx), include_all=include_all, scope=scope)
    lines = [f"{r['id']}  {r['title']}  [{r['status']}, rev {r['revision']}, {r['size']} bytes, "
             f"updated {r['updatedAt']}]" + (f"  — {r['description']}" if r["description"] else "")
             for r in rows]
    emit(rows, as_json, "\n".join(lines) or "no documents (`gitmem doc add FILE --title T`)")


def _move_command(name: str, help_text: str) -> click.Command:
    """`doc archive ID` / `doc restore ID`: the same command around a different verb."""

    @click.command(name=name, help=help_text)
    @click.argument("doc_id", metavar="ID")
    @json_option
    @click.pass_context
    def command(ctx: click.Context, doc_id: str, as_json: bool) -> None:
        from gitmem.documents import verbs

        result = getattr(verbs, name)(get_store(ctx), doc_id)
        emit(result.as_json(), as_json, result.text)

    return command


doc.add_command(_move_command(
    "archive", "Move a document to archived/ (out of default search and the card, still readable)."))
doc.add_command(_move_command("restore", "Bring an archived document back to active/."))


COMMANDS = (doc,)
