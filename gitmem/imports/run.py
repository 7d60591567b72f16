"""`gitmem import SOURCE [PATH]`: the source's reader chosen, the engine run over what it reads."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

from gitmem import caller
from gitmem.errors import InvalidInputError
from gitmem.imports import SOURCES
from gitmem.imports.engine import ImportOptions, Progress, run_import
from gitmem.imports.gitmem_export import restore
from gitmem.notes.model import ImportReport, ReadContext
from gitmem.store.store import Store

NAMES = ("gitmem", *SOURCES)


def import_source(store: Store, source: str, path: str | None, *, dry_run: bool = False,
                  scope: str | None = None, layer: str | None = None, allow_secret: bool = False,
                  home: Path | None = None, progress: Progress | None = None) -> ImportReport:
    """Import one source into the store (one commit; nothing on any error)."""
    if source not in NAMES:
        raise InvalidInputError(f"unknown import source {source!r} (use {'|'.join(NAMES)})")
    where = Path(caller.expanduser(path)) if path else None
    if where is not None and not where.is_absolute():
        where = (store.cwd / where)
    if source == "gitmem":
        if where is None or not where.is_file():
            raise InvalidInputError(f"gitmem import needs the export file to read (got {path or 'none'})")
        return restore(store, where, path or str(where), dry_run=dry_run, allow_secret=allow_secret)
    if where is not None and not where.exists():
        raise InvalidInputError(f"{path}: no such file or folder")
    reader = import_module(SOURCES[source])
    context = ReadContext(home=home or Path(caller.home()))
    options = ImportOptions(source, dry_run=dry_run, scope=scope, layer=layer,
                            allow_secret=allow_secret)
    return run_import(store, options, lambda: reader.read(where or store.cwd, context), progress)
