"""CLI verbs about the store itself: init, status, system, check."""

from __future__ import annotations

import sys
from typing import Any

import click

from gitmem.cli.options import (
    emit,
    get_store,
    json_option,
)


@click.command()
@click.option("--remote", help="Remote to sync with: cloned when it has history, else set as origin.")
@click.option("--branch", default="main", show_default=True, help="Branch for a new store.")
@json_option
@click.pass_context
def init(ctx: click.Context, remote: str | None, branch: str, as_json: bool) -> None:
    """Create the store (or adopt an existing git repo) with its layout, SYSTEM.md and .gitignore."""
    from gitmem.store.store import Store
    from gitmem.sync.remote import init_remote_store

    obj = ctx.find_root().obj
    store = Store(obj["root"], workspace=obj["workspace"])
    result = init_remote_store(store, remote=remote, branch=branch)
    verb = "created" if result.created else "already initialised"
    text = f"gitmem store {verb} at {store.root}"
    if result.remote:
        text += f"\nremote: {result.remote} ({'cloned' if result.cloned else 'set as origin'})"
    if result.token_message:
        text += f"\n{result.token_message}"
    emit({"root": str(store.root), "created": result.created, "cloned": result.cloned,
          "remote": result.remote, "token": result.token_message}, as_json, text)


PROBLEMS_SHOWN = 3


def dirty_line(data: dict[str, Any]) -> str:
    """Uncommitted files, and what the next write will do with them."""
    count = len(data["dirty"])
    if data.get("dirty_refused"):
        return (f"uncommitted: {count} file(s); the next write will refuse to run until this is"
                f" fixed: {data['dirty_refused']}")
    held = data.get("dirty_held") or []
    if held:
        return (f"uncommitted: {count} file(s); the next write leaves {len(held)} of them"
                f" uncommitted until fixed (the rest becomes a hand edit commit): {held[0]}")
    return f"uncommitted: {count} file(s) (committed as a hand edit by the next write)"


def sync_lines(state: dict[str, Any]) -> list[str]:
    """The last sync: when, what came of it, and an error only while it still holds."""
    if not state:
        return ["sync: never run on this machine"]
    when = state.get("lastAttempt", "-")
    success = state.get("lastSuccess") or "never"
    if state.get("error"):
        return [f"sync: the last attempt failed ({when}): {state['error']}",
                f"  last successful sync: {success}"]
    if state.get("obsoleteError"):
        return [f"sync: the last attempt failed ({when}), but the remote has changed since;"
                " `gitmem sync` tries the new one", f"  last successful sync: {success}"]
    return [f"sync: {state.get('result', 'done')} ({when}); ahead {state.get('ahead', 0)},"
            f" behind {state.get('behind', 0)}"]


@click.command()
@json_option
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Where the store lives, what it holds, and what needs attention."""
    from gitmem.cli.capture import memory_work_lines
    from gitmem.verbs.status import status as read_status

    data = read_status(get_store(ctx))

    def text() -> str:
        lines = [f"root: {data['root']}", f"branch: {data['branch']}  head: {(data['head'] or '-')[:12]}",
                 f"remote: {data['remote'] or 'none'}", f"entries: {data['entries']}"]
        for scope, per_layer in data["layers"].items():
            lines.append(f"  {scope}: " + ", ".join(f"{k} {v['entries']}" for k, v in per_layer.items()))
        if data["dirty"]:
            lines.append(dirty_line(data))
        if data["system_doc_stale"]:
            lines.append("SYSTEM.md is stale: run `gitmem system`")
        if data["conflicts"]:
            lines.append("conflicts: " + ", ".join(data["conflicts"]))
        if data["problems"]:
            shown = data["problems"][:PROBLEMS_SHOWN]
            more = len(data["problems"]) - len(shown)
            lines.append(f"problems: {len(data['problems'])} (`gitmem check` lists all)")
            lines.extend(f"  {problem}" for problem in shown)
            if more:
                lines.append(f"  ... and {more} more")
        lines += [f"attention: {item}" for item in data["leftovers"]]
        lines += sync_lines(data["sync"] or {})
        lines += memory_work_lines(data)
        lines += server_lines(data["server"])
        return "\n".join(lines)

    emit(data, as_json, text)


def server_lines(server: dict[str, Any]) -> list[str]:
    """Whether the warm server runs, and when each scheduled job runs next."""
    if not server["up"]:
        return ["server: not running (`gitmem serve` keeps the store warm and in sync)"]
    lines = [f"server: up (pid {server['pid']}, since {server['started']})"]
    if server.get("web"):
        lines.append(f"  page: {server['web']} (`gitmem web` prints its address with the token)")
    for name, job in server["jobs"].items():
        if not job.get("next"):
            lines.append(f"  {name}: off")
            continue
        last = f"; last {job['last']}: {job['result']}" if job.get("last") else ""
        lines.append(f"  {name}: next {job['next']}{last}")
    return lines


@click.command()
@json_option
@click.pass_context
def system(ctx: click.Context, as_json: bool) -> None:
    """Regenerate SYSTEM.md, the store's self-description, and commit it if it changed."""
    from gitmem.verbs.system import write_system_doc

    store = get_store(ctx)
    changed = write_system_doc(store)
    emit({"path": "SYSTEM.md", "changed": changed}, as_json,
         "SYSTEM.md regenerated" if changed else "SYSTEM.md is up to date")


@click.command()
@click.option("--fix", is_flag=True, help="Apply the safe fixes (ids, dates, legacy layers) and commit.")
@json_option
@click.pass_context
def check(ctx: click.Context, fix: bool, as_json: bool) -> None:
    """Check every memory file against the format rules; exit 2 when errors remain (hints: 0)."""
    from gitmem.verbs.check import check_tree

    report = check_tree(get_store(ctx), fix=fix)
    errors, hints = report.errors, report.hints
    data = {"problems": [str(p) for p in report.problems],
            "remaining": [str(p) for p in report.remaining],
            "errors": [str(p) for p in errors], "hints": [str(p) for p in hints],
            "fixed": report.fixed, "assigned": report.assigned, "renumbered": report.renumbered,
            "notes": report.notes}
    lines = ([f"renumbered {old} -> {new} (the published commit gives {old} to another entry)"
              for old, new in sorted(report.renumbered.items())]
             + [f"note: {n}" for n in report.notes]
             + [str(p) for p in errors] + [f"hint: {p}" for p in hints]
             + [f"fixed: {p}" for p in report.fixed])
    emit(data, as_json, "\n".join(lines) or "all memory files are well-formed")
    if errors:
        sys.exit(2)


COMMANDS = (init, status, system, check)
