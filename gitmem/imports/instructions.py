"""Instruction files agents load (CLAUDE.md, AGENTS.md, GEMINI.md, Cursor rules, Copilot
instructions) read as notes, with the `@path` imports Claude Code and Gemini CLI follow.

An `@path` import (relative to the importing file, `~/` for home, not inside code spans or
fences) is followed up to 5 hops, each file read once (a cycle stops there); an import naming
no file is reported as skipped, as the tools themselves ignore it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from gitmem.notes.markdown import read_note_file
from gitmem.notes.model import ReadContext, SourceFile

MAX_HOPS = 5
_IMPORT_RE = re.compile(r"(?:^|(?<=\s))@((?:~/|\.{1,2}/|/)?[\w.\-/~]+)")
_CODE_SPAN_RE = re.compile(r"`[^`]*`")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
SKIP_DIRS = {"node_modules", "vendor", "target", "dist", "build", "__pycache__"}


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


def nested(project: Path, names: Iterable[str]) -> Iterator[Path]:
    """Files with these names in the project's sub-folders (hidden and build folders skipped)."""
    wanted = tuple(names)
    for here, dirs, files in os.walk(project):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        if Path(here) == project:
            continue
        for name in wanted:
            if name in files:
                yield Path(here) / name


class InstructionReader:
    """Reads instruction files of one project, each once, following `@path` imports when the
    tool does (`follow`)."""

    def __init__(self, tool: str, project: Path, context: ReadContext, *, follow: bool) -> None:
        self.tool, self.project, self.context, self.follow = tool, project, context, follow
        self.seen: set[Path] = set()

    def file(self, path: Path, scope: str, topic: str, *, hops: int = 0,
             layers: dict[str, str] | None = None,
             meta_fields: dict[str, str] | None = None) -> Iterator[SourceFile]:
        """The file (named relative to the project, else to ~) and what it imports."""
        resolved = path.resolve()
        if resolved in self.seen or not path.is_file():
            return
        self.seen.add(resolved)
        source = read_note_file(path, self.project, self.context, scope=scope, project=self.project,
                                topic=topic, layers=layers, meta_fields=meta_fields)
        followed = []
        for line, written, target in (import_targets(source.text, path.parent, self.context.home)
                                      if self.follow else ()):
            if not target.is_file():
                source.skipped.append((line, f"@{written}: no such file"))
            elif hops >= MAX_HOPS:
                source.skipped.append((line, f"@{written}: more than {MAX_HOPS} import hops"))
            else:
                followed.append(target)
        yield source
        for target in followed:
            yield from self.file(target, scope, f"{self.tool}/{target.stem}", hops=hops + 1)

    def topic(self, path: Path) -> str:
        """`<tool>/<path in the project>` (a leading dot dropped), or `<tool>/<name>` outside it."""
        try:
            relative = path.resolve().relative_to(self.project).with_suffix("").as_posix()
        except ValueError:
            relative = path.stem
        return f"{self.tool}/{relative.lstrip('.')}"
