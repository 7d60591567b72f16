"""CLI commands for sharing one memory across machines: `gitmem sync [--dry-run] [--all]`,
`gitmem remote set|show`, `gitmem conflicts` and the hidden `gitmem merge-driver` git calls.
Parse, call the library, print.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from gitmem.cli.options import emit, get_store, json_option
from gitmem.errors import ConflictError


@click.command(name="sync")
@click.option("--all", "all_spaces", is_flag=True, help="Sync every active space too, each with its remote.")
@click.option("--dry-run", is_flag=True,
              help="Fetch and say what a sync would do; change nothing else.")
@json_option
@click.pass_context
def sync(ctx: click.Context, all_spaces: bool, dry_run: bool, as_json: bool) -> None:
    """Commit pending changes, fetch, merge entry by entry, push; exit 3 on conflicts or failure."""
    if dry_run and all_spaces:
        from gitmem.errors import InvalidInputError

        raise InvalidInputError("--dry-run previews one store at a time: `gitmem --root PATH sync"
                                " --dry-run` (`gitmem space list` shows each space's path)")
    if dry_run:
        from gitmem.sync.dryrun import dry_run as do_dry_run

        preview = do_dry_run(get_store(ctx))
        emit(preview.as_json(), as_json, preview.text())
        return
    from gitmem.sync.run import sync as do_sync

    progress = None
    if not as_json and sys.stderr.isatty():
        def progress(message: str) -> None:
            click.echo(f"sync: {message}...", err=True)

    if all_spaces:
        _sync_all(ctx, progress, as_json)
        return

    report = do_sync(get_store(ctx), progress=progress)
    emit(report.as_json(), as_json, report.text())
    if report.conflicts:
        files = ", ".join(dict.fromkeys(c.path for c in report.conflicts))
        raise ConflictError(
            f"{len(report.conflicts)} conflict(s) in {files}: both versions are kept; `gitmem"
            " conflicts` lists them, `gitmem resolve ID --ours|--theirs|--both` settles one (see"
            " state/CONFLICT.md)"
        )


def _sync_all(ctx: click.Context, progress: Any, as_json: bool) -> None:
    """`sync --all`: one line per space; exit 3 when any of them failed or left conflicts."""
    from gitmem.spaces.syncall import sync_all

    results = sync_all(get_store(ctx), progress)
    lines = [f"{r.space}: {r.result}" + (f" ({r.error})" if r.error else "") for r in results]
    emit([r.as_json() for r in results], as_json, "\n".join(lines))
    failed = [r.space for r in results if r.exit_code]
    if failed:
        raise ConflictError(f"sync --all: {', '.join(failed)} did not sync cleanly (see above)")


@click.group(name="remote")
def remote() -> None:
    """The git remote the store syncs with."""


@remote.command(name="set")
@click.argument("url")
@click.option("--branch", help="Branch to sync (default: the current one).")
@json_option
@click.pass_context
def remote_set(ctx: click.Context, url: str, branch: str | None, as_json: bool) -> None:
    """Set the remote URL (stored without credentials; a token in it goes to git's credential
    helper, else to state/git-token) and make the branch track it."""
    from gitmem.sync.remote import remote_set as do_remote_set

    data = do_remote_set(get_store(ctx), url, branch=branch)
    text = f"remote: {data['remote']} (branch {data['branch']}, tracking {data['upstream']})"
    if data["token_message"]:
        text += f"\n{data['token_message']}"
    emit(data, as_json, text)


@remote.command(name="show")
@json_option
@click.pass_context
def remote_show(ctx: click.Context, as_json: bool) -> None:
    """The remote (redacted), branch and upstream, where credentials come from, the last sync."""
    from gitmem.sync.remoteinfo import remote_show as do_remote_show
    from gitmem.sync.remoteinfo import render_remote_show

    data = do_remote_show(get_store(ctx))
    emit(data, as_json, lambda: render_remote_show(data))


@click.command(name="conflicts")
@json_option
@click.pass_context
def conflicts(ctx: click.Context, as_json: bool) -> None:
    """List entries left between conflict markers by a merge (exit 1 when there are none)."""
    from gitmem.sync.conflicts import list_conflicts

    found = list_conflicts(get_store(ctx))
    lines = []
    for c in found:
        where = f"{c.path}:{c.line}" if c.line else c.path
        lines += [f"{c.ref}  {c.title}  [{c.kind}]  in {where}",
                  f"    <<<<<<< {c.ours}", f"    >>>>>>> {c.theirs}", f"    settle: {c.settle}"]
    if any(c.kind != "record" for c in found):
        lines.append("or edit the file (keep what should stay, delete the marker lines) and run"
                     " `gitmem resolve ID|PATH:LINE`")
    emit([c.as_json() for c in found], as_json, "\n".join(lines) or "no conflicts")
    if not found:
        sys.exit(1)


@click.command(name="merge-driver", hidden=True)
@click.argument("base")
@click.argument("ours")
@click.argument("theirs")
@click.argument("path")
@click.pass_context
def merge_driver(ctx: click.Context, base: str, ours: str, theirs: str, path: str) -> None:
    """Git merge driver: merge BASE/OURS/THEIRS of PATH entry by entry into OURS (exit 1: markers)."""
    from gitmem.githooks.driver import run_merge_driver

    obj = ctx.find_root().obj or {}
    from pathlib import Path

    root = Path(obj["root"]) if obj.get("root") else None
    sys.exit(run_merge_driver(base, ours, theirs, path, root))


COMMANDS = (sync, remote, conflicts, merge_driver)
