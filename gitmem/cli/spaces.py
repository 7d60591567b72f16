"""`gitmem space ...`: mount other stores as spaces, list them, switch them on and off, route
writes to them, merge one into another."""

from __future__ import annotations

from typing import Any

import click

from gitmem.cli.options import LAYER_HELP, emit, get_store, json_option


def _row(info: dict[str, Any]) -> str:
    state = ("home" if info["active"] else "home, not read") if info["home"] else (
        "active" if info["active"] else "inactive")
    if info["status"] != "ok":
        state += f", {info['status']}"
    own = f" (calls itself {info['own_name']})" if info.get("own_name") not in (None, info["name"]) else ""
    if info.get("provider", "gitmem") != "gitmem":
        state += f", read-only {info['provider']} folder"
    text = f"{info['name']}  [{state}]  {info['path']}{own}"
    if info.get("description"):
        text += f"\n    {info['description']}"
    if info.get("keywords"):
        text += f"\n    keywords: {', '.join(info['keywords'])}"
    for rule in info.get("routes") or []:
        text += "\n    route: " + ", ".join(f"{k} {v}" for k, v in rule.items() if k != "space")
    if info.get("problem"):
        text += f"\n    {info['problem']}"
    for note, why in (info.get("skipped") or {}).items():
        text += f"\n    skipped {note}: {why}"
    return text


@click.group(name="space")
def space() -> None:
    """Other gitmem stores mounted as spaces: read together, written by choice or routing."""


@space.command(name="add")
@click.argument("name")
@click.argument("location", metavar="PATH|URL")
@click.option("--description", "-d", help="What belongs in the space (saved in its memory.json).")
@click.option("--keyword", "-k", "keywords", multiple=True,
              help="A routing keyword of the space: writes mentioning it go there (repeatable).")
@click.option("--inactive", is_flag=True, help="Mount it switched off (not read until activated).")
@click.option("--branch", default="main", show_default=True, help="Branch to clone from a URL.")
@click.option("--create", is_flag=True,
              help="Create a new store at PATH when it is missing or an empty folder (asked on a terminal).")
@click.option("--provider", type=click.Choice(["gitmem", "markdown", "obsidian", "basic-memory"]),
              help="What PATH is: a gitmem store, or a read-only folder of Markdown notes"
                   " (default: detected; markdown finds obsidian and basic-memory folders itself).")
@json_option
@click.pass_context
def space_add(ctx: click.Context, name: str, location: str, description: str | None,
              keywords: tuple[str, ...], inactive: bool, branch: str, create: bool,
              provider: str | None, as_json: bool) -> None:
    """Mount the gitmem store at PATH, or clone one from URL, as space NAME (on this machine);
    a folder of Markdown notes (an Obsidian vault, a basic-memory project) is mounted read-only."""
    import sys

    from gitmem.spaces.manage import add_space, can_create

    store = get_store(ctx)
    if not create and provider in (None, "gitmem") and can_create(location) and sys.stdin.isatty() \
            and not as_json:
        create = click.confirm(f"{location} holds no gitmem store: create one there?", default=False,
                               err=True)
    info = add_space(store, name, location, description=description,
                     keywords=list(keywords), inactive=inactive, branch=branch, create=create,
                     provider=provider)
    emit(info, as_json, lambda: _row(info))


@space.command(name="list")
@json_option
@click.pass_context
def space_list(ctx: click.Context, as_json: bool) -> None:
    """The store itself and every mounted space, with state, description and routing."""
    from gitmem.spaces.manage import list_spaces

    rows = list_spaces(get_store(ctx))
    emit(rows, as_json, lambda: "\n".join(_row(r) for r in rows))


@space.command(name="discover")
@click.argument("folders", nargs=-1, metavar="[FOLDER]...")
@click.option("--add", "mount", is_flag=True, help="Mount every store found (switched off: activate the ones you want).")
@json_option
@click.pass_context
def space_discover(ctx: click.Context, folders: tuple[str, ...], mount: bool, as_json: bool) -> None:
    """Find gitmem stores on this machine (in FOLDERs, or the usual places) not yet mounted."""
    from gitmem.spaces.discover import discover
    from gitmem.spaces.manage import add_space

    store = get_store(ctx)
    found = discover(store, list(folders) or None)
    rows = [f.as_json() for f in found]
    if mount:
        for row in rows:
            if not row["mounted"]:
                add_space(store, row["name"], row["path"], inactive=True)
                row["mounted"] = row["added"] = True

    def text() -> str:
        if not rows:
            return "no other gitmem store found"
        lines = [f"{r['name']}  {r['path']}" + (f"  ({r['description']})" if r["description"] else "")
                 + ("  [mounted now, inactive]" if r.get("added") else "  [mounted]" if r["mounted"] else "")
                 for r in rows]
        if not mount and any(not r["mounted"] for r in rows):
            lines.append("mount one with `gitmem space add NAME PATH`, or all (switched off) with --add")
        return "\n".join(lines)

    emit(rows, as_json, text)


@space.command(name="activate")
@click.argument("name")
@json_option
@click.pass_context
def space_activate(ctx: click.Context, name: str, as_json: bool) -> None:
    """Switch a space on: searches, lists, shows and the context card read it."""
    from gitmem.spaces.manage import set_active

    info = set_active(get_store(ctx), name, True)
    emit(info, as_json, lambda: _row(info))


@space.command(name="deactivate")
@click.argument("name")
@json_option
@click.pass_context
def space_deactivate(ctx: click.Context, name: str, as_json: bool) -> None:
    """Switch a space off: no read covers it and no routing rule sends writes there."""
    from gitmem.spaces.manage import set_active

    info = set_active(get_store(ctx), name, False)
    emit(info, as_json, lambda: _row(info))


@space.command(name="remove")
@click.argument("name")
@json_option
@click.pass_context
def space_remove(ctx: click.Context, name: str, as_json: bool) -> None:
    """Unmount a space; its folder is left as it is (nothing is deleted)."""
    from gitmem.spaces.manage import remove_space

    info = remove_space(get_store(ctx), name)
    emit(info, as_json, f"unmounted {name}; its store stays at {info['path']}")


@space.command(name="describe")
@click.argument("name")
@click.option("--description", "-d", help="What belongs in the space.")
@click.option("--keyword", "-k", "keywords", multiple=True, help="A routing keyword (repeatable).")
@click.option("--name", "own_name", help="The name the store gives itself (default 'home').")
@json_option
@click.pass_context
def space_describe(ctx: click.Context, name: str, description: str | None, keywords: tuple[str, ...],
                   own_name: str | None, as_json: bool) -> None:
    """Set a space's own description, keywords or name, in its memory.json (one commit there)."""
    from gitmem.errors import InvalidInputError
    from gitmem.spaces.manage import describe_folder, describe_space
    from gitmem.spaces.mounts import check_name, get_mount, is_home, load_mounts, open_mount

    home = get_store(ctx)
    mount = None if is_home(home, name) else get_mount(home, name)
    store = home if mount is None else open_mount(home, mount)
    if own_name and store is home and own_name in load_mounts(home.root):
        raise InvalidInputError(f"{own_name!r} already names a mounted space")
    if mount is not None and not mount.writable:
        if own_name:
            raise InvalidInputError(f"space {name!r} is a read-only Markdown folder: it is named by its mount")
        changed = describe_folder(home, name, description, list(keywords))
    else:
        changed = describe_space(store, check_name(own_name) if own_name else name, description,
                                 list(keywords), rename=own_name is not None)
    emit({"space": name, "changed": changed}, as_json,
         f"{name}: described" if changed else f"{name}: already so; nothing changed")


@space.command(name="route")
@click.argument("name")
@click.option("--layer", "-l", help=f"Writes to this layer go to NAME: {LAYER_HELP}.")
@click.option("--topic", "-t", help="Writes to this topic (a glob, e.g. 'deploy*') go to NAME.")
@click.option("--keyword", "-k", help="Writes mentioning this word go to NAME.")
@click.option("--clear", is_flag=True, help="Remove every routing rule of NAME.")
@json_option
@click.pass_context
def space_route(ctx: click.Context, name: str, layer: str | None, topic: str | None,
                keyword: str | None, clear: bool, as_json: bool) -> None:
    """Add a routing rule sending writes to space NAME (every given condition must hold)."""
    from gitmem.errors import InvalidInputError
    from gitmem.format.layers import layer_spec
    from gitmem.spaces.mounts import get_mount
    from gitmem.spaces.routing import Rule, add_rule, clear_rules

    home = get_store(ctx)
    if clear:
        routes = clear_rules(home, name)
    else:
        if not (layer or topic or keyword):
            raise InvalidInputError("give at least one of --layer, --topic, --keyword (or --clear)")
        if layer:
            layer_spec(layer)
        get_mount(home, name)
        routes = add_rule(home, Rule(name, layer, topic, keyword))
    lines = [", ".join(f"{k} {v}" for k, v in r.items()) for r in routes]
    emit(routes, as_json, "\n".join(lines) or "no routing rules")


@space.command(name="merge")
@click.argument("source", metavar="FROM")
@click.argument("target", metavar="INTO")
@click.option("--keep-active", is_flag=True, help="Leave FROM active after the merge.")
@json_option
@click.pass_context
def space_merge(ctx: click.Context, source: str, target: str, keep_active: bool, as_json: bool) -> None:
    """Import every entry of space FROM into space INTO (one commit there); ids renumbered where
    they collide; FROM is deactivated, never changed."""
    from gitmem.spaces.merge import merge_spaces

    report = merge_spaces(get_store(ctx), source, target, deactivate=not keep_active)

    def text() -> str:
        lines = [f"merged {len(report.imported)} entries from {report.source} into {report.target}"]
        lines += [f"  {old} -> {new} (renumbered)" for old, new in sorted(report.renumbered.items())]
        if report.duplicates:
            lines.append(f"  {len(report.duplicates)} already there, not copied")
        if report.deactivated:
            lines.append(f"  {report.source} is now inactive")
        return "\n".join(lines)

    emit(report.as_json(), as_json, text)


COMMANDS = (space,)
