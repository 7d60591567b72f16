"""`gitmem web`: the local page for the store (thin: resolve the store, bind, serve)."""

from __future__ import annotations

import click

from gitmem.cli.options import get_store


@click.command()
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (and ::1); 0 picks a free one.")
@click.option("--no-open", is_flag=True, help="Print the address only; do not open a browser.")
@click.pass_context
def web(ctx: click.Context, port: int, no_open: bool) -> None:
    """Serve a local page to see, search, fix and settle the memory; prints its address."""
    from gitmem.web.serve import serve

    store = get_store(ctx)
    root, workspace, cwd = store.root, ctx.find_root().obj["workspace"], store.cwd

    def announce(address: str) -> None:
        click.echo(address)
        if not no_open:
            import webbrowser

            webbrowser.open(address)

    serve(root, port=port, workspace=workspace, cwd=cwd, announce=announce)


COMMANDS = (web,)
