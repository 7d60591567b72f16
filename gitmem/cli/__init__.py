"""The `gitmem` command line: parse options, call the library, print. Nothing else lives here.

`main` first offers the call to the store's warm server (gitmem.serve.client, a few stat calls
when none runs) and loads the commands only when it runs the call itself; library modules are
imported inside each command, so that `gitmem --help` starts fast too.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["cli", "main", "run_in_process"]


def main() -> None:
    """The command: through the store's warm server when one runs, else in this process."""
    from gitmem.serve.client import forward

    code = forward(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    run_in_process()


def run_in_process() -> None:
    """The command line itself, in this process (gitmem.__main__ asked the server already)."""
    _group()(prog_name="gitmem")


def _group() -> Any:
    """The click group with every command registered (see gitmem.cli.main)."""
    from gitmem.cli.main import cli as group

    # Importing the submodule `gitmem.cli.main` rebinds this package's `main` to it: put the
    # entry point back, so `from gitmem.cli import main` keeps meaning the function.
    globals()["main"] = _entry_point
    return group


_entry_point = main


def __getattr__(name: str) -> Any:
    if name == "cli":
        return _group()
    raise AttributeError(f"module 'gitmem.cli' has no attribute {name!r}")
