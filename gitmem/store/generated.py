"""Files gitmem generates in the store: .gitignore, .gitattributes and the layer index files."""

from __future__ import annotations

from collections.abc import Callable, Container
from pathlib import Path

from gitmem.format import layers as L
from gitmem.fsio import read_regular_file, write_text_atomic
from gitmem.store.catalog import Catalog
from gitmem.store.paths import DERIVED_DIRS, EDITOR_FILES

# Derived folders, and the temp files of atomic writes (`.name.<random hex>.tmp`) should one ever be
# left beside its target (gitmem writes them into state/tmp/, ignored with state/).
# Editors' swap, backup and lock files (store/paths.py) too: a `#` that starts a line is escaped.
GITIGNORE = ("".join(f"/{name}/\n" for name in DERIVED_DIRS) + ".*.tmp\n"
             + "".join(("\\" if pattern.startswith("#") else "") + f"{pattern}\n" for pattern in EDITOR_FILES))
GITATTRIBUTES = (
    "# Entry-level merges for memory files (driver registered by `gitmem hooks install`).\n"
    "*.md merge=gitmem\n"
    "memory.json merge=gitmem\n"
    "*.json merge=gitmem\n"
)


def regenerate_layer_indexes(root: Path, catalog: Catalog, relpaths: list[str],
                             note: Callable[[str], None] | None = None,
                             held: Container[str] = ()) -> list[str]:
    """Rewrite the layer index of every layer these topic files belong to; returns changed paths.

    A folder where an index belongs cannot be replaced: it is left, named through `note`, and
    the write goes on (`gitmem check` reports it too)."""
    changed = []
    layers_touched = {
        (role.scope, role.layer)
        for role in map(L.classify_path, relpaths)
        if role.kind == "topic"
    }
    for scope, layer in sorted(layers_touched):
        relpath = L.layer_index_path(scope, layer)
        text = L.render_layer_index(scope, layer, catalog.topics(scope, layer))
        target = root / relpath
        if relpath in held:  # a hand edit left uncommitted (entries written into it): kept
            continue
        if target.is_dir() and not target.is_symlink():
            if note is not None:
                note(f"{relpath} is a folder: the layer index was not written (move the folder away)")
            continue
        if _current_bytes(target) != text.encode("utf-8"):
            write_text_atomic(target, text)
            changed.append(relpath)
    return changed


def _current_bytes(target: Path) -> bytes | None:
    """What a generated file holds now; None when it is missing or is no regular file (a
    generated file is rewritten whatever was put in its place)."""
    try:
        return read_regular_file(target)
    except OSError:
        return None


def with_missing_lines(current: str | None, wanted: str) -> str | None:
    """`current` with the lines of `wanted` it lacks appended (`wanted` when there is no file);
    None when nothing is missing: a person's own lines are kept."""
    if current is None:
        return wanted
    missing = [line for line in wanted.splitlines() if line and line not in current.splitlines()]
    if not missing:
        return None
    sep = "" if current.endswith("\n") or not current else "\n"
    return current + sep + "\n".join(missing) + "\n"
