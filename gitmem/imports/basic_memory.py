"""`gitmem import basic-memory [PROJECT]`: a basic-memory project folder (its knowledge graph;
the reading itself: gitmem/notes/basic_memory.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from gitmem import caller
from gitmem.notes.basic_memory import read_note
from gitmem.notes.markdown import markdown_files
from gitmem.notes.model import ReadContext, SourceFile, malformed


def read(path: Path | None, context: ReadContext) -> Iterator[SourceFile]:
    project = (path or Path(caller.cwd())).resolve()
    if not project.is_dir():
        raise malformed(str(project), 1, "not a basic-memory project folder")
    for file in markdown_files(project):
        yield read_note(file, project, context)
