"""CLI verbs for the hot runtime memory: `gitmem runtime add | replace | archive | remove | resolve |
maintain | show`."""

from __future__ import annotations

from typing import Any

import click

from gitmem.cli.options import allow_secret_option, emit, get_store, json_option, workspace_option

TARGET_HELP = "user (who the user is; global only) or memory (project conventions, environment)."


def _target_option(default: str | None) -> Any:
    return click.option("--target", "-t", type=click.Choice(["user", "memory"]), default=default,
                        show_default=default is not None, help=f"Which hot file: {TARGET_HELP}")


def _scope_option(func: Any) -> Any:
    func = workspace_option(func)
    return click.option("--scope", type=click.Choice(["global", "workspace"]), default="global",
                        show_default=True,
                        help="The global MEMORY.md or the current workspace's (target memory).")(func)


@click.group(name="runtime")
def runtime() -> None:
    """The hot memory in every prompt: USER.md (the user) and MEMORY.md (the project)."""


@runtime.command(name="add")
@click.argument("text")
@_target_option("memory")
@click.option("--importance", type=click.Choice(["critical", "normal", "low"]), default="normal",
              show_default=True, help="Retention when the file is full: critical items never leave.")
@click.option("--branch", "branches", multiple=True,
              help="Show this memory item only on this git branch of the workspace (repeatable).")
@allow_secret_option
@_scope_option
@json_option
@click.pass_context
def add_cmd(ctx: click.Context, text: str, target: str, importance: str, branches: tuple[str, ...],
            allow_secret: bool, scope: str, as_json: bool) -> None:
    """Add TEXT as one item; a full file moves its least important items out and says where."""
    from gitmem.runtime.verbs import add

    result = add(get_store(ctx), text, target=target, importance=importance, branches=branches,
                 scope=scope, allow_secret=allow_secret)
    emit(result.as_json(), as_json, result.text)


@runtime.command(name="replace")
@click.argument("old")
@click.argument("new")
@_target_option("memory")
@click.option("--make-room", is_flag=True,
              help="When NEW would overflow the file, move its least important items into the layers.")
@allow_secret_option
@_scope_option
@json_option
@click.pass_context
def replace_cmd(ctx: click.Context, old: str, new: str, target: str, make_room: bool, allow_secret: bool,
                scope: str, as_json: bool) -> None:
    """Replace the item OLD designates (its id, its whole text, or a unique part) by NEW."""
    from gitmem.runtime.verbs import replace_item

    result = replace_item(get_store(ctx), old, new, target=target, scope=scope,
                          allow_secret=allow_secret, make_room=make_room)
    emit(result.as_json(), as_json, result.text)


@runtime.command(name="archive")
@click.argument("old")
@_target_option("memory")
@_scope_option
@json_option
@click.pass_context
def archive_cmd(ctx: click.Context, old: str, target: str, scope: str, as_json: bool) -> None:
    """Move the item OLD designates out of the hot file now: a memory item into its scope's
    layers, a user item to USER.archive.md, with where it came from."""
    from gitmem.runtime.verbs import archive_item

    result = archive_item(get_store(ctx), old, target=target, scope=scope)
    emit(result.as_json(), as_json, result.text)


@runtime.command(name="remove")
@click.argument("old")
@_target_option("memory")
@_scope_option
@json_option
@click.pass_context
def remove_cmd(ctx: click.Context, old: str, target: str, scope: str, as_json: bool) -> None:
    """Remove the item OLD designates (its id, its whole text, or a unique part)."""
    from gitmem.runtime.verbs import remove_item

    result = remove_item(get_store(ctx), old, target=target, scope=scope)
    emit(result.as_json(), as_json, result.text)


@runtime.command(name="resolve")
@click.argument("item_id", metavar="ID")
@click.option("--keep", type=click.Choice(["ours", "theirs"]), required=True,
              help="ours: the version this machine wrote; theirs: the other machine's (`gitmem conflicts` names both).")
@json_option
@click.pass_context
def resolve_cmd(ctx: click.Context, item_id: str, keep: str, as_json: bool) -> None:
    """Settle an item two machines changed differently."""
    from gitmem.runtime.verbs import resolve_item

    result = resolve_item(get_store(ctx), item_id, keep)
    emit(result.as_json(), as_json, result.text)


def _maintain_text(data: dict[str, Any]) -> str:
    lines: list[str] = []
    for proposal in data["proposals"]:
        what = "merge" if proposal["kind"] == "runtime-merge" else "compaction"
        where = f" (queued as {proposal['queuedAs']})" if proposal["queuedAs"] else ""
        lines.append(f"{what} in {proposal['scope']} {proposal['target']}: {proposal['reason']}{where}")
        lines += [f"  - {s['id']}: {s['content']}" for s in proposal["sources"]]
        lines += [f"  + {text}" for text in proposal["texts"]]
    lines += [f"note: {note}" for note in data["notes"]]
    if not data["proposals"]:
        lines.append("nothing to propose")
    elif data["mode"] == "dry-run":
        lines.append("shown only, nothing written: `gitmem runtime maintain --queue` puts them in the review "
                     "queue (`gitmem review accept ID` applies one)")
    else:
        lines.append(f"{len(data['queued'])} queued for review: `gitmem review` lists them, "
                     "`gitmem review accept ID` applies one")
    return "\n".join(lines)


@runtime.command(name="maintain")
@click.option("--scope", type=click.Choice(["global", "workspace"]), default=None,
              help="Only this scope (default: every scope with runtime memory).")
@click.option("--queue/--dry-run", "queue", default=False, show_default=True,
              help="Put the proposals in the review queue, or only show them (the default).")
@json_option
@workspace_option
@click.pass_context
def maintain_cmd(ctx: click.Context, scope: str | None, queue: bool, as_json: bool) -> None:
    """Propose merges of near-duplicate USER.md items and a compaction of a MEMORY.md near its
    budget, through the model ladder; nothing is applied here (`gitmem review accept` does)."""
    from gitmem.consolidate.maintain import maintain

    data = maintain(get_store(ctx), scope=scope, queue=queue).as_json()
    emit(data, as_json, lambda: _maintain_text(data))


@runtime.command(name="show")
@_target_option(None)
@click.option("--scope", type=click.Choice(["global", "workspace"]), default=None,
              help="Only this scope (default: global and the current workspace).")
@json_option
@workspace_option
@click.pass_context
def show_cmd(ctx: click.Context, target: str | None, scope: str | None, as_json: bool) -> None:
    """Items with their metadata, and how full each file is."""
    from gitmem.runtime.reads import show

    data = show(get_store(ctx), target=target, scope=scope)

    def text() -> str:
        lines: list[str] = []
        for block in data["scopes"]:
            lines.append(f"{block['path']}  {block['bytes']}/{block['limit']} bytes, "
                         f"{len(block['items'])} item(s)")
            for item in block["items"]:
                hidden = "" if item["visible"] else f" (hidden on branch {data['branch']})"
                pending = " (hand edit, imported by the next runtime write)" if item.get("pending") else ""
                lines.append(f"  {item['id']} {item['meta']}{hidden}{pending}")
                lines.append(f"    {item['content']}")
            lines += [f"  note: {note}" for note in block["notes"]]
        return "\n".join(lines) or "no runtime memory yet (`gitmem runtime add TEXT`)"

    emit(data, as_json, text)


COMMANDS = (runtime,)
