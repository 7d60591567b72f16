"""`gitmem import hermes [FOLDER]`: Hermes Agent's memory files, into the runtime tier.

Hermes keeps two bounded files (default folder `~/.hermes/memories/`): MEMORY.md, the agent's
notes about the environment and its work, and USER.md, its profile of the user. Entries are
separated by a line holding only `§`. They are the same kind of memory as gitmem's runtime tier
(`runtime/MEMORY.md`, `runtime/USER.md`), so they land there: MEMORY.md items in the memory
target of the scope (global unless --scope workspace), USER.md items in the global user profile.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from gitmem.notes.model import (
    HotItem,
    ReadContext,
    SourceFile,
    display_path,
    malformed,
    read_source_text,
)

FILES = {"MEMORY.md": "memory", "USER.md": "user"}
SEPARATOR = "§"


def items_of(text: str, target: str) -> list[HotItem]:
    """The items of a §-separated file, each with the line it starts on."""
    found: list[HotItem] = []
    lines: list[str] = []
    start = 1
    for number, line in enumerate([*text.split("\n"), SEPARATOR], 1):
        if line.strip() == SEPARATOR:
            content = "\n".join(lines).strip()
            if content:
                found.append(HotItem(anchor=f"{target}-{len(found) + 1}", content=content,
                                     target=target, line=start))
            lines, start = [], number + 1
        else:
            if not lines and not line.strip():
                start = number + 1
            lines.append(line)
    return found


def read(path: Path | None, context: ReadContext) -> Iterator[SourceFile]:
    folder = path if path is not None else context.home / ".hermes" / "memories"
    if folder.is_file():
        files = [folder] if folder.name in FILES else []
        base = folder.parent
    else:
        files = [folder / name for name in FILES if (folder / name).is_file()]
        base = folder
    if not files:
        raise malformed(str(folder), 1, "holds neither MEMORY.md nor USER.md")
    for file in files:
        shown = display_path(file, base, context.home)
        text = read_source_text(file, shown)
        yield SourceFile(shown, text, None, items=items_of(text, FILES[file.name]))
