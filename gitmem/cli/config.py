"""`gitmem config list|get|set|unset`: the store's settings (see gitmem/verbs/config.py)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from gitmem.cli.options import emit, get_store, json_option, text_argument

if TYPE_CHECKING:
    from gitmem.verbs.config import SettingValue


def _shown(value: Any) -> str:
    return "(not set)" if value is None else json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value


def setting_line(item: SettingValue) -> str:
    """`key = value` and where it comes from, as a person reads it."""
    origin = item.stored_in if item.explicit else "default"
    line = f"{item.key} = {_shown(item.value)}  ({origin})"
    if item.problem:
        line += f"  [unreadable: {item.problem}]"
    return line


def _written(item: SettingValue) -> str:
    lines = [setting_line(item) + ("" if item.changed else "  [unchanged]")]
    return "\n".join(lines + ([item.note] if item.note else []))


@click.group(name="config")
def config() -> None:
    """Settings: shared ones in memory.json (each change one commit) and this machine's in state/."""


@config.command(name="list")
@json_option
@click.pass_context
def config_list(ctx: click.Context, as_json: bool) -> None:
    """Every setting with the value in force, its default and where it is kept."""
    from gitmem.verbs.config import settings_list

    items = settings_list(get_store(ctx))
    emit([i.as_json() for i in items], as_json, lambda: "\n".join(setting_line(i) for i in items))


@config.command(name="get")
@click.argument("key")
@json_option
@click.pass_context
def config_get(ctx: click.Context, key: str, as_json: bool) -> None:
    """The value of KEY in force (a secret shows as ***)."""
    from gitmem.verbs.config import setting_get

    item = setting_get(get_store(ctx), key)
    emit(item.as_json(), as_json, lambda: setting_line(item))


@config.command(name="set", context_settings={"ignore_unknown_options": True})
@click.argument("key")
@click.argument("value")
@json_option
@click.pass_context
def config_set(ctx: click.Context, key: str, value: str, as_json: bool) -> None:
    """Set KEY to VALUE, checked as gitmem reads it (VALUE `-` reads it from stdin)."""
    from gitmem.verbs.config import setting_set

    item = setting_set(get_store(ctx), key, text_argument(value).strip("\r\n"))
    emit(item.as_json(), as_json, lambda: _written(item))


@config.command(name="unset")
@click.argument("key")
@json_option
@click.pass_context
def config_unset(ctx: click.Context, key: str, as_json: bool) -> None:
    """Remove KEY so its default is in force again."""
    from gitmem.verbs.config import setting_unset

    item = setting_unset(get_store(ctx), key)
    emit(item.as_json(), as_json, lambda: _written(item))


COMMANDS = (config,)
