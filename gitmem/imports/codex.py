"""`gitmem import codex [PROJECT]`: Codex's AGENTS.md files.

- user level (global scope): `~/.codex/AGENTS.override.md`, `~/.codex/AGENTS.md`;
- project level (the project's workspace): `AGENTS.override.md` and `AGENTS.md` at the project
  root and in its sub-folders (Codex reads them from the root down to the working folder).
Codex does not follow `@path` imports, so neither does this source.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from gitmem import caller
from gitmem.imports.instructions import InstructionReader, nested
from gitmem.notes.model import ReadContext, SourceFile, malformed

NAMES = ("AGENTS.override.md", "AGENTS.md")


def read(path: Path | None, context: ReadContext) -> Iterator[SourceFile]:
    project = (path or Path(caller.cwd())).resolve()
    if not project.is_dir():
        raise malformed(str(project), 1, "not a project folder")
    reader = InstructionReader("codex", project, context, follow=False)
    for name in NAMES:
        yield from reader.file(context.home / ".codex" / name, "global", f"codex/user-{name[:-3].lower()}")
    for name in NAMES:
        yield from reader.file(project / name, "workspace", reader.topic(project / name))
    for found in nested(project, NAMES):
        yield from reader.file(found, "workspace", reader.topic(found))
