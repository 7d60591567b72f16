"""The `gitmem` click group: global options, and every error turned into one line and its exit
code. The commands live in the modules of this folder; `gitmem.cli` registers them."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from gitmem.errors import GitmemError


class GitmemGroup(click.Group):
    """Turns every error into a one-line message and its exit code; never a traceback."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        try:
            result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else exc.format_message())
            sys.exit(2)
        except click.ClickException as exc:
            ctx = getattr(exc, "ctx", None)
            where = ctx.command_path if isinstance(ctx, click.Context) else "gitmem"
            click.echo(f"{where}: error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("gitmem: aborted", err=True)
            sys.exit(1)
        if not standalone_mode:
            return result
        sys.exit(result if isinstance(result, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except GitmemError as exc:
            click.echo(f"gitmem: error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("gitmem: interrupted", err=True)
            sys.exit(130)
        except Exception as exc:  # noqa: BLE001 - the promise is one line, never a traceback
            if os.environ.get("GITMEM_DEBUG"):
                raise
            from gitmem.redaction import redact

            click.echo(f"gitmem: internal error: {type(exc).__name__}: {redact(str(exc))}", err=True)
            sys.exit(1)


@click.group(cls=GitmemGroup)
@click.option("--root", type=click.Path(file_okay=False), envvar="GITMEM_ROOT",
              help="Store folder (default: $GITMEM_ROOT, else ~/.gitmem).")
@click.option("--workspace", "-w", help="Workspace key (default: from the current directory).")
@click.version_option(package_name="gitmem")
@click.pass_context
def cli(ctx: click.Context, root: str | None, workspace: str | None) -> None:
    """gitmem: a git-native Markdown memory store for coding agents and the people who work with them."""
    ctx.obj = {"root": root, "workspace": workspace}
