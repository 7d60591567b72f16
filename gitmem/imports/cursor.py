"""`gitmem import cursor [PROJECT]`: Cursor's project rules.

- `.cursor/rules/**/*.mdc` (and `.md`), at the project root and in sub-folders' `.cursor/rules`:
  front matter `description`, `globs`, `alwaysApply` read; the rule's sections become entries
  (a rule without headings is one entry named by its description, else its file name), with
  `Applies-to:` (the globs) and `Always-apply:` kept as fields;
- the legacy `.cursorrules` file at the project root.
All of it belongs to the project's workspace (Cursor's user rules live in its settings database,
not in files).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path

from gitmem import caller
from gitmem.imports.instructions import SKIP_DIRS, InstructionReader
from gitmem.notes.model import ReadContext, SourceFile, malformed
from gitmem.notes.sections import split_front_matter

_FIELDS = {"globs": "Applies-to", "alwaysApply": "Always-apply"}


def _in_rules(parts: tuple[str, ...]) -> bool:
    return any(a == ".cursor" and b == "rules" for a, b in zip(parts, parts[1:], strict=False))


def rule_files(project: Path) -> Iterator[Path]:
    """Rule files under every `.cursor/rules/` folder of the project, sub-folders included."""
    for here, dirs, files in os.walk(project):
        base = Path(here)
        if _in_rules(base.relative_to(project).parts):
            for name in sorted(files):
                if name.endswith((".mdc", ".md")):
                    yield base / name
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and (not d.startswith(".") or d == ".cursor")
                         and not (base.name == ".cursor" and d != "rules"))


def read(path: Path | None, context: ReadContext) -> Iterator[SourceFile]:
    project = (path or Path(caller.cwd())).resolve()
    if not project.is_dir():
        raise malformed(str(project), 1, "not a project folder")
    reader = InstructionReader("cursor", project, context, follow=False)
    for rule in rule_files(project):
        for source in reader.file(rule, "workspace", reader.topic(rule), meta_fields=_FIELDS):
            yield _named_by_description(source)
    yield from reader.file(project / ".cursorrules", "workspace", "cursor/cursorrules")


def _named_by_description(source: SourceFile) -> SourceFile:
    """A rule without headings takes its description as its title."""
    meta, _, _ = split_front_matter(source.text, source.path)
    description = meta.get("description")
    if isinstance(description, str) and description.strip():
        stem = Path(source.path).stem
        source.notes = [dataclasses.replace(note, title=description.strip()) if note.title == stem
                        else note for note in source.notes]
    return source
