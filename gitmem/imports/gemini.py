"""`gitmem import gemini [PROJECT]`: Gemini CLI's GEMINI.md context files.

- user level (global scope): `~/.gemini/GEMINI.md`, where the save-memory tool appends facts
  as bullets under `## Gemini Added Memories`: each bullet becomes its own entry (named by its
  text, so a later import finds it however the list is reordered);
- project level (the project's workspace): `GEMINI.md` at the project root and in sub-folders;
- `@path` imports are followed as Gemini CLI does (gitmem/imports/instructions.py).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path

from gitmem import caller
from gitmem.format.entry import text_hash
from gitmem.imports.instructions import InstructionReader, nested
from gitmem.notes.model import Note, ReadContext, SourceFile, malformed

MEMORIES = "Gemini Added Memories"
_BULLET_RE = re.compile(r"^\s*[-*]\s+(.+?)\s*$")


def _split_memories(source: SourceFile) -> SourceFile:
    notes: list[Note] = []
    for note in source.notes:
        if note.title.strip() != MEMORIES:
            notes.append(note)
            continue
        for offset, line in enumerate(note.body.split("\n"), 1):
            bullet = _BULLET_RE.match(line)
            if bullet:
                fact = bullet.group(1)
                notes.append(dataclasses.replace(
                    note, anchor=f"memories/{text_hash(fact)[:12]}", title=fact, body=fact,
                    line=note.line + offset))
    source.notes = notes
    return source


def read(path: Path | None, context: ReadContext) -> Iterator[SourceFile]:
    project = (path or Path(caller.cwd())).resolve()
    if not project.is_dir():
        raise malformed(str(project), 1, "not a project folder")
    reader = InstructionReader("gemini", project, context, follow=True)
    for source in reader.file(context.home / ".gemini" / "GEMINI.md", "global", "gemini/user"):
        yield _split_memories(source)
    for found in [project / "GEMINI.md", *nested(project, ("GEMINI.md",))]:
        for source in reader.file(found, "workspace", reader.topic(found)):
            yield _split_memories(source)
