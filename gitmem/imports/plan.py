"""What an import's checking pass learns as it reads, kept in a temporary database on disk.

The checking pass must remember, for every note it has read, the names a link may use, the
Source of every entry an earlier import (or this one) made, and the digest of every text it
has written; the writing pass resolves links by name. Held in dicts these grew with the number
of notes (most of an import's peak memory); in a private temporary SQLite database (deleted
when closed) with a small page cache they cost the same memory for 2,000 notes or 20,000.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

CACHE_KIB = 2048  # SQLite's page cache for the plan: past it, pages live in the temporary file
HELD = 512  # rows of a table waiting to be added in one executemany (each a statement of its own
# cost more than the look-up: the held ones are looked up in memory until then)

SCHEMA = """
CREATE TABLE names (name TEXT PRIMARY KEY, id TEXT NOT NULL);
CREATE TABLE known (origin TEXT PRIMARY KEY, relpath TEXT, id TEXT, recorded TEXT, current TEXT,
                    forgotten INTEGER, related TEXT, fresh INTEGER);
CREATE TABLE seen (key TEXT PRIMARY KEY, id TEXT NOT NULL);
CREATE TABLE links (n INTEGER PRIMARY KEY, id TEXT, kind TEXT, name TEXT, source TEXT);
CREATE TABLE claimed (origin TEXT PRIMARY KEY);
"""


@dataclass(frozen=True, slots=True)
class Known:
    """An entry an earlier import of this tool made, as much as a later import needs of it."""

    relpath: str
    id: str
    recorded: str  # its Import-hash
    current: str  # the digest of its text now (differs from `recorded`: a person edited it)
    forgotten: bool
    related: str
    fresh: bool = False  # made by this import: a second note from the same place is not written


class PlanIndex:
    """Names, known entries, written texts and (for a dry run) links of one import."""

    def __init__(self) -> None:
        # "" opens a private temporary database on disk, removed when the connection closes.
        self.db = sqlite3.connect("", isolation_level=None)
        self.db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        self.db.execute("PRAGMA journal_mode=OFF")
        self.db.execute("PRAGMA synchronous=OFF")
        self.db.executescript(SCHEMA)
        self.db.execute("BEGIN")  # one transaction for the whole plan: nothing here must last
        self._names: list[tuple[str, str]] = []  # in order: none is looked up before the end
        self._known: dict[str, tuple[str, str, str, str, bool, str, bool]] = {}  # origin -> row
        self._seen: dict[str, str] = {}  # key -> id

    def name(self, key: str) -> str | None:
        if self._names:
            self._add_names()
        row = self.db.execute("SELECT id FROM names WHERE name=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def add_name(self, key: str, entry_id: str) -> None:
        """The first entry to use a name keeps it."""
        self._names.append((key, entry_id))
        if len(self._names) >= HELD:
            self._add_names()

    def _add_names(self) -> None:
        # In the order they came: INSERT OR IGNORE keeps each name's first entry.
        self.db.executemany("INSERT OR IGNORE INTO names VALUES (?, ?)", self._names)
        self._names = []

    def known(self, origin: str) -> Known | None:
        row = self._known.get(origin) or self.db.execute(
            "SELECT relpath, id, recorded, current, forgotten, related, fresh FROM known "
            "WHERE origin=?", (origin,)).fetchone()
        if row is None:
            return None
        relpath, entry_id, recorded, current, forgotten, related, fresh = row
        return Known(relpath, entry_id, recorded, current, bool(forgotten), related, bool(fresh))

    def set_known(self, origin: str, known: Known) -> None:
        self._known[origin] = (known.relpath, known.id, known.recorded, known.current,
                               known.forgotten, known.related, known.fresh)
        if len(self._known) >= HELD:
            self.db.executemany("INSERT OR REPLACE INTO known VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                [(origin, *row) for origin, row in self._known.items()])
            self._known = {}

    def claim(self, origin: str) -> str:
        """The origin a note of this import is recorded under: `origin`, or, for the second
        note a source gives one anchor (two memories with one id), `origin-2` and so on, in
        the order the notes come, so that the next import finds each note again."""
        candidate, n = origin, 1
        while self.db.execute("INSERT OR IGNORE INTO claimed VALUES (?)", (candidate,)).rowcount != 1:
            n += 1
            candidate = f"{origin}-{n}"
        return candidate

    def seen(self, scope: str, layer: str, digest: str) -> str | None:
        key = f"{scope}\0{layer}\0{digest}"
        if key in self._seen:
            return self._seen[key]
        row = self.db.execute("SELECT id FROM seen WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_seen(self, scope: str, layer: str, digest: str, entry_id: str) -> None:
        self._seen[f"{scope}\0{layer}\0{digest}"] = entry_id
        if len(self._seen) >= HELD:
            self.db.executemany("INSERT OR REPLACE INTO seen VALUES (?, ?)", list(self._seen.items()))
            self._seen = {}

    def add_link(self, entry_id: str, kind: str, name: str, source: str) -> None:
        self.db.execute("INSERT INTO links (id, kind, name, source) VALUES (?, ?, ?, ?)",
                        (entry_id, kind, name, source))

    def links(self) -> Iterator[tuple[str, str, str, str]]:
        """Every link, in the order the notes named them."""
        for row in self.db.execute("SELECT id, kind, name, source FROM links ORDER BY n"):
            yield row[0], row[1], row[2], row[3]

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> PlanIndex:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
