"""`gitmem import claude-code [PROJECT]`: what Claude Code keeps for a project and its user.

- user level (global scope): `~/.claude/CLAUDE.md`, `~/.claude/rules/**/*.md`;
- project level (the project's workspace): `CLAUDE.md`, `.claude/CLAUDE.md`, `CLAUDE.local.md`,
  `.claude/rules/**/*.md`, and `CLAUDE.md` / `CLAUDE.local.md` in sub-folders;
- auto memory (the project's workspace): `~/.claude/projects/<encoded project path>/memory/`,
  MEMORY.md and its topic files (front matter `type`: feedback -> learnings, others guessed);
- `@path` imports in any of them (relative to the importing file, `~/` for home, not inside code
  spans or fences) are followed up to 5 hops, each file read once (a cycle stops there); an
  import naming no file is reported as skipped, as Claude Code itself ignores it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from gitmem.imports.markdown import markdown_files, read_note_file
from gitmem.imports.model import ReadContext, SourceFile, malformed

MAX_HOPS = 5
_IMPORT_RE = re.compile(r"(?:^|(?<=\s))@((?:~/|\.{1,2}/|/)?[\w.\-/~]+)")
_CODE_SPAN_RE = re.compile(r"`[^`]*`")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_AUTO_LAYERS = {"feedback": "learnings", "user": "semantic", "project": "semantic",
                "reference": "semantic"}
_SKIP_DIRS = {"node_modules", "vendor", "target", "dist", "build", "__pycache__"}


def encoded_project(project: Path) -> str:
    """The folder name Claude Code gives a project under ~/.claude/projects/."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(project.resolve()))


def import_targets(text: str, here: Path, home: Path) -> Iterator[tuple[int, str, Path]]:
    """(line, as written, resolved path) of every `@path` import outside code."""
    fence = ""
    for number, line in enumerate(text.split("\n"), 1):
        opened = _FENCE_RE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
            continue
        if opened:
            fence = opened.group(1)
            continue
        for match in _IMPORT_RE.finditer(_CODE_SPAN_RE.sub("", line)):
            written = match.group(1).rstrip(".,;:)")
            if "/" not in written and "." not in written:
                continue  # a mention (@someone), not a path
            target = home / written[2:] if written.startswith("~/") else here / written
            yield number, written, target


def _project_files(project: Path) -> Iterator[Path]:
    for name in ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"):
        if (project / name).is_file():
            yield project / name
    if (project / ".claude/rules").is_dir():
        yield from markdown_files(project / ".claude/rules")
    for here, dirs, files in os.walk(project):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
        if Path(here) == project:
            continue
        for name in ("CLAUDE.md", "CLAUDE.local.md"):
            if name in files:
                yield Path(here) / name


class _Reader:
    def __init__(self, project: Path, context: ReadContext) -> None:
        self.project, self.context = project, context
        self.seen: set[Path] = set()

    def file(self, path: Path, scope: str, topic: str, hops: int = 0,
             layers: dict[str, str] | None = None) -> Iterator[SourceFile]:
        """The file (named relative to the project, else to ~) and what it imports."""
        resolved = path.resolve()
        if resolved in self.seen:
            return
        self.seen.add(resolved)
        source = read_note_file(path, self.project, self.context, scope=scope, project=self.project,
                                topic=topic, layers=layers)
        followed = []
        for line, written, target in import_targets(source.text, path.parent, self.context.home):
            if not target.is_file():
                source.skipped.append((line, f"@{written}: no such file"))
            elif hops >= MAX_HOPS:
                source.skipped.append((line, f"@{written}: more than {MAX_HOPS} import hops"))
            else:
                followed.append(target)
        yield source
        for target in followed:
            yield from self.file(target, scope, f"claude-code/{target.stem}", hops + 1)

    def all(self) -> Iterator[SourceFile]:
        home = self.context.home
        user = home / ".claude"
        if (user / "CLAUDE.md").is_file():
            yield from self.file(user / "CLAUDE.md", "global", "claude-code/user")
        if (user / "rules").is_dir():
            for path in markdown_files(user / "rules"):
                yield from self.file(path, "global", f"claude-code/rules/{path.stem}")
        for path in _project_files(self.project):
            relative = path.relative_to(self.project).with_suffix("").as_posix().lstrip(".")
            yield from self.file(path, "workspace", f"claude-code/{relative}")
        memory = user / "projects" / encoded_project(self.project) / "memory"
        if memory.is_dir():
            for path in markdown_files(memory):
                yield from self.file(path, "workspace", f"claude-code/memory/{path.stem}",
                                     layers=_AUTO_LAYERS)


def read(path: Path | None, context: ReadContext) -> Iterator[SourceFile]:
    project = (path or Path.cwd()).resolve()
    if not project.is_dir():
        raise malformed(str(project), 1, "not a project folder")
    yield from _Reader(project, context).all()
