"""`gitmem serve`: the store's warm server, its unit files, and the in-process runner it uses.

The server runs each forwarded call through this very command line, with the caller's
arguments, folder, environment, time zone and standard input passed to it (gitmem/caller.py),
so what the caller prints and its exit code are those of `gitmem` run in its own process.
"""

from __future__ import annotations

import contextvars
import io
import os
import sys
import traceback
from typing import Any

import click

from gitmem import caller
from gitmem.cli.options import emit, json_option


def _caller_of(request: dict[str, Any]) -> tuple[caller.Caller, io.BytesIO, io.BytesIO]:
    """The caller a forwarded request describes, with its standard streams over bytes."""
    from gitmem.serve import wire

    tty = [bool(t) for t in (request.get("tty") or [False] * 3)][:3] + [False] * 3
    out, err = io.BytesIO(), io.BytesIO()
    who = caller.Caller(
        str(request["cwd"]), {str(k): str(v) for k, v in dict(request.get("env") or {}).items()},
        (tty[0], tty[1], tty[2]),
        stdin=caller.stream(io.BytesIO(wire.unpack(str(request.get("stdin") or ""))), tty[0]),
        stdout=caller.stream(out, tty[1]), stderr=caller.stream(err, tty[2]))
    return who, out, err


def make_runner(group: click.Group) -> Any:
    """The server's runner: one forwarded call through `group`, for its caller (any thread).

    Nothing of the process changes: the call's folder, environment, time zone and streams are
    its caller's (gitmem/caller.py), so calls on other threads run at the same time."""
    from gitmem.serve import wire
    from gitmem.store import aftercall, warm

    caller.install_streams()

    def run(request: dict[str, Any]) -> dict[str, Any]:
        # A context of the call's own: the stores it opens (store/warm.py) are its alone, also
        # when its left-over steps give them back on another thread after it answered.
        return contextvars.copy_context().run(call, request)

    def call(request: dict[str, Any]) -> dict[str, Any]:
        caller.install_streams()  # a no-op unless someone put streams of their own back
        argv = [str(a) for a in request.get("argv") or []]
        folder = str(request.get("cwd") or "")
        if not os.path.isdir(folder) or not os.access(folder, os.X_OK):
            # the caller's folder is gone (or closed to it): let it run the command itself
            return {"ran": False, "reason": f"cannot enter {folder}"}
        who, out, err = _caller_of(request)
        code: int = 0
        with caller.use(who), aftercall.gathering() as steps:
            try:
                group.main(args=argv, prog_name="gitmem", standalone_mode=True)
            except SystemExit as exc:
                code = _exit_code(exc)
            except Exception:  # noqa: BLE001 - what Python itself prints for an uncaught error
                traceback.print_exc()
                code = 1
            finally:
                if steps:  # the answer goes now; the parts come back once the steps are done
                    aftercall.finish_later(steps, warm.settle)
                else:
                    warm.settle()
            sys.stdout.flush()
            sys.stderr.flush()
        return {"code": code, "stdout": wire.pack(out.getvalue()), "stderr": wire.pack(err.getvalue())}

    return run


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _minutes(value: float) -> float:
    return max(0.0, value) * 60.0


@click.command(name="serve")
@click.option("--stop", is_flag=True, help="Stop the server running for this store.")
@click.option("--status", "show_status", is_flag=True,
              help="Whether a server runs for this store, its schedule and the page it serves.")
@click.option("--install", is_flag=True, help="Write a systemd user unit (Linux) or launchd agent (macOS) that runs it.")
@click.option("--uninstall", is_flag=True, help="Remove that unit file.")
@click.option("--sync-every", type=float, default=60.0, show_default=True, metavar="MINUTES",
              help="Sync with the remote this often (0: never).")
@click.option("--history-every", type=float, default=60.0, show_default=True, metavar="MINUTES",
              help="Record new commits of known code repositories this often (0: never).")
@click.option("--consolidate-every", type=float, default=60.0, show_default=True, metavar="MINUTES",
              help="Consolidate pending digests this often when a model is configured (0: never).")
@click.option("--capture-every", type=float, default=30.0, show_default=True, metavar="MINUTES",
              help="Capture the session folders `gitmem integrate` put on the schedule this often (0: never).")
@click.option("--refresh-every", type=float, default=None, metavar="MINUTES",
              help="Run the freshness pass over stale and expired entries this often when a model "
                   "is configured (0: never; default: the setting serve.refreshMinutes, 1440).")
# Calls no longer wait for a job's turn; the option stays so unit files written before still start.
@click.option("--wait", type=float, default=None, hidden=True)
@click.option("--idle-minutes", type=float, default=None, metavar="MINUTES",
              help="Exit after this long without a call (default: never; a server started by a "
                   "call uses the store's serve.idleMinutes setting, 30).")
@click.option("--auto", is_flag=True, hidden=True,
              help="Started by a call that found no server: no schedule, exits when idle.")
@json_option
@click.pass_context
def serve(ctx: click.Context, stop: bool, show_status: bool, install: bool, uninstall: bool, sync_every: float,
          history_every: float, consolidate_every: float, capture_every: float, refresh_every: float | None,
          wait: float | None,
          idle_minutes: float | None, auto: bool, as_json: bool) -> None:
    """Keep this store warm: answer gitmem calls over state/serve.sock (this user only) and run
    the scheduled sync, history ingest, consolidation, freshness pass and capture of the session
    folders on the schedule. Runs until stopped.

    A call that finds no server starts one by itself (GITMEM_SERVE=off or the setting
    serve.autoStart false turn that off); that one runs no schedule and exits after
    serve.idleMinutes (default 30) without a call."""
    from gitmem.store.paths import resolve_root

    root = resolve_root(ctx.find_root().obj["root"])
    if stop:
        _stop(root, as_json)
        return
    if show_status:
        _status(root, as_json)
        return
    if install or uninstall:
        refresh = [] if refresh_every is None else [f"--refresh-every={refresh_every:g}"]
        _units(root, install, [f"--sync-every={sync_every:g}", f"--history-every={history_every:g}",
                               f"--consolidate-every={consolidate_every:g}",
                               f"--capture-every={capture_every:g}", *refresh],
               as_json)
        return
    from gitmem.serve import jobs
    from gitmem.serve.client import identity
    from gitmem.serve.schedule import Job
    from gitmem.serve.server import Server
    from gitmem.store.store import open_store

    store = open_store(root)  # refuses a folder that holds no store, as every verb does
    from gitmem.store.settings import serve_idle_minutes, serve_refresh_minutes

    idle_setting = serve_idle_minutes(store.registry)
    if refresh_every is None:
        refresh_every = serve_refresh_minutes(store.registry)
    store.close()
    if auto:
        caller.move_process(str(store.root))  # the folder it was started in may go away
        idle_minutes = idle_minutes if idle_minutes is not None else float(idle_setting)
        sync_every = history_every = consolidate_every = refresh_every = capture_every = 0.0
    group = ctx.find_root().command
    assert isinstance(group, click.Group)
    server = Server(store.root, make_runner(group), identity(), jobs=[
        (Job("sync", _minutes(sync_every)), lambda: jobs.sync_job(store.root)),
        (Job("history", _minutes(history_every)), lambda: jobs.history_job(store.root)),
        (Job("consolidate", _minutes(consolidate_every)), lambda: jobs.consolidate_job(store.root)),
        (Job("refresh", _minutes(refresh_every)), lambda: jobs.refresh_job(store.root)),
        (Job("capture", _minutes(capture_every)), lambda: jobs.capture_job(store.root)),
        # Claude Code's auto memory, on the sync's cadence: what a sync brings reaches MEMORY.md.
        (Job("native-memory", _minutes(sync_every)), lambda: jobs.native_job(store.root)),
    ], idle_seconds=_minutes(idle_minutes or 0.0), auto_started=auto)
    from gitmem.web.hosted import HostedPage

    server.page = HostedPage(store.root, server.in_use)  # served once `gitmem web` asks
    from gitmem.serve.autostart import release_start_lock
    from gitmem.serve.server import CLAIM_WAIT_SECONDS

    _preload()  # before it listens: a call is acknowledged within the client's 3 s
    try:
        server.claim(wait=CLAIM_WAIT_SECONDS if auto else 0.0)
    finally:
        release_start_lock()
    server.stop_on_signals()
    from gitmem.store import warm

    warm.enable()
    click.echo(f"gitmem: serving {store.root} on {server.socket_path} (pid {os.getpid()})", err=True)
    server.serve_forever()


def _preload() -> None:
    """Load, before the first call, what the answered verbs import on first use: two calls on two
    threads importing a library for the first time at once can see it half made (detect-secrets'
    plugin modules import each other), so the server has them in place before it listens."""
    import contextlib

    from gitmem.secrets.scan import scan_lines

    with contextlib.suppress(Exception):
        scan_lines([(1, "nothing secret here")])
    for name in ("pygit2", "whoosh", "markdown_it", "frontmatter", "sqlite3", "zoneinfo"):
        with contextlib.suppress(ImportError):
            __import__(name)


def _stop(root: Any, as_json: bool) -> None:
    from gitmem.serve.control import stop_server

    pid = stop_server(root)
    emit({"stopped": pid is not None, "pid": pid}, as_json,
         f"stopped the gitmem server of {root} (pid {pid})" if pid else f"no gitmem server runs for {root}")


def _status(root: Any, as_json: bool) -> None:
    from gitmem.cli.store import server_lines
    from gitmem.store.serverstate import describe

    data = describe(root)
    emit(data, as_json, "\n".join(server_lines(data)))


def _units(root: Any, install: bool, extra: list[str], as_json: bool) -> None:
    from gitmem.serve import units

    if install:
        unit = units.install(root, extra)
        emit({"installed": str(unit.path), "start": " ".join(unit.start), "stop": " ".join(unit.stop)},
             as_json, f"wrote {unit.path}\nstart it with: {' '.join(unit.start)}\n"
                      f"stop it with:  {' '.join(unit.stop)}")
        return
    removed = units.uninstall(root)
    if removed is None:
        emit({"removed": None}, as_json, "no unit file was installed for this store")
        return
    emit({"removed": str(removed.path), "stop": " ".join(removed.stop)}, as_json,
         f"removed {removed.path}\nif it is still running: {' '.join(removed.stop)}")


COMMANDS = (serve,)
