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
from collections.abc import Callable, Iterator
from pathlib import Path

from gitmem import caller
from gitmem.imports.instructions import InstructionReader, nested
from gitmem.imports.nativeblock import outside
from gitmem.notes.markdown import markdown_files
from gitmem.notes.model import (
    Note,
    ReadContext,
    SourceFile,
    display_path,
    malformed,
    read_source_text,
)
from gitmem.notes.sections import notes_of, split_front_matter
from gitmem.store.workspaces import project_folder

INDEX = "MEMORY.md"
AUTO_LAYERS = {"feedback": "learnings", "user": "semantic", "project": "semantic",
                "reference": "semantic"}


def encoded_project(project: Path) -> str:
    """The folder name Claude Code gives a project under ~/.claude/projects/."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(project.resolve()))


def memory_folder(home: Path, project: Path) -> Path:
    """The project's auto-memory folder: `~/.claude/projects/<encoded project path>/memory`, the
    project being the folder's repository (its main work tree: worktrees share one folder)."""
    return home / ".claude" / "projects" / encoded_project(project_folder(project)) / "memory"


def memory_topic(path: Path) -> str:
    return f"claude-code/memory/{path.stem}"


def memory_file(reader: InstructionReader, path: Path,
                extra: Callable[[str], list[Note]] | None = None) -> list[SourceFile]:
    """One file of the auto-memory folder. MEMORY.md is read without gitmem's own block
    (gitmem/imports/nativeblock.py), with `extra` adding notes for the lines of that block
    written by hand (given MEMORY.md's text)."""
    if path.name != INDEX:
        return list(reader.file(path, "workspace", memory_topic(path), layers=AUTO_LAYERS))
    shown = display_path(path, reader.project, reader.context.home)
    text = read_source_text(path, shown)
    meta, rest, start = split_front_matter(outside(text), shown)
    notes = notes_of(rest, memory_topic(path), str(meta.get("title") or path.stem), first_line=start)
    added = extra(text) if extra is not None else []
    checked = rest + "".join(f"\n{note.body}" for note in added)  # what the secret gate reads
    return [SourceFile(shown, checked, reader.project, [*notes, *added])]


def memory_files(reader: InstructionReader, folder: Path) -> Iterator[SourceFile]:
    """The auto-memory folder's Markdown files."""
    if folder.is_dir():
        for path in markdown_files(folder):
            yield from memory_file(reader, path)


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
    yield from memory_files(reader, memory_folder(home, project))


def read(path: Path | None, context: ReadContext) -> Iterator[SourceFile]:
    project = (path or Path(caller.cwd())).resolve()
    if not project.is_dir():
        raise malformed(str(project), 1, "not a project folder")
    yield from _files(InstructionReader("claude-code", project, context, follow=True), context.home)
