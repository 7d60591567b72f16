"""`gitmem serve`: the store's warm server, its unit files, and the in-process runner it uses.

The server runs each forwarded call through this very command line, with the caller's
arguments, folder, environment and standard input put in place for that call, so what the
caller prints and its exit code are those of `gitmem` run in its own process.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
import traceback
from collections.abc import Iterator
from typing import Any

import click

from gitmem.cli.options import emit, json_option


class _Stream(io.TextIOWrapper):
    """A captured standard stream that answers isatty() as the caller's did."""

    tty = False

    def isatty(self) -> bool:
        return self.tty


def _stream(data: io.BytesIO, tty: bool) -> _Stream:
    stream = _Stream(data, encoding="utf-8", errors="surrogateescape", write_through=True)
    stream.tty = tty
    return stream


@contextlib.contextmanager
def _caller_context(request: dict[str, Any]) -> Iterator[tuple[io.BytesIO, io.BytesIO]]:
    """The caller's folder, environment and standard streams, for the time of one call."""
    from gitmem.serve import wire

    saved_cwd, saved_env = os.getcwd(), dict(os.environ)
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    tty = [bool(t) for t in (request.get("tty") or [False] * 3)][:3] + [False] * 3
    out, err = io.BytesIO(), io.BytesIO()
    os.chdir(str(request["cwd"]))
    try:
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in dict(request.get("env") or {}).items()})
        _tzset_if_changed(saved_env.get("TZ"))
        sys.stdin = _stream(io.BytesIO(wire.unpack(str(request.get("stdin") or ""))), tty[0])
        sys.stdout, sys.stderr = _stream(out, tty[1]), _stream(err, tty[2])
        yield out, err
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.environ.clear()
        os.environ.update(saved_env)
        _tzset_if_changed(saved_env.get("TZ"), force=True)
        os.chdir(saved_cwd)


def _tzset_if_changed(before: str | None, force: bool = False) -> None:
    """Dates ("today") follow the caller's TZ, as they would in its own process."""
    if (force or os.environ.get("TZ") != before) and hasattr(time, "tzset"):
        time.tzset()


def make_runner(group: click.Group) -> Any:
    """The server's runner: one forwarded call through `group`, captured."""
    from gitmem.serve import wire
    from gitmem.store import warm

    def run(request: dict[str, Any]) -> dict[str, Any]:
        argv = [str(a) for a in request.get("argv") or []]
        try:
            context = _caller_context(request)
            streams = context.__enter__()
        except OSError as exc:  # the caller's folder is gone: let it run the command itself
            return {"ran": False, "reason": f"cannot enter {request.get('cwd')}: {exc.strerror}"}
        code: int = 0
        try:
            try:
                group.main(args=argv, prog_name="gitmem", standalone_mode=True)
            except SystemExit as exc:
                code = _exit_code(exc)
            except Exception:  # noqa: BLE001 - what Python itself prints for an uncaught error
                traceback.print_exc()
                code = 1
            sys.stdout.flush()
            sys.stderr.flush()
            warm.settle()
            out, err = streams
            return {"code": code, "stdout": wire.pack(out.getvalue()),
                    "stderr": wire.pack(err.getvalue())}
        finally:
            context.__exit__(None, None, None)

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
@click.option("--install", is_flag=True, help="Write a systemd user unit (Linux) or launchd agent (macOS) that runs it.")
@click.option("--uninstall", is_flag=True, help="Remove that unit file.")
@click.option("--sync-every", type=float, default=60.0, show_default=True, metavar="MINUTES",
              help="Sync with the remote this often (0: never).")
@click.option("--history-every", type=float, default=60.0, show_default=True, metavar="MINUTES",
              help="Record new commits of known code repositories this often (0: never).")
@click.option("--consolidate-every", type=float, default=60.0, show_default=True, metavar="MINUTES",
              help="Consolidate pending digests this often when a model is configured (0: never).")
@click.option("--wait", type=float, default=30.0, show_default=True, metavar="SECONDS",
              help="How long a call waits for a running job before it is told the server is busy.")
@click.option("--idle-minutes", type=float, default=None, metavar="MINUTES",
              help="Exit after this long without a call (default: never; a server started by a "
                   "call uses the store's serve.idleMinutes setting, 30).")
@click.option("--auto", is_flag=True, hidden=True,
              help="Started by a call that found no server: no schedule, exits when idle.")
@json_option
@click.pass_context
def serve(ctx: click.Context, stop: bool, install: bool, uninstall: bool, sync_every: float,
          history_every: float, consolidate_every: float, wait: float, idle_minutes: float | None,
          auto: bool, as_json: bool) -> None:
    """Keep this store warm: answer gitmem calls over state/serve.sock (this user only) and run
    the scheduled sync, history ingest and consolidation. Runs until stopped.

    A call that finds no server starts one by itself (GITMEM_SERVE=off or the setting
    serve.autoStart false turn that off); that one runs no schedule and exits after
    serve.idleMinutes (default 30) without a call."""
    from gitmem.store.paths import resolve_root

    root = resolve_root(ctx.find_root().obj["root"])
    if stop:
        _stop(root, as_json)
        return
    if install or uninstall:
        _units(root, install, [f"--sync-every={sync_every:g}", f"--history-every={history_every:g}",
                               f"--consolidate-every={consolidate_every:g}", f"--wait={wait:g}"],
               as_json)
        return
    from gitmem.serve import jobs
    from gitmem.serve.client import identity
    from gitmem.serve.schedule import Job
    from gitmem.serve.server import Server
    from gitmem.store.store import open_store

    store = open_store(root)  # refuses a folder that holds no store, as every verb does
    from gitmem.store.settings import serve_idle_minutes

    idle_setting = serve_idle_minutes(store.registry)
    store.close()
    if auto:
        os.chdir(store.root)  # the caller's folder may go away; nothing here depends on it
        idle_minutes = idle_minutes if idle_minutes is not None else float(idle_setting)
        sync_every = history_every = consolidate_every = 0.0
    group = ctx.find_root().command
    assert isinstance(group, click.Group)
    server = Server(store.root, make_runner(group), identity(), wait_seconds=wait, jobs=[
        (Job("sync", _minutes(sync_every)), lambda: jobs.sync_job(store.root)),
        (Job("history", _minutes(history_every)), lambda: jobs.history_job(store.root)),
        (Job("consolidate", _minutes(consolidate_every)), lambda: jobs.consolidate_job(store.root)),
    ], idle_seconds=_minutes(idle_minutes or 0.0), auto_started=auto)
    from gitmem.serve.autostart import release_start_lock
    from gitmem.serve.server import CLAIM_WAIT_SECONDS

    try:
        server.claim(wait=CLAIM_WAIT_SECONDS if auto else 0.0)
    finally:
        release_start_lock()
    server.stop_on_signals()
    from gitmem.store import warm

    warm.enable()
    click.echo(f"gitmem: serving {store.root} on {server.socket_path} (pid {os.getpid()})", err=True)
    server.serve_forever()


def _stop(root: Any, as_json: bool) -> None:
    from gitmem.serve.control import stop_server

    pid = stop_server(root)
    emit({"stopped": pid is not None, "pid": pid}, as_json,
         f"stopped the gitmem server of {root} (pid {pid})" if pid else f"no gitmem server runs for {root}")


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
