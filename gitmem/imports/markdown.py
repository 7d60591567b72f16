"""`gitmem import markdown [FOLDER]`: any folder of Markdown notes, headings -> entries.

Every `*.md` / `*.markdown` file below FOLDER (hidden folders skipped, sorted for a stable
order) is one topic named by its path without the suffix (`guides/deploy`); its sections become
entries (gitmem/imports/sections.py). Front matter `title` names a file without a heading, and a
`layer` a person set is kept. The workspace is FOLDER's (its repository, else its name).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from gitmem.imports.model import ReadContext, SourceFile, display_path, malformed, read_source_text
from gitmem.imports.sections import notes_of, split_front_matter

SUFFIXES = (".md", ".markdown")


def markdown_files(folder: Path) -> Iterator[Path]:
    """Markdown files below `folder`, hidden folders skipped, in a stable order (streamed)."""
    for here, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.lower().endswith(SUFFIXES) and not name.startswith("."):
                yield Path(here) / name


def read_note_file(path: Path, folder: Path, context: ReadContext, *, scope: str = "workspace",
                   project: Path | None = None) -> SourceFile:
    shown = display_path(path, folder, context.home)
    text = read_source_text(path, shown)
    meta, rest, start = split_front_matter(text, shown)
    relative = path.resolve().relative_to(folder.resolve()) if path.resolve().is_relative_to(
        folder.resolve()) else Path(path.name)
    topic = relative.with_suffix("").as_posix()
    title = str(meta.get("title") or path.stem)
    layer = meta.get("layer") if isinstance(meta.get("layer"), str) else None
    notes = notes_of(rest, topic, title, first_line=start, scope=scope, layer=layer)
    return SourceFile(shown, text, project if project is not None else folder, notes)


def read(path: Path | None, context: ReadContext) -> Iterator[SourceFile]:
    folder = (path or Path.cwd())
    if not folder.is_dir():
        raise malformed(str(folder), 1, "not a folder of Markdown notes")
    for file in markdown_files(folder):
        yield read_note_file(file, folder, context)
