"""The rows of a store's summaries (gitmem/store/summaries.py) as read from the database, kept
between calls, and the answer a read of many files gets: which of them are gone, hold conflict
markers or cannot be read."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

# A summary_files stamp is the file's stat stamp, then "|head" when the summary was read from
# exactly the bytes the commit in summary_meta 'head' holds for the path, "|other" when checked
# against that commit and found different (or absent there), nothing when not checked since. (In
# the stamp, not a column of its own: an older gitmem sharing the store writes rows of the old
# shape, and those count as not checked.)
SAME, DIFFERENT = "|head", "|other"
# (holds conflict markers, why it cannot be read or None)
State = tuple[bool, str | None]


@dataclass(frozen=True)
class Notable:
    """Files asked about, those of them that are gone, and those holding conflict markers or
    that cannot be read, with their state."""

    wanted: set[str]
    gone: set[str]
    flagged: dict[str, State]

    def readable(self, relpath: str) -> bool:
        """Asked about, there, and readable."""
        return relpath in self.wanted and relpath not in self.gone and \
            (relpath not in self.flagged or self.flagged[relpath][1] is None)

    def unreadable(self) -> list[str]:
        return sorted(p for p, (_c, problem) in self.flagged.items() if problem is not None)

    def conflicted(self) -> list[str]:
        return sorted(p for p, (conflicted, _p) in self.flagged.items() if conflicted)


# The rows of summary_files as last read, per database (its file and the random name it was
# given when made: a copy of a store keeps the name, a store made again gets another; the warm
# server's calls each hold a connection of their own to it), with what they were read under: the
# schema version and the generation summaries.py's triggers count up on every change of
# summary_files, whoever makes it (this process, another one, an older gitmem, sqlite3 by hand).
# A warm server reads the rows again only when one of them changed.
Known = dict[str, tuple[str, str, int, str | None]]
Same = dict[str, "State"]  # the files whose summary was read from HEAD's bytes, and their state


@dataclass(frozen=True)
class Rows:
    """summary_files as read once: every row by path, the rows marked SAME, and those of them
    that hold conflict markers or cannot be read (`flagged`: a handful, even at 10,000 files)."""

    key: tuple[object, ...]
    known: Known
    same: Same
    flagged: Same


_kept: dict[str, Rows] = {}


@contextlib.contextmanager
def snapshot(db: sqlite3.Connection) -> Iterator[None]:
    """A read transaction: its queries see one state of the database."""
    db.execute("BEGIN")
    try:
        yield
    finally:
        db.execute("COMMIT")


def read_rows(db: sqlite3.Connection) -> tuple[Rows, str | None]:
    """summary_files as it is now (read again only when it changed), and the commit the
    marks refer to (one snapshot)."""
    with snapshot(db):
        meta = dict(db.execute("SELECT key, value FROM summary_meta"))
        key = (db.execute("PRAGMA schema_version").fetchone()[0], meta.get("generation"))
        name = str(meta.get("database") or "")
        if name:
            name = f"{db.execute('PRAGMA database_list').fetchone()[2]}\0{name}"
        kept = _kept.get(name) if name else None
        if kept is not None and kept.key == key:
            return kept, meta.get("head")
        rows = db.execute("SELECT path, stamp, conflicted, problem FROM summary_files")
        known: Known = {row[0]: row for row in rows}
    same: Same = {p: (row[2] == 1, row[3]) for p, row in known.items() if row[1].endswith(SAME)}
    flagged = {p: state for p, state in same.items() if state[0] or state[1] is not None}
    found = Rows(key, known, same, flagged)
    if name:
        _kept[name] = found
    return found, meta.get("head")

