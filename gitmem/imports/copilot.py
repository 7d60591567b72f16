"""`gitmem import copilot [PROJECT]`: GitHub Copilot's repository instructions.

- `.github/copilot-instructions.md`: the repository-wide instructions;
- `.github/instructions/**/*.instructions.md`: path-specific ones, their front matter `applyTo`
  kept as `Applies-to:`.
Both belong to the project's workspace.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from gitmem import caller
from gitmem.imports.instructions import InstructionReader
from gitmem.notes.markdown import markdown_files
from gitmem.notes.model import ReadContext, SourceFile, malformed


def read(path: Path | None, context: ReadContext) -> Iterator[SourceFile]:
    project = (path or Path(caller.cwd())).resolve()
    if not project.is_dir():
        raise malformed(str(project), 1, "not a project folder")
    reader = InstructionReader("copilot", project, context, follow=False)
    main = project / ".github" / "copilot-instructions.md"
    yield from reader.file(main, "workspace", "copilot/instructions")
    folder = project / ".github" / "instructions"
    if folder.is_dir():
        for found in markdown_files(folder):
            if found.name.endswith(".instructions.md"):
                topic = "copilot/" + found.name.removesuffix(".instructions.md")
                yield from reader.file(found, "workspace", topic, meta_fields={"applyTo": "Applies-to"})
