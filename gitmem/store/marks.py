"""Keeping ids.json (format/idmarks.py) in step with the files: read before numbering, written in
the commit that takes the highest entry of a layer out of the files."""

from __future__ import annotations

from gitmem.format.idmarks import MARKS_PATH, merge_marks, parse_marks, render_marks
from gitmem.store.catalog import Catalog
from gitmem.store.integrity import check_text


def checked(text: str) -> str | None:
    """ids.json's text when it parses (ParseError naming the line when it does not); the store
    reads it through lastgood, so a broken one is git's last good version until it is fixed."""
    check_text(MARKS_PATH, text)
    return text


def take_in(catalog: Catalog, text: str | None, changed: bool) -> None:
    """Make the committed marks (`text`: ids.json as the store reads it), and the numbers in the
    files now (when `changed`: the catalog just read files), count as handed out."""
    if text is not None and text != catalog.get_meta("marks"):
        catalog.note_marks(parse_marks(text))
        catalog.set_meta("marks", text)
    if changed:
        catalog.note_seen()


def wanted(catalog: Catalog, text: str | None) -> str | None:
    """The new text of ids.json (now `text`) when a number handed out is in no file and not yet
    in it."""
    catalog.note_seen()
    lost = catalog.lost_tops()
    if not lost:
        return None
    kept = parse_marks(text)
    if all(kept.get(key, 0) >= number for key, number in lost.items()):
        return None
    return merge_marks(text, render_marks(lost))
