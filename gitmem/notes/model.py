"""What a source reads, as values: the notes and hot items of one source file (an import
source, or a Markdown folder mounted as a space), and what an import did with them."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from gitmem.errors import InvalidInputError
from gitmem.notes.actionlog import Action as Action  # re-exported: where readers look for it
from gitmem.notes.actionlog import ActionLog


@dataclass(frozen=True)
class Note:
    """One entry a source proposes. `anchor` names it stably within its file (a heading path,
    an item id): `Source: import:<tool>:<path>#<anchor>` is how a later import finds it again."""

    anchor: str
    title: str
    body: str
    topic: str
    line: int = 1
    scope: str = "workspace"  # "global" or "workspace" (the source file's project)
    layer: str | None = None  # None: guessed from the wording
    fields: dict[str, str] = field(default_factory=dict)
    links: tuple[tuple[str, str], ...] = ()  # (relation type, the title of the note it names)
    aliases: tuple[str, ...] = ()  # other names its links may use (a permalink, a file stem)


@dataclass(frozen=True)
class HotItem:
    """One runtime-tier item a source proposes (target `memory` or `user`)."""

    anchor: str
    content: str
    target: str = "memory"
    line: int = 1
    scope: str = "global"


@dataclass
class SourceFile:
    """One file of a source: its display path (provenance), its text (checked for secrets),
    the project folder its workspace derives from, and what it holds."""

    path: str
    text: str
    project: Path | None = None
    notes: list[Note] = field(default_factory=list)
    items: list[HotItem] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (line, why) left out, reported


@dataclass
class ImportReport:
    tool: str
    dry_run: bool
    files: int = 0
    actions: ActionLog = field(default_factory=ActionLog)  # bounded memory, whatever its length
    commit: str | None = None

    def counts(self) -> dict[str, int]:
        return self.actions.counts()

    def head_json(self) -> dict[str, Any]:
        """Everything but the actions (a large report is written out one action at a time)."""
        return {"tool": self.tool, "dry_run": self.dry_run, "files": self.files,
                "counts": self.counts(), "commit": self.commit}

    def as_json(self) -> dict[str, Any]:
        return {**self.head_json(), "actions": [a.as_json() for a in self.actions]}


@dataclass(frozen=True)
class ReadContext:
    """Where a source looks besides its PATH: the home folder (user-level files)."""

    home: Path


def malformed(path: str, line: int, reason: str) -> InvalidInputError:
    """The one-line error for input a source cannot read: file, line, reason."""
    return InvalidInputError(f"cannot import {path}:{line}: {reason}; nothing was written")


@lru_cache(maxsize=256)
def real_folder(folder: Path) -> Path:
    """`folder.resolve()`, once per folder (see real_path)."""
    return folder.resolve()


def real_path(path: Path) -> Path:
    """`path.resolve()`, with each folder resolved once: an import reads thousands of files from
    a few folders, and resolving walks every part of the path."""
    if path.is_symlink() or not path.is_absolute() or path.name in ("", ".."):
        return path.resolve()
    return real_folder(path.parent) / path.name


def display_path(path: Path, base: Path, home: Path, resolved: Path | None = None) -> str:
    """A source file as provenance names it: relative to the imported folder, else to ~.
    `resolved`: its real_path, when the caller has it already."""
    resolved = real_path(path) if resolved is None else resolved
    for root, prefix in ((real_folder(base), ""), (real_folder(home), "~/")):
        try:
            return prefix + resolved.relative_to(root).as_posix()
        except ValueError:
            continue
    return resolved.as_posix()


def read_source_text(path: Path, shown: str) -> str:
    """A source file's text: UTF-8 (a BOM dropped), no NUL, else a one-line error."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise malformed(shown, 1, exc.strerror or "unreadable") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise malformed(shown, line, "not UTF-8 text") from None
    if "\x00" in text:
        raise malformed(shown, text[: text.index("\x00")].count("\n") + 1, "holds a NUL character")
    return text.replace("\r\n", "\n")
