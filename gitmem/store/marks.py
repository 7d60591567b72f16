"""Keeping ids.json (format/idmarks.py) in step with the files: read before numbering, written in
the commit that takes the highest entry of a layer out of the files."""

from __future__ import annotations

from pathlib import Path

from gitmem.format.idmarks import MARKS_PATH, merge_marks, parse_marks, render_marks
from gitmem.fsio import read_regular_file
from gitmem.store.catalog import Catalog


def _current(root: Path) -> str | None:
    try:
        return read_regular_file(root / MARKS_PATH).decode("utf-8", errors="replace")
    except OSError:
        return None


def take_in(catalog: Catalog, root: Path, changed: bool) -> None:
    """Make the committed marks, and the numbers in the files now (when `changed`: the catalog
    just read files), count as handed out."""
    text = _current(root)
    if text is not None and text != catalog.get_meta("marks"):
        catalog.note_marks(parse_marks(text))
        catalog.set_meta("marks", text)
    if changed:
        catalog.note_seen()


def wanted(catalog: Catalog, root: Path) -> str | None:
    """The new text of ids.json when a number handed out is in no file and not yet in it."""
    catalog.note_seen()
    lost = catalog.lost_tops()
    if not lost:
        return None
    text = _current(root)
    kept = parse_marks(text)
    if all(kept.get(key, 0) >= number for key, number in lost.items()):
        return None
    return merge_marks(text, render_marks(lost))
