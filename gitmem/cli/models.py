"""`gitmem models add|remove|list|test`: the machine-local model ladder memory work uses."""

from __future__ import annotations

import sys
from typing import Any

import click

from gitmem.cli.options import emit, get_store, json_option


def ladder_text(report: dict[str, Any]) -> str:
    """The ladder as a person reads it: order, command, bench."""
    if report.get("error"):
        return f"ladder unreadable: {report['error']}"
    if not report["rungs"]:
        return ("no model configured: capture keeps clipped notes, consolidation waits "
                "(add one with `gitmem models add NAME 'COMMAND'`)")
    lines = ["GITMEM_MODEL is set: it replaces the ladder in this shell"] if report["override"] else []
    for rung in report["rungs"]:
        bench = f"  [benched until {rung['benchedUntil']}]" if rung["benched"] else ""
        won = "  (last winner)" if rung["name"] == report.get("lastWinner") else ""
        lines.append(f"{rung['position']}. {rung['name']}: {rung['command']}  "
                     f"(time-out {rung['timeout']:g}s){bench}{won}")
    return "\n".join(lines)


@click.group(name="models")
def models() -> None:
    """The model ladder: commands that read a prompt on stdin and write the reply on stdout."""


@models.command(name="add")
@click.argument("name")
@click.argument("command")
@click.option("--timeout", type=float, help="Seconds before the command counts as failed (default 120).")
@json_option
@click.pass_context
def models_add(ctx: click.Context, name: str, command: str, timeout: float | None, as_json: bool) -> None:
    """Add NAME running COMMAND at the end of the ladder (at most 4), or change its command."""
    from gitmem.models.config import add_rung, ladder_report

    root = get_store(ctx).root
    add_rung(root, name, command, timeout)
    report = ladder_report(root)
    emit(report, as_json, lambda: ladder_text(report))


@models.command(name="remove")
@click.argument("name")
@json_option
@click.pass_context
def models_remove(ctx: click.Context, name: str, as_json: bool) -> None:
    """Remove NAME from the ladder."""
    from gitmem.models.config import ladder_report, remove_rung

    root = get_store(ctx).root
    remove_rung(root, name)
    report = ladder_report(root)
    emit(report, as_json, lambda: ladder_text(report))


@models.command(name="list")
@json_option
@click.pass_context
def models_list(ctx: click.Context, as_json: bool) -> None:
    """The ladder in the order it is tried, with benched rungs and until when."""
    from gitmem.models.config import ladder_report

    report = ladder_report(get_store(ctx).root)
    emit(report, as_json, lambda: ladder_text(report))


@models.command(name="test")
@click.argument("name")
@json_option
@click.pass_context
def models_test(ctx: click.Context, name: str, as_json: bool) -> None:
    """Send NAME a tiny prompt and report what came back (exit 3 when it failed)."""
    from gitmem.models.ladder import test_rung
    from gitmem.secrets.mask import clip

    text, attempt = test_rung(get_store(ctx).root, name)
    data = {"name": name, "outcome": attempt.outcome, "duration_ms": attempt.duration_ms,
            "bytes_in": attempt.bytes_in, "bytes_out": attempt.bytes_out,
            "reply": clip(text, 500), "detail": attempt.detail}
    first = clip(text.strip().splitlines()[0], 120) if text.strip() else ""
    summary = f"{name}: {attempt.outcome} in {attempt.duration_ms:.0f} ms ({attempt.bytes_out} bytes)"
    emit(data, as_json, f"{summary}\n{first}" if first else
         f"{summary}{' — ' + attempt.detail if attempt.detail else ''}")
    if attempt.outcome != "ok":
        sys.exit(3)


COMMANDS = (models,)
