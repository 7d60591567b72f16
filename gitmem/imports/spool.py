"""The plan an import's checking pass leaves for its writing pass, kept on disk.

The checking pass reads and parses every source file, chooses every Id and decides every
action; the writing pass needs all of that again, plus the links (known only once every name
has been read). Reading and parsing the sources twice was most of an import's time, so the
first pass writes its decisions here as a stream of records (pickled BATCH at a time, one
batch after another, into an unnamed temporary file) and the second pass replays them: memory
stays bounded by the writer's group size whatever the number of notes, and the sources are read
once. A pickle per record cost more than the records: most of its time is the call itself.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from gitmem.imports.writer import Pending
from gitmem.notes.model import Action, SourceFile


@dataclass(frozen=True)
class Write:
    """An entry to write (or only to link): `changed` says the plan already changed it."""

    relpath: str
    pending: Pending
    links: tuple[tuple[str, str], ...]
    where: str
    changed: bool


@dataclass(frozen=True)
class Relink:
    """An entry an earlier import made, unchanged: only its links may need adding. Its file is
    read in the writing pass only when one does."""

    relpath: str
    topic: str
    id: str
    related: str
    links: tuple[tuple[str, str], ...]
    where: str


@dataclass(frozen=True)
class Hot:
    """A source file's runtime-tier items, added in the writing pass (they see each other there)."""

    source: SourceFile
    scope: str


@dataclass(frozen=True)
class FileDone:
    """One source file read (the report's file count)."""


Record = Action | Write | Relink | Hot | FileDone
BATCH = 256  # records held before they are pickled together (each is small: one entry at most)


class Spool:
    """An append-only stream of records, replayed once."""

    def __init__(self) -> None:
        # Closed by close() / the with block: the file lives as long as the import.
        self._file: IO[bytes] = tempfile.TemporaryFile(prefix="gitmem-import-")  # noqa: SIM115
        self._held: list[Record] = []

    def put(self, record: Record) -> None:
        self._held.append(record)
        if len(self._held) >= BATCH or isinstance(record, Hot):  # a Hot holds a whole source file
            self._spill()

    def _spill(self) -> None:
        # One pickle per batch: a pickler shared by the whole import would keep a memo that grows.
        pickle.dump(self._held, self._file, protocol=pickle.HIGHEST_PROTOCOL)
        self._held = []

    def replay(self) -> Iterator[Any]:
        if self._held:
            self._spill()
        self._file.flush()
        self._file.seek(0)
        while True:
            try:
                batch = pickle.load(self._file)
            except EOFError:
                return
            yield from batch

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
