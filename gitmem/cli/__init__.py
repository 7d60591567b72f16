"""The `gitmem` command line: parse options, call the library, print. Nothing else lives here.

Library modules are imported inside each command so that `gitmem --help` starts fast.
"""

from __future__ import annotations

from gitmem.cli import (
    activity,
    capture,
    documents,
    entries,
    history,
    hooks,
    integrate,
    mcp,
    models,
    moves,
    provenance,
    relations,
    resolve,
    runtime,
    search,
    spaces,
    store,
    sync,
    workspace,
)
from gitmem.cli.main import cli

__all__ = ["cli", "main"]

for _module in (store, entries, workspace, search, sync, resolve, hooks, models, capture, history,
                activity, runtime, documents, spaces, relations, provenance, mcp, integrate,
                moves):
    for _command in _module.COMMANDS:
        cli.add_command(_command)


def main() -> None:
    cli(prog_name="gitmem")
