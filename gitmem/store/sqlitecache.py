"""The one opener of the store's local SQLite caches under state/ (the catalog, the history
index): rebuildable digests of what git and the files hold, so durability is not worth an fsync,
a corrupt file is deleted and started over, and a schema change makes the tables anew."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

_IN_USE = ("SQLITE_BUSY", "SQLITE_LOCKED")  # and their extended codes (SQLITE_BUSY_SNAPSHOT...)


def _connect(path: Path) -> sqlite3.Connection:
    # check_same_thread off: the warm server hands a cache from one call's thread to the next
    # (store/warm.py); calls never overlap.
    return sqlite3.connect(path, isolation_level=None, timeout=30, check_same_thread=False)


def _corrupt(exc: sqlite3.DatabaseError) -> bool:
    """Whether to start the file over: any error but "busy" or "locked", which say only that
    another connection is using a sound file (a write-ahead log left without its database, say,
    is a disk I/O error: started over)."""
    return not _in_use(exc)


def _in_use(exc: sqlite3.DatabaseError) -> bool:
    """Whether the error says only that another connection holds the file ("busy", "locked")."""
    name = getattr(exc, "sqlite_errorname", "")
    return name.startswith(_IN_USE) or "database is locked" in str(exc)


def _prepare(db: sqlite3.Connection, schema: str) -> str | None:
    """Apply the schema; the stored schema version (None when there is none)."""
    _write_ahead(db)
    db.execute("PRAGMA synchronous=OFF")  # a cache that is rebuilt when lost
    db.executescript(schema)
    row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    return None if row is None else str(row[0])


def _write_ahead(db: sqlite3.Connection, wait: float = 30.0) -> None:
    """Put the file in write-ahead-log mode. Switching a new file needs it to oneself, and
    SQLite answers "locked" at once, without its busy wait, when other connections opening the
    same new file hold it (ten calls on a fresh store): try again until `wait` has passed."""
    deadline = time.monotonic() + wait
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if not _in_use(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def open_cache(path: Path, schema: str, version: str, tables: tuple[str, ...]) -> sqlite3.Connection:
    """A connection to the cache at `path` with `schema` applied (it holds a `meta (key, value)`
    table); `tables` are dropped and made anew when the stored schema version is not `version`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = _connect(path)
    try:
        stored = _prepare(db, schema)
    except sqlite3.DatabaseError as exc:
        db.close()
        if not _corrupt(exc):
            raise  # busy or locked: the file is sound, and others are using it
        for name in (path.name, f"{path.name}-wal", f"{path.name}-shm"):
            path.with_name(name).unlink(missing_ok=True)  # corrupt: it is only a cache, start over
        db = _connect(path)
        stored = _prepare(db, schema)
    if stored != version:  # new, or made by another version: its tables are made anew
        remake(db, schema, version, tables)
    return db


def remake(db: sqlite3.Connection, schema: str, version: str, tables: tuple[str, ...]) -> None:
    """Drop the tables and make them anew for `version`, unless another connection did so since
    this one looked: the look and the change are one write transaction, so two processes opening
    a new cache at once never drop the tables the other has just made and filled."""
    db.execute("BEGIN IMMEDIATE")
    try:
        row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if row is None or str(row[0]) != version:
            for table in tables:
                db.execute(f"DROP TABLE IF EXISTS {table}")
            for statement in _statements(schema):
                db.execute(statement)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (version,))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def add_once(db: sqlite3.Connection, present: str, script: str) -> None:
    """Run `script` in one write transaction unless the query `present` finds a row (it is
    asked again inside the transaction: two connections never both run it). For a part added
    to a cache in place, filled from what the cache holds, with no table made anew."""
    if db.execute(present).fetchone() is not None:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        if db.execute(present).fetchone() is None:
            for statement in _statements(script):
                db.execute(statement)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def _statements(script: str) -> list[str]:
    """The SQL statements of a script, one by one (executescript would commit the transaction)."""
    found, pending = [], ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):  # a ";" in a comment or a string is not an end
            if pending.strip(" \t\n;"):
                found.append(pending.strip())
            pending = ""
    return found
