"""`gitmem import markdown [FOLDER]`: any folder of Markdown notes, headings -> entries
(the reading itself: gitmem/notes/markdown.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from gitmem import caller
from gitmem.notes.markdown import markdown_files, read_note_file
from gitmem.notes.model import ReadContext, SourceFile, malformed


def read(path: Path | None, context: ReadContext) -> Iterator[SourceFile]:
    folder = (path or Path(caller.cwd()))
    if not folder.is_dir():
        raise malformed(str(folder), 1, "not a folder of Markdown notes")
    for file in markdown_files(folder):
        yield read_note_file(file, folder, context)
