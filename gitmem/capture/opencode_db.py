"""OpenCode's SQLite database, where later OpenCode versions keep their sessions instead of the
JSON storage folder (opencode.py): `opencode.db` in OpenCode's data folder
(`~/.local/share/opencode`, under `$XDG_DATA_HOME` when set), `opencode-<channel>.db` for a
channel other than the released one. Three of its tables are read:

    session  id, directory, parent_id (a subagent's session), time_created
    message  id, session_id, time_created, data (the message as JSON: role, time, path, ...)
    part     id, message_id, session_id, data (the part as JSON: type, text, tool, state, ...)

A message's and a part's JSON are what the storage folder's files held, without their ids, so
both are read by the same functions (opencode.message_events). One database holds every session:
each is a transcript of its own, whose offset counts its messages. The database is opened
read-only (`mode=ro`): capture never writes to it, and OpenCode may go on writing while it reads."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmem.capture.formats import Event, SessionMeta
from gitmem.capture.opencode import message_events, record_tail
from gitmem.capture.source import RecordTranscript
from gitmem.errors import GitmemError, InvalidInputError, LockTimeoutError

SQLITE_HEADER = b"SQLite format 3\x00"
TABLES = ("session", "message", "part")
BUSY_SECONDS = 2.0  # how long a read waits for OpenCode's own writer before it gives up


def is_database_name(path: Path) -> bool:
    """A name OpenCode gives its database: opencode.db, or opencode-<channel>.db."""
    return path.suffix == ".db" and (path.stem == "opencode" or path.stem.startswith("opencode-"))


def is_sqlite(head: bytes) -> bool:
    return head.startswith(SQLITE_HEADER)


@dataclass(frozen=True)
class SessionRow:
    """One row of the session table, as capture needs it."""

    id: str
    directory: str
    parent: str


class Database:
    """A read-only connection to one OpenCode database; every failure is one line naming it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        uri = path.absolute().as_uri() + "?mode=ro"
        with self.reading():
            self.db = sqlite3.connect(uri, uri=True, timeout=BUSY_SECONDS, check_same_thread=False)
            self.db.row_factory = sqlite3.Row
            found = {row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not set(TABLES) <= found:
            self.close()
            raise InvalidInputError(f"cannot tell the format of {path.name}: a SQLite database without "
                                    "OpenCode's session, message and part tables")

    @contextmanager
    def reading(self) -> Iterator[None]:
        """SQLite's errors as gitmem's: a locked database waits for a later capture (exit 3), a
        damaged one is bad input (exit 2)."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise LockTimeoutError(f"{self.path}: the OpenCode database is locked by another "
                                       "process; capture it again later") from None
            raise InvalidInputError(f"{self.path}: cannot read the OpenCode database ({exc})") from None
        except sqlite3.Error as exc:
            raise InvalidInputError(f"{self.path}: cannot read the OpenCode database ({exc})") from None

    def close(self) -> None:
        if hasattr(self, "db"):
            self.db.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def sessions(self) -> list[SessionRow]:
        """Every session, the oldest first."""
        with self.reading():
            rows = self.db.execute("SELECT * FROM session ORDER BY time_created, id").fetchall()
        return [SessionRow(str(row["id"]), _column(row, "directory"), _column(row, "parent_id")) for row in rows]

    def message_ids(self, session: str) -> list[str]:
        with self.reading():
            rows = self.db.execute("SELECT id FROM message WHERE session_id = ? ORDER BY time_created, id",
                                   (session,)).fetchall()
        return [str(row[0]) for row in rows]

    def message(self, message_id: str) -> dict[str, Any] | None:
        with self.reading():
            row = self.db.execute("SELECT data FROM message WHERE id = ?", (message_id,)).fetchone()
        return _json(row[0]) if row is not None else None

    def parts(self, message_id: str) -> list[dict[str, Any] | None]:
        with self.reading():
            rows = self.db.execute("SELECT data FROM part WHERE message_id = ? ORDER BY id", (message_id,)).fetchall()
        return [_json(row[0]) for row in rows]


def _column(row: sqlite3.Row, name: str) -> str:
    value = row[name] if name in row.keys() else None  # noqa: SIM118 - `in row` looks at values
    return str(value) if value is not None else ""


def _json(value: Any) -> dict[str, Any] | None:
    try:
        found = json.loads(value) if isinstance(value, str | bytes) else None
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


class DatabaseSession(RecordTranscript):
    """One session of an OpenCode database: its messages, each with its parts."""

    def __init__(self, database: Database, meta: SessionMeta) -> None:
        super().__init__(database.path, "opencode", meta)
        self.database = database
        self._ids: list[str] | None = None

    def record_ids(self) -> list[str]:
        if self._ids is None:
            self._ids = self.database.message_ids(self.meta.session)
        return self._ids

    def record_events(self, index: int) -> list[Event] | None:
        ids = self.record_ids()
        message = self.database.message(ids[index])
        if message is None:
            self.meta.drop("unreadable rows")
            return []
        parts = []
        for part in self.database.parts(ids[index]):
            if part is None:
                self.meta.drop("unreadable rows")
            else:
                parts.append(part)
        return message_events(message, parts, self.meta, last=index == len(ids) - 1)

    def tail(self, offset: int) -> str:
        ids = self.record_ids()
        return record_tail(self.meta.session, ids[offset - 1]) if 0 < offset <= len(ids) else ""


def session_transcripts(database: Database) -> list[DatabaseSession]:
    """A transcript for every session in the database (its messages are read when captured)."""
    found = []
    for row in database.sessions():
        meta = SessionMeta(session=row.id, cwd=row.directory, delegated=bool(row.parent))
        found.append(DatabaseSession(database, meta))
    return found


def refuse_whole(path: Path) -> GitmemError:
    """The error for a database given where one session's transcript is expected."""
    return InvalidInputError(f"{path.name} is OpenCode's database of many sessions: capture it as a "
                             f"whole (`gitmem capture {path}`), as a folder is")


def is_data_folder(folder: Path) -> bool:
    """OpenCode's data folder: named opencode, holding its database or its storage folder."""
    return folder.name == "opencode" and (
        (folder / "storage" / "session").is_dir() or any(is_database_name(p) for p in folder.glob("opencode*.db")))


def outside_sessions(path: Path) -> bool:
    """True for a folder of OpenCode's data folder that holds no session (snapshots, logs,
    binaries): only its storage folder is walked, besides the database beside it."""
    return path.name != "storage" and path.parent.name == "opencode" and is_data_folder(path.parent)
