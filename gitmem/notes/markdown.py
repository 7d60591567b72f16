"""Any folder of Markdown notes, headings -> notes (read by `gitmem import markdown` and by a
Markdown folder mounted as a space).

Every `*.md` / `*.markdown` file below FOLDER (hidden folders skipped, sorted for a stable
order) is one topic named by its path without the suffix (`guides/deploy`); its sections become
entries (gitmem/notes/sections.py). Front matter `title` names a file without a heading, and a
`layer` a person set is kept. The workspace is FOLDER's (its repository, else its name).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path

from gitmem.notes.model import (
    ReadContext,
    SourceFile,
    display_path,
    read_source_text,
    real_folder,
    real_path,
)
from gitmem.notes.sections import notes_of, split_front_matter

SUFFIXES = (".md", ".markdown")


def markdown_files(folder: Path) -> Iterator[Path]:
    """Markdown files below `folder`, in a stable order (streamed). Hidden folders are skipped,
    and so is a gitmem store inside it (its topic files are entries already, and its state/
    holds the cache a folder space is read into: reading that back would feed on itself)."""
    for here, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not is_store_folder(Path(here) / d))
        for name in sorted(files):
            if name.lower().endswith(SUFFIXES) and not name.startswith("."):
                yield Path(here) / name


def is_store_folder(path: Path) -> bool:
    """A gitmem store's folder (a Markdown walk leaves it out)."""
    return (path / "memory.json").is_file() and (path / ".git").exists()


def read_note_file(path: Path, folder: Path, context: ReadContext, *, scope: str = "workspace",
                   project: Path | None = None, topic: str | None = None,
                   layers: dict[str, str] | None = None,
                   meta_fields: dict[str, str] | None = None) -> SourceFile:
    """One Markdown file as notes: `topic` defaults to its path below `folder`; a front matter
    `layer` is kept, or `type` mapped through `layers` (a tool's own note kinds); front matter
    keys named in `meta_fields` become fields of every note (`globs` -> `Applies-to`)."""
    resolved, base = real_path(path), real_folder(folder)  # each path resolved once
    shown = display_path(path, folder, context.home, resolved)
    text = read_source_text(path, shown)
    meta, rest, start = split_front_matter(text, shown)
    relative = resolved.relative_to(base) if resolved.is_relative_to(base) else Path(path.name)
    title = str(meta.get("title") or meta.get("name") or path.stem)
    layer = meta.get("layer") if isinstance(meta.get("layer"), str) else None
    if layer is None and layers and isinstance(meta.get("type"), str):
        layer = layers.get(meta["type"].lower())
    notes = notes_of(rest, topic or relative.with_suffix("").as_posix(), title, first_line=start,
                     scope=scope, layer=layer)
    fields = {name: _field_value(meta[key]) for key, name in (meta_fields or {}).items()
              if meta.get(key) not in (None, "", [])}
    if fields:
        notes = [dataclasses.replace(note, fields={**note.fields, **fields}) for note in notes]
    return SourceFile(shown, text, project if project is not None else folder, notes)


def _field_value(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return " ".join(str(value).split())
