"""The catalog: a local, rebuildable SQLite digest of every topic file (state/catalog.sqlite).

It answers, without re-reading the layer, what a write needs: the highest id number in a
scope+layer, whether normalized text already exists, which file holds an id, and the per-topic
counts the layer index shows. The Markdown files stay the truth; the store tells the catalog
which files changed (its own writes, hand edits, pulls) and the catalog re-reads only those.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from gitmem.format.entry import Entry, TopicFile
from gitmem.format.layers import TopicSummary, classify_path, parse_id
from gitmem.store.sqlitecache import add_once, open_cache

SCHEMA_VERSION = "6"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, scope TEXT NOT NULL, layer TEXT NOT NULL, slug TEXT NOT NULL,
    title TEXT NOT NULL, count INTEGER NOT NULL, updated TEXT NOT NULL
);
-- Covers the per-layer counts SYSTEM.md shows and the layer index listing, both rendered on every
-- write; it replaced files_layer (scope, layer) in place, so a large store keeps its catalog.
DROP INDEX IF EXISTS files_layer;
CREATE INDEX IF NOT EXISTS files_by_layer ON files (scope, layer, slug, count);
CREATE TABLE IF NOT EXISTS entries (
    path TEXT NOT NULL, scope TEXT NOT NULL, layer TEXT NOT NULL, id TEXT, num INTEGER,
    hash TEXT NOT NULL, status TEXT NOT NULL, id_scope TEXT, id_layer TEXT
);
CREATE INDEX IF NOT EXISTS entries_path ON entries (path);
CREATE INDEX IF NOT EXISTS entries_id ON entries (id);
CREATE INDEX IF NOT EXISTS entries_hash ON entries (scope, layer, hash);
CREATE INDEX IF NOT EXISTS entries_num ON entries (id_scope, id_layer, num);
CREATE TABLE IF NOT EXISTS problems (
    path TEXT NOT NULL, line INTEGER NOT NULL, reason TEXT NOT NULL, unreadable INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS problems_path ON problems (path);
CREATE TABLE IF NOT EXISTS seen (
    id_scope TEXT NOT NULL, id_layer TEXT NOT NULL, num INTEGER NOT NULL,
    PRIMARY KEY (id_scope, id_layer)
);
"""
_TABLES = ("files", "entries", "problems", "meta", "seen", "layer_counts")
# The per-layer counts SYSTEM.md shows on every write, kept by triggers as `files` changes (a
# grouped scan of `files` took 4.6 ms a write at 200,000 entries). Added to a catalog in place,
# filled from `files` in the same transaction; dropping `files` (a remake) drops the triggers.
_COUNTS_PRESENT = "SELECT 1 FROM sqlite_master WHERE type='trigger' AND name='files_counted_update'"
_COUNTS = """
DROP TABLE IF EXISTS layer_counts;
CREATE TABLE layer_counts (
    scope TEXT NOT NULL, layer TEXT NOT NULL, files INTEGER NOT NULL, entries INTEGER NOT NULL,
    PRIMARY KEY (scope, layer)
);
INSERT INTO layer_counts SELECT scope, layer, COUNT(*), SUM(count) FROM files GROUP BY scope, layer;
CREATE TRIGGER files_counted_insert AFTER INSERT ON files BEGIN
    INSERT INTO layer_counts VALUES (NEW.scope, NEW.layer, 1, NEW.count)
    ON CONFLICT (scope, layer) DO UPDATE SET files = files + 1, entries = entries + NEW.count;
END;
CREATE TRIGGER files_counted_delete AFTER DELETE ON files BEGIN
    UPDATE layer_counts SET files = files - 1, entries = entries - OLD.count
    WHERE scope = OLD.scope AND layer = OLD.layer;
END;
CREATE TRIGGER files_counted_update AFTER UPDATE OF scope, layer, count ON files BEGIN
    UPDATE layer_counts SET files = files - 1, entries = entries - OLD.count
    WHERE scope = OLD.scope AND layer = OLD.layer;
    INSERT INTO layer_counts VALUES (NEW.scope, NEW.layer, 1, NEW.count)
    ON CONFLICT (scope, layer) DO UPDATE SET files = files + 1, entries = entries + NEW.count;
END;
"""

# Reads a repo-relative file: returns the parsed file, or None when the file is gone. A file that
# cannot be read comes back with `problem` set and what could be read of it (see tree.read_lenient).
FileReader = Callable[[str], TopicFile | None]


@dataclass(frozen=True)
class CatalogHit:
    id: str | None
    path: str
    status: str


def topic_title(topic: TopicFile, slug: str) -> str:
    value = topic.meta.get("topic")
    return str(value) if value else slug


def last_updated(topic: TopicFile) -> str:
    """Latest Verified/Created day in the file ('' when none)."""
    days = [e.get("Verified") or e.get("Created") for e in topic.entries]
    return max((d[:10] for d in days if d), default="")


def _number(entry_id: str | None) -> tuple[str | None, str | None, int | None, str]:
    """The scope, layer and number an entry's Id takes (Nones when it takes none), and why the
    Id is malformed ("" when it is not). An Id keeps its number in the scope and layer it names,
    wherever its entry lives now (moved to another topic file or layer): an Id is an identity,
    and the numbering of the file's own layer does not move for it."""
    if not entry_id:
        return None, None, None, ""
    parsed = parse_id(entry_id)
    if parsed is None:
        return None, None, None, f"malformed Id {entry_id!r}"
    return parsed.scope, parsed.layer, parsed.number, ""


class Catalog:
    """SQLite-backed digest of the topic files; safe to delete at any time."""

    def __init__(self, root: Path) -> None:
        self.path = root / "state" / "catalog.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = self._connect()

    def _connect(self) -> sqlite3.Connection:
        db = open_cache(self.path, _SCHEMA, SCHEMA_VERSION, _TABLES)
        add_once(db, _COUNTS_PRESENT, _COUNTS)
        return db

    def close(self) -> None:
        self.db.close()

    # -- bookkeeping -------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self.db.execute("DELETE FROM meta WHERE key=?", (key,))
        else:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def is_empty(self) -> bool:
        return self.get_meta("built") is None

    # -- updates -----------------------------------------------------------------------------
    def refresh(self, relpaths: Iterable[str], read: FileReader) -> None:
        """Re-read these files (topic files only; others are ignored) in one transaction."""
        self.db.execute("BEGIN")
        try:
            for relpath in relpaths:
                self._refresh_one(relpath, read)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def rebuild(self, relpaths: Iterable[str], read: FileReader) -> None:
        """Forget everything and read every given file."""
        self.db.execute("BEGIN")
        try:
            self.db.execute("DELETE FROM files")
            self.db.execute("DELETE FROM layer_counts")  # counted afresh: a rebuild owes nothing to before
            self.db.execute("DELETE FROM entries")
            self.db.execute("DELETE FROM problems")
            for relpath in relpaths:
                self._refresh_one(relpath, read)
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('built', '1')")
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def _refresh_one(self, relpath: str, read: FileReader) -> None:
        role = classify_path(relpath)
        if role.kind != "topic":
            return
        self.db.execute("DELETE FROM files WHERE path=?", (relpath,))
        self.db.execute("DELETE FROM entries WHERE path=?", (relpath,))
        self.db.execute("DELETE FROM problems WHERE path=?", (relpath,))
        topic = read(relpath)
        if topic is None:
            return
        self.db.execute(
            "INSERT INTO files VALUES (?, ?, ?, ?, ?, ?, ?)",
            (relpath, role.scope, role.layer, role.slug, topic_title(topic, role.slug),
             len(topic.entries), last_updated(topic)),
        )
        problems = [(*topic.problem, 1)] if topic.problem else []
        rows = []
        for entry in topic.entries:
            ids: list[str | None] = [entry.id] if entry.id else []
            ids += [value for name, value in entry.extra_fields if name == "Id" and value]
            for entry_id in ids or [None]:
                id_scope, id_layer, num, problem = _number(entry_id)
                rows.append((relpath, role.scope, role.layer, entry_id, num, entry.content_hash,
                             entry.status, id_scope, id_layer))
                if problem:
                    problems.append((entry.line, problem, 0))
        self.db.executemany("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        self.db.executemany("INSERT INTO problems VALUES (?, ?, ?, ?)",
                            [(relpath, *problem) for problem in problems])

    def add_entry(self, relpath: str, entry: Entry) -> bool:
        """Record one entry appended to a file the catalog knows; False when it does not know it."""
        role = classify_path(relpath)
        day = (entry.get("Verified") or entry.get("Created"))[:10]
        id_scope, id_layer, num, _problem = _number(entry.id)
        with self.db:  # one transaction
            self.db.execute("BEGIN")
            updated = self.db.execute(
                "UPDATE files SET count = count + 1, updated = MAX(updated, ?) WHERE path=?",
                (day, relpath),
            ).rowcount
            if updated:
                self.db.execute(
                    "INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (relpath, role.scope, role.layer, entry.id, num, entry.content_hash, entry.status,
                     id_scope, id_layer),
                )
        return bool(updated)

    def has_file(self, relpath: str) -> bool:
        return self.db.execute("SELECT 1 FROM files WHERE path=?", (relpath,)).fetchone() is not None

    def problems(self, relpath: str | None = None) -> list[tuple[str, int, str]]:
        """(path, line, reason) of what reading the topic files found: unreadable files and
        malformed Ids."""
        sql, args = "SELECT path, line, reason FROM problems", list[str]()
        if relpath is not None:
            sql, args = sql + " WHERE path=?", [relpath]
        return [(str(r[0]), int(r[1]), str(r[2])) for r in self.db.execute(sql + " ORDER BY path, line", args)]

    def unreadable(self, scopes: list[str] | None = None) -> list[str]:
        """Topic files that cannot be read (read verbs skip them), optionally of some scopes."""
        rows = self.db.execute("SELECT DISTINCT problems.path, files.scope FROM problems "
                               "JOIN files ON files.path = problems.path "
                               "WHERE problems.unreadable = 1 ORDER BY problems.path")
        return [str(r[0]) for r in rows if scopes is None or r[1] in scopes]

    # -- the highest numbers ever handed out (see format/idmarks.py) -----------------------------
    def note_seen(self) -> None:
        """Remember the highest number of each scope+layer in the files now; it never goes down,
        so a number stays taken after its entry is deleted (kept across catalog rebuilds)."""
        if self.db.in_transaction:
            self.note_marks(self.tops())
            return
        self.db.execute("BEGIN IMMEDIATE")  # what is read is what is written, as one statement did
        try:
            self.note_marks(self.tops())
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def tops(self) -> dict[tuple[str, str], int]:
        """The highest number in the files of each scope+layer. Read group by group along the
        entries_num index (a few seeks per scope+layer): one GROUP BY would read every entry,
        and every write asks this."""
        found: dict[tuple[str, str], int] = {}
        for scope, layer in self._id_groups():
            row = self.db.execute("SELECT MAX(num) FROM entries WHERE id_scope=? AND id_layer=?",
                                  (scope, layer)).fetchone()
            if row[0] is not None:
                found[(scope, layer)] = int(row[0])
        return found

    def _id_groups(self) -> Iterator[tuple[str, str]]:
        """Each (id_scope, id_layer) the entries hold, in order, one index seek apiece."""
        row = self.db.execute("SELECT id_scope, id_layer FROM entries WHERE id_scope IS NOT NULL "
                              "ORDER BY id_scope, id_layer LIMIT 1").fetchone()
        while row is not None:
            yield str(row[0]), str(row[1])
            row = (self.db.execute("SELECT id_scope, id_layer FROM entries WHERE id_scope=? AND "
                                   "id_layer>? ORDER BY id_layer LIMIT 1", row).fetchone()
                   or self.db.execute("SELECT id_scope, id_layer FROM entries WHERE id_scope>? "
                                      "ORDER BY id_scope, id_layer LIMIT 1", (row[0],)).fetchone())

    def note_marks(self, marks: dict[tuple[str, str], int]) -> None:
        """Take the store's committed marks (ids.json) as seen."""
        self.db.executemany(
            "INSERT INTO seen (id_scope, id_layer, num) VALUES (?, ?, ?) "
            "ON CONFLICT (id_scope, id_layer) DO UPDATE SET num = MAX(num, excluded.num)",
            [(scope, layer, number) for (scope, layer), number in marks.items()])

    def lost_tops(self) -> dict[tuple[str, str], int]:
        """Scope+layers whose highest number handed out is no longer in any file: the number the
        store must keep in ids.json so that no machine hands it out again."""
        rows = self.db.execute(
            "SELECT id_scope, id_layer, num FROM seen WHERE num > COALESCE((SELECT MAX(e.num) "
            "FROM entries e WHERE e.id_scope = seen.id_scope AND e.id_layer = seen.id_layer), 0)")
        return {(str(r[0]), str(r[1])): int(r[2]) for r in rows}

    def _seen(self, scope: str, layer: str) -> int:
        row = self.db.execute("SELECT num FROM seen WHERE id_scope=? AND id_layer=?",
                              (scope, layer)).fetchone()
        return int(row[0]) if row else 0

    # -- queries -----------------------------------------------------------------------------
    def max_number(self, scope: str, layer: str) -> int:
        """The highest number taken in a scope+layer: in the files, or ever handed out."""
        row = self.db.execute(
            "SELECT MAX(num) FROM entries WHERE id_scope=? AND id_layer=?", (scope, layer)
        ).fetchone()
        return max(int(row[0] or 0), self._seen(scope, layer))

    def numbers(self, scope: str, layer: str) -> set[int]:
        """Numbers taken in a scope+layer (the highest ever handed out included)."""
        rows = self.db.execute(
            "SELECT num FROM entries WHERE id_scope=? AND id_layer=? AND num IS NOT NULL",
            (scope, layer),
        )
        seen = self._seen(scope, layer)
        return {int(r[0]) for r in rows} | ({seen} if seen else set())

    def find_text(self, scope: str, layer: str, digest: str) -> list[CatalogHit]:
        rows = self.db.execute(
            "SELECT id, path, status FROM entries WHERE scope=? AND layer=? AND hash=? "
            "ORDER BY path, id",
            (scope, layer, digest),
        )
        return [CatalogHit(*row) for row in rows]

    def locate(self, entry_id: str) -> list[str]:
        """Every file holding this id (more than one means a duplicate)."""
        rows = self.db.execute("SELECT path FROM entries WHERE id=? ORDER BY path", (entry_id,))
        return [str(r[0]) for r in rows]

    def duplicates(self) -> dict[str, list[str]]:
        """Ids held by more than one topic file -> those files."""
        rows = self.db.execute(
            "SELECT id, path FROM entries WHERE id IN (SELECT id FROM entries WHERE id IS NOT NULL "
            "GROUP BY id HAVING COUNT(DISTINCT path) > 1) ORDER BY id, path")
        found: dict[str, list[str]] = {}
        for ident, path in rows:
            if path not in found.setdefault(str(ident), []):
                found[str(ident)].append(str(path))
        return found

    def topics(self, scope: str, layer: str) -> list[TopicSummary]:
        rows = self.db.execute(
            "SELECT slug, title, count, updated FROM files WHERE scope=? AND layer=? ORDER BY slug",
            (scope, layer),
        )
        return [TopicSummary(*row) for row in rows]

    def files(self, scope: str | None = None, layer: str | None = None) -> list[str]:
        sql, args = "SELECT path FROM files WHERE 1=1", list[str]()
        if scope is not None:
            sql, args = sql + " AND scope=?", [*args, scope]
        if layer is not None:
            sql, args = sql + " AND layer=?", [*args, layer]
        return [str(r[0]) for r in self.db.execute(sql + " ORDER BY path", args)]

    def counts(self) -> dict[tuple[str, str], tuple[int, int]]:
        """(scope, layer) -> (topic files, entries)."""
        rows = self.db.execute("SELECT scope, layer, files, entries FROM layer_counts WHERE files > 0")
        return {(r[0], r[1]): (int(r[2]), int(r[3] or 0)) for r in rows}


class MemoryCatalog(Catalog):
    """A catalog held in memory, for reading a store whose state/ this user cannot write."""

    def __init__(self, root: Path) -> None:
        self.path = Path(":memory:")
        self.db = self._connect()
