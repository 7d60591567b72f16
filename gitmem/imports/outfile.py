"""An export written to a file: into a temp file beside it, renamed over it when complete, so
a failed export never leaves a half-written file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from gitmem import caller
from gitmem.errors import InvalidInputError
from gitmem.imports.export import export
from gitmem.store.store import Store


def write_export(store: Store, out: str, fmt: str, scope: str | None) -> dict[str, int]:
    target = Path(caller.expanduser(out))
    if not target.is_absolute():
        target = store.cwd / target
    if target.is_symlink():
        target = target.resolve()  # written through, as a shell's `>` writes
    if target.is_dir():
        raise InvalidInputError(f"{out} is a folder: name a file to write the export to")
    if target.exists() and not target.is_file():
        # A FIFO, a terminal, /dev/stdout: written into as it is (renaming a temp file over it
        # would replace the device or pipe with a file that nobody reads).
        with open(target, "w", encoding="utf-8", newline="\n") as stream:
            return export(store, stream, fmt, scope)
    if not target.parent.is_dir():
        raise InvalidInputError(f"{out}: its folder does not exist")
    handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            counts = export(store, stream, fmt, scope)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return counts
