"""`gitmem import claude-code [PROJECT]`: what Claude Code keeps for a project and its user.

- user level (global scope): `~/.claude/CLAUDE.md`, `~/.claude/rules/**/*.md`;
- project level (the project's workspace): `CLAUDE.md`, `.claude/CLAUDE.md`, `CLAUDE.local.md`,
  `.claude/rules/**/*.md`, and `CLAUDE.md` / `CLAUDE.local.md` in sub-folders;
- auto memory (the project's workspace): `~/.claude/projects/<encoded project path>/memory/`,
  MEMORY.md and its topic files (front matter `type`: feedback -> learnings, others guessed);
- `@path` imports in any of them are followed (gitmem/imports/instructions.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from gitmem import caller
from gitmem.imports.instructions import InstructionReader, nested
from gitmem.notes.markdown import markdown_files
from gitmem.notes.model import ReadContext, SourceFile, malformed

_AUTO_LAYERS = {"feedback": "learnings", "user": "semantic", "project": "semantic",
                "reference": "semantic"}


def encoded_project(project: Path) -> str:
    """The folder name Claude Code gives a project under ~/.claude/projects/."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(project.resolve()))


def _files(reader: InstructionReader, home: Path) -> Iterator[SourceFile]:
    user, project = home / ".claude", reader.project
    yield from reader.file(user / "CLAUDE.md", "global", "claude-code/user")
    if (user / "rules").is_dir():
        for path in markdown_files(user / "rules"):
            yield from reader.file(path, "global", f"claude-code/rules/{path.stem}")
    for path in (project / "CLAUDE.md", project / ".claude/CLAUDE.md", project / "CLAUDE.local.md"):
        yield from reader.file(path, "workspace", reader.topic(path))
    if (project / ".claude/rules").is_dir():
        for path in markdown_files(project / ".claude/rules"):
            yield from reader.file(path, "workspace", reader.topic(path))
    for path in nested(project, ("CLAUDE.md", "CLAUDE.local.md")):
        yield from reader.file(path, "workspace", reader.topic(path))
    memory = user / "projects" / encoded_project(project) / "memory"
    if memory.is_dir():
        for path in markdown_files(memory):
            yield from reader.file(path, "workspace", f"claude-code/memory/{path.stem}",
                                   layers=_AUTO_LAYERS)


def read(path: Path | None, context: ReadContext) -> Iterator[SourceFile]:
    project = (path or Path(caller.cwd())).resolve()
    if not project.is_dir():
        raise malformed(str(project), 1, "not a project folder")
    yield from _files(InstructionReader("claude-code", project, context, follow=True), context.home)
