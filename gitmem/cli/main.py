"""The `gitmem` click group: global options, and every error turned into one line and its exit
code (the one place where errors meet exit codes). The commands live in the modules of this
folder; the table at the end of this module says which, and a call loads only its command's.

Exit codes: 0 success, 1 not found, 2 bad input or unusable store, 3 conflict / git / lock,
4 internal error (see gitmem/errors.py). With `--json` an error is also printed on stdout as
`{"error": "...", "code": N}`.
"""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import click

from gitmem import caller
from gitmem.errors import INTERNAL_ERROR_EXIT, GitmemError, mute_stdout, os_failure


def _wants_json(args: list[str]) -> bool:
    """`--json` among the arguments (before a `--` that ends the options)."""
    return "--json" in (args[: args.index("--")] if "--" in args else args)


def fail(message: str, code: int, as_json: bool) -> NoReturn:
    """Print the error (one line on stderr; and a JSON object on stdout for --json) and exit;
    a likely secret in it is masked."""
    from gitmem.secrets.mask import hide_secrets

    message = hide_secrets(message)
    try:
        click.echo(message, err=True)
        if as_json:
            click.echo(json.dumps({"error": message, "code": code}, ensure_ascii=False))
    except OSError:  # the output that failed is where this would go: the exit code says it
        mute_stdout()
    sys.exit(code)


def print_notes(ctx: click.Context) -> None:
    """One-line notes the library left for the person (e.g. a search index that lags)."""
    for store in (ctx.obj or {}).get("stores", []):
        if store.notes:
            from gitmem.secrets.mask import hide_secrets  # a note may name a file or a space

            for note in dict.fromkeys(store.notes):
                click.echo(f"gitmem: note: {hide_secrets(note)}", err=True)


class GitmemGroup(click.Group):
    """Turns every error into a one-line message and its exit code; never a traceback. A
    command's module is loaded when the command is asked for (COMMAND_MODULES)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMAND_MODULES, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            _load(COMMAND_MODULES[cmd_name])
        return super().get_command(ctx, cmd_name)

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        as_json = _wants_json(argv)
        try:
            result = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else exc.format_message())
            sys.exit(2)
        except click.ClickException as exc:
            ctx = getattr(exc, "ctx", None)
            where = ctx.command_path if isinstance(ctx, click.Context) else "gitmem"
            fail(f"{where}: error: {exc.format_message()}", exc.exit_code, as_json)
        except click.exceptions.Abort:
            fail("gitmem: aborted", 130, as_json)
        if not standalone_mode:
            return result
        sys.exit(result if isinstance(result, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        as_json = _wants_json(list(ctx.args))
        try:
            return super().invoke(ctx)
        except GitmemError as exc:
            fail(f"gitmem: error: {exc}", exc.exit_code, as_json)
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except KeyboardInterrupt:
            fail("gitmem: interrupted", 130, as_json)
        except Exception as exc:  # noqa: BLE001 - the promise is one line, never a traceback
            if caller.env("GITMEM_DEBUG"):
                raise
            told = os_failure(exc)  # a full disk, a closed pipe: no bug of gitmem's
            if told is not None:
                if told[0] is None:
                    sys.exit(told[1])
                fail(told[0], told[1], as_json)
            from gitmem.redaction import internal_error

            fail(internal_error(exc), INTERNAL_ERROR_EXIT, as_json)
        finally:
            print_notes(ctx)


@click.group(cls=GitmemGroup)
@click.option("--root", metavar="PATH",
              help="Store folder (default: $GITMEM_ROOT, else the store you stand in, else ~/.gitmem).")
@click.option("--workspace", "-w", help="Workspace key (default: from the current directory).")
@click.option("--verbose", "-v", is_flag=True,
              help="Say whether the store's warm server answered (`gitmem serve`); also GITMEM_VERBOSE=1.")
@click.version_option(package_name="gitmem")
@click.pass_context
def cli(ctx: click.Context, root: str | None, workspace: str | None, verbose: bool) -> None:
    """gitmem: a git-native Markdown memory store for coding agents and the people who work with them."""
    ctx.obj = {"root": root, "workspace": workspace, "stores": []}


# Each command and the module of this folder that defines it (in its COMMANDS list). A call loads
# the one module it runs, not all twenty-five: ~60 ms less for every call answered without the
# warm server (tests/cli/test_command_table.py keeps this table and the modules in step).
COMMAND_MODULES: dict[str, str] = {
    "init": "store", "status": "store", "system": "store", "check": "store",
    "remember": "entries", "show": "entries", "list": "entries", "forget": "entries",
    "verify": "entries", "decision": "entries", "codebase": "entries",
    "state": "workspace", "working": "workspace", "workspaces": "workspace",
    "associate": "workspace", "context": "workspace",
    "search": "search", "reindex": "search",
    "sync": "sync", "remote": "sync", "conflicts": "sync", "merge-driver": "sync",
    "resolve": "resolve", "hooks": "hooks", "new": "hooks", "hook": "hooks", "models": "models",
    "capture": "capture", "consolidate": "capture", "refresh": "capture",
    "history": "history", "log": "activity", "runtime": "runtime", "doc": "documents",
    "space": "spaces", "relate": "relations", "related": "relations",
    "why": "provenance", "as-of": "provenance", "revert": "provenance",
    "mcp": "mcp", "integrate": "integrate", "mv": "moves", "mv-topic": "moves", "serve": "serve",
    "web": "web", "import": "imports", "export": "imports", "config": "config", "batch": "batch",
    "review": "review",
}


def _load(module: str) -> None:
    """Register every command of one module of this folder."""
    from importlib import import_module

    for command in import_module(f"gitmem.cli.{module}").COMMANDS:
        cli.add_command(command)


def every_command() -> dict[str, click.Command]:
    """All the commands, loaded (help, docs and tests list them)."""
    for module in dict.fromkeys(COMMAND_MODULES.values()):
        _load(module)
    return dict(cli.commands)
