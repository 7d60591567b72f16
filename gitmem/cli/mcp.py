"""`gitmem mcp`: run the MCP server on stdio (the SDK is imported only by this command)."""

from __future__ import annotations

import click

from gitmem import caller


@click.command(name="mcp")
@click.option("--root", metavar="PATH", help="Store folder (default: as for every command).")
@click.option("--workspace", "-w", help="Workspace key (default: from --cwd or the current directory).")
@click.option("--cwd", type=click.Path(exists=True, file_okay=False),
              help="Resolve the workspace from this folder (it must exist).")
@click.option("--subagent", is_flag=True,
              help="Serve a subagent: every write tool refuses (as under GITMEM_SUBAGENT=1).")
@click.pass_context
def mcp(ctx: click.Context, root: str | None, workspace: str | None, cwd: str | None,
        subagent: bool) -> None:
    """Serve the store to an MCP client (Claude Code, Codex, ...) over stdin/stdout."""
    from pathlib import Path

    from gitmem.mcp.server import serve
    from gitmem.mcp.session import Session
    from gitmem.serve.client import start_if_absent

    obj = ctx.find_root().obj
    # This process answers its tools itself; the agent's other gitmem calls (its shell, its
    # hooks) are served by the store's warm server, which starts here if none runs.
    start_if_absent(root or obj["root"])
    session = Session(root or obj["root"], workspace=workspace or obj["workspace"],
                      cwd=Path(caller.absolute(cwd)) if cwd else None, subagent=subagent)
    serve(session)


COMMANDS = (mcp,)
