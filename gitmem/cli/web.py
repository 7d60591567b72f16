"""`gitmem web`: the local page for the store (thin: resolve the store, have the store's warm
server serve the page, or bind and serve it here)."""

from __future__ import annotations

import click

from gitmem import caller
from gitmem.cli.options import get_store


@click.command()
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (and ::1); 0 picks a free one.")
@click.option("--no-open", is_flag=True, help="Print the address only; do not open a browser.")
@click.pass_context
def web(ctx: click.Context, port: int, no_open: bool) -> None:
    """Serve a local page to see, search, fix and settle the memory; prints its address.

    When the store's warm server runs (or a call may start one), the server serves the page and
    this command returns; otherwise it serves the page itself until Ctrl-C."""
    from gitmem.serve.pages import ask_to_host

    store = get_store(ctx)
    root, workspace, cwd = store.root, ctx.find_root().obj["workspace"], store.cwd

    def announce(address: str) -> None:
        click.echo(address)
        if not no_open:
            import webbrowser

            webbrowser.open(address)

    notes: list[str] = []
    hosted = ask_to_host(root, port=port, workspace=workspace, cwd=cwd, notes=notes)
    if hosted is not None:
        how = "already served" if hosted.reused else "now served"
        notes.append(f"the page is {how} by the gitmem server (pid {hosted.pid})")
    if ctx.find_root().params.get("verbose") or caller.env("GITMEM_VERBOSE"):
        for note in notes:
            click.echo(f"gitmem: note: {note}", err=True)
    if hosted is not None:
        announce(hosted.url)
        return
    from gitmem.web.serve import serve

    serve(root, port=port, workspace=workspace, cwd=cwd, announce=announce)


COMMANDS = (web,)
