"""Stat-checked summaries of topic files, for reads that need many files at once (the context card).

A file's summary (its entries' titles and fields, whether it holds conflict markers, why it
cannot be read) is kept in the catalog's database with the stamp (mtime, ctime, size, inode,
mode) of the file it was read from. A read stats every file it needs and reads again only those whose stamp
changed, so it sees hand edits exactly as a full re-read would while an unchanged tree costs one
stat per file. A file changed less than stamps.SETTLE_NS ago is never trusted by its stamp: a second
edit within the same clock tick could leave the stamp as it was (git's "racy" case).

Within a read that has just asked git which files differ from HEAD (a `GitView`: the context
card's catch-up runs git status anyway), a file git reports unchanged is not even stat'ed when its
summary was read from exactly the bytes HEAD holds for it (marked SAME). git status compares each
file's stat with its index, rehashing files changed within the index's own clock tick, so this
is git's own answer and no weaker than a stamp. The mark comes from comparing the bytes read
with HEAD's blob; when HEAD moves (a commit, a pull, a checkout), the marks of the files that
differ between the two commits are dropped until they are read again. Files git does not track
(ignored ones) are never marked SAME: they keep the stat check.

The summaries are a cache like the catalog: safe to delete, rebuilt on demand, never the truth.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from gitmem.errors import ParseError
from gitmem.format import layers as L
from gitmem.format.entry import IMPORTANCE_RANK, Entry
from gitmem.format.freshness import entry_volatility, parse_day
from gitmem.format.markdown import conflict_marker_lines, parse_topic_file
from gitmem.stamps import file_stamp, settled, stamp_text
from gitmem.store import parsecache
from gitmem.store.summaryrows import (
    DIFFERENT,
    SAME,
    Known,
    Notable,
    Same,
    State,
    read_rows,
    snapshot,
)
from gitmem.store.tree import read_memory_bytes

__all__ = ["DIFFERENT", "SAME", "EntrySummary", "GitView", "Notable", "State", "Summaries"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS summary_files (
    path TEXT PRIMARY KEY, stamp TEXT NOT NULL, conflicted INTEGER NOT NULL, problem TEXT
);
CREATE TABLE IF NOT EXISTS summary_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS summary_entries (
    path TEXT NOT NULL, scope TEXT NOT NULL, layer TEXT NOT NULL, topic TEXT NOT NULL,
    line INTEGER NOT NULL, id TEXT, title TEXT NOT NULL, fields TEXT NOT NULL,
    status TEXT NOT NULL, rank INTEGER NOT NULL, importance TEXT NOT NULL,
    volatility TEXT NOT NULL, basis TEXT NOT NULL, until TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS summary_entries_path ON summary_entries (path);
CREATE INDEX IF NOT EXISTS summary_entries_layer ON summary_entries (layer, scope);
CREATE INDEX IF NOT EXISTS summary_entries_order ON summary_entries
    (layer, scope, status, rank DESC, basis = '', basis DESC, COALESCE(id, ''), path, line);
INSERT OR IGNORE INTO summary_meta VALUES ('generation', '0');
INSERT OR IGNORE INTO summary_meta VALUES ('database', lower(hex(randomblob(8))));
CREATE TRIGGER IF NOT EXISTS summary_files_insert AFTER INSERT ON summary_files BEGIN
    UPDATE summary_meta SET value = value + 1 WHERE key = 'generation'; END;
CREATE TRIGGER IF NOT EXISTS summary_files_update AFTER UPDATE ON summary_files BEGIN
    UPDATE summary_meta SET value = value + 1 WHERE key = 'generation'; END;
CREATE TRIGGER IF NOT EXISTS summary_files_delete AFTER DELETE ON summary_files BEGIN
    UPDATE summary_meta SET value = value + 1 WHERE key = 'generation'; END;
"""
_ORDER = "rank DESC, basis = '', basis DESC, COALESCE(id, '')"  # the card's order (then layer, scope...)
_ENTRY_COLUMNS = "path, scope, layer, topic, line, id, title, fields, volatility"


@dataclass(frozen=True)
class GitView:
    """What git said of the working tree at the start of a read: every topic file not in
    `dirty` holds exactly what commit `head` holds for it."""

    head: str
    dirty: frozenset[str]
    changed_between: Callable[[str, str], list[str]]  # paths that differ; raises when unknown
    committed: Callable[[str], bytes | None]  # a file's bytes in `head` (None: not there)


@dataclass(frozen=True)
class EntrySummary:
    """What a listing shows of an entry: no body (its volatility is resolved from it)."""

    path: str
    scope: str
    layer: str
    topic: str
    line: int
    id: str | None
    title: str
    fields: dict[str, str]
    volatility: str


def _stamp(path: str) -> str | None:
    """The file's stamp (gitmem/stamps.py) as text; '' while it has not settled; None when gone."""
    stamp = file_stamp(path)
    if stamp is None:
        return None
    return stamp_text(stamp) if settled(stamp) else ""


def _day(value: str) -> str:
    parsed = parse_day(value)
    return parsed.isoformat() if parsed else ""


def _entry_row(relpath: str, role: L.FileRole, topic: str, entry: Entry) -> tuple[object, ...]:
    importance = entry.get("Importance", "normal")
    basis = _day(entry.get("Verified")) or _day(entry.get("Created"))
    return (relpath, role.scope, role.layer, topic, entry.line, entry.id, entry.title,
            json.dumps(dict(entry.ordered_fields())), entry.status,
            IMPORTANCE_RANK.get(importance, 1), importance, entry_volatility(entry), basis,
            _day(entry.get("Valid-until")))


def _meta(db: sqlite3.Connection, key: str) -> str | None:
    row = db.execute("SELECT value FROM summary_meta WHERE key=?", (key,)).fetchone()
    return None if row is None else str(row[0])


@contextlib.contextmanager
def _immediate(db: sqlite3.Connection) -> Iterator[None]:
    """A write transaction that sees the latest data (another process may write meanwhile)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))


def _position(column: str, values: list[str]) -> str:
    """An SQL expression: the index of the column's value in `values` (bound as parameters)."""
    return f"CASE {column} " + " ".join(f"WHEN ? THEN {i}" for i in range(len(values))) + " END"


class Summaries:
    """Summaries of a store's topic files, kept in `db` (the catalog's database)."""

    def __init__(self, db: sqlite3.Connection, root: Path) -> None:
        self.db = db
        self.root = root
        self._memo: dict[str, State | None] | None = None
        self._view: GitView | None = None
        self.db.executescript(_SCHEMA)

    @contextlib.contextmanager
    def batch(self, view: GitView | None = None) -> Iterator[None]:
        """Within it, each file is looked at (a stat, and a read when it changed) at most once:
        a context card asks about most files several times, and a few milliseconds apart.
        With `view` (git status taken just before), files git reports unchanged whose summary
        was read from HEAD's bytes are not looked at on disk at all."""
        self._memo, self._view = {}, view
        try:
            yield
        finally:
            self._memo, self._view = None, None

    def current(self, relpaths: Iterable[str]) -> dict[str, State]:
        """path -> (holds conflict markers, why it cannot be read or None) for the files that
        exist, every stale summary read again first."""
        # Set and dict operations rather than loops: a card asks about every file of the store.
        wanted = list(relpaths)
        memo = self._memo
        if memo is None:
            return self._look(wanted)
        todo = list(dict.fromkeys(wanted).keys() - memo.keys())
        looked = self._look(todo) if todo else {}
        memo.update(dict.fromkeys(todo))
        memo.update(looked)
        found = dict(zip(wanted, map(memo.__getitem__, wanted), strict=True))
        if None in found.values():  # files that are gone
            return {p: state for p, state in found.items() if state is not None}
        return found  # type: ignore[return-value]  # no None among them

    def _look(self, wanted: list[str]) -> dict[str, State]:
        view = self._view
        if view is not None:
            self._follow(view)
        known, same, head = self._known()
        if view is not None and head != view.head:
            view = None  # another process moved on meanwhile: the marks are not about this HEAD
        dirty = view.dirty if view is not None else frozenset()
        stale: list[tuple[str, str]] = []
        found: dict[str, State] = {}
        todo: Iterable[str] = wanted
        if view is not None:  # git: these files hold HEAD's bytes, as their summaries were read
            quick = same.keys() & set(wanted)
            quick -= dirty
            found = dict(zip(quick, map(same.__getitem__, quick), strict=True))
            todo = sorted(set(wanted) - quick)
        base = f"{self.root}{os.sep}"
        for relpath in todo:
            row = known.get(relpath)
            if view is not None and row is not None and relpath not in dirty and row[1].endswith(SAME):
                found[relpath] = (row[2] == 1, row[3])  # git: the file holds HEAD's bytes, as read
                continue
            stamp = _stamp(base + relpath)
            if stamp is None:
                continue
            if row is None or not stamp or row[1].partition("|")[0] != stamp or \
                    (view is not None and relpath not in dirty and not row[1].endswith(DIFFERENT)):
                stale.append((relpath, stamp))  # changed, or as committed and never checked
            else:
                found[relpath] = (row[2] == 1, row[3])
        if stale:
            found.update(self._read_again(stale, view))
        return found

    def _known(self) -> tuple[Known, Same, str | None]:
        """Every summary's row by path, those marked SAME, and the commit the marks refer to
        (one snapshot)."""
        rows, head = read_rows(self.db)
        return rows.known, rows.same, head

    def of_note(self, relpaths: Iterable[str]) -> Notable:
        """What current() says of these files, told by the exceptions: the files that are gone
        and those holding conflict markers or that cannot be read. Within a batch with a git
        view, the files git reports unchanged are answered from the kept SAME rows with set
        operations (no per-file work); the others go through current()."""
        wanted = set(relpaths)
        view = self._view
        if view is not None and self._memo is not None:
            self._follow(view)
            rows, head = read_rows(self.db)
            if head == view.head:
                rest = (wanted - rows.same.keys()) | (wanted & view.dirty)
                looked = self.current(sorted(rest))
                flagged = {p: state for p, state in rows.flagged.items()
                           if p in wanted and p not in view.dirty}
                flagged.update((p, state) for p, state in looked.items() if state[0] or state[1] is not None)
                return Notable(wanted, rest - looked.keys(), flagged)
        states = self.current(wanted)
        return Notable(wanted, wanted - states.keys(),
                       {p: state for p, state in states.items() if state[0] or state[1] is not None})

    def _follow(self, view: GitView) -> None:
        """Make the marks refer to `view.head`: files that differ between the commit they were
        checked against and it are checked again when next read."""
        if _meta(self.db, "head") == view.head:
            return
        with _immediate(self.db):
            before = _meta(self.db, "head")
            if before == view.head:
                return
            try:
                changed = view.changed_between(before, view.head) if before else None
            except Exception:  # noqa: BLE001 - an unknown commit (history rewritten): check all
                changed = None
            unmark = ("UPDATE summary_files SET stamp = substr(stamp, 1, instr(stamp, '|') - 1) "
                      "WHERE instr(stamp, '|') > 0")
            if changed is None:
                self.db.execute(unmark)
            else:
                self.db.executemany(unmark + " AND path = ?", [(p,) for p in changed])
            self.db.execute("INSERT OR REPLACE INTO summary_meta VALUES ('head', ?)", (view.head,))

    def _read_again(self, stale: list[tuple[str, str]], view: GitView | None) -> dict[str, State]:
        found: dict[str, State] = {}
        with _immediate(self.db):
            if view is not None and _meta(self.db, "head") != view.head:
                view = None  # a mark would be about the commit of summary_meta: not this one
            for relpath, stamp in stale:
                outcome = self._summarize(relpath, stamp, view)
                if outcome is not None:
                    found[relpath] = outcome
        return found

    def _summarize(self, relpath: str, stamp: str, view: GitView | None) -> State | None:
        self.db.execute("DELETE FROM summary_files WHERE path=?", (relpath,))
        self.db.execute("DELETE FROM summary_entries WHERE path=?", (relpath,))
        try:
            data, text = read_memory_bytes(self.root, relpath)
            conflicted = bool(conflict_marker_lines(text))
            topic_file = parsecache.parse(str(self.root), relpath, text, parse_topic_file)
        except FileNotFoundError:
            return None
        except ParseError as exc:
            problem = f"{exc.line}: {exc.reason}"
            mark = "" if view is None else DIFFERENT  # rare: the stat check is enough
            self.db.execute("INSERT INTO summary_files VALUES (?, ?, 0, ?)", (relpath, stamp + mark, problem))
            return False, problem
        role = L.classify_path(relpath)
        topic = str(topic_file.meta.get("topic") or role.slug)
        self.db.executemany(f"INSERT INTO summary_entries VALUES ({', '.join('?' * 14)})",
                            [_entry_row(relpath, role, topic, e) for e in topic_file.entries])
        mark = "" if view is None else SAME if view.committed(relpath) == data else DIFFERENT
        self.db.execute("INSERT INTO summary_files VALUES (?, ?, ?, NULL)",
                        (relpath, stamp + mark, int(conflicted)))
        return conflicted, None

    def live_entries(self, relpaths: list[str], scopes: list[str], layers: list[str], today: date, *,
                     importance: list[str] | None = None,
                     limit: int | None = None) -> tuple[list[EntrySummary], list[str]]:
        """Live (not forgotten, superseded or expired) entries of these files, layers and scopes:
        most important first, then most recently verified, then by Id, then in the order of
        `layers`, of `scopes`, and file order; and the files that cannot be read (left out)."""
        note = self.of_note(relpaths)
        skipped = note.unreadable()
        if not note.wanted - note.gone - set(skipped):
            return [], skipped
        live = "status = 'live' AND (until = '' OR until >= ?)"
        live_args: list[object] = [today.isoformat()]
        if importance is not None:
            live += f" AND importance IN ({_marks(importance)})"
            live_args += importance
        sql = (f"SELECT {_ENTRY_COLUMNS} FROM summary_entries "
               f"WHERE layer IN ({_marks(layers)}) AND scope IN ({_marks(scopes)}) AND {live}")
        args: list[object] = [*layers, *scopes, *live_args]
        rows = []
        with snapshot(self.db):  # the row ids picked first name the same rows in the end
            if limit is not None:
                picked = [rowid for layer in layers for scope in scopes
                          for rowid in self._first(layer, scope, live, live_args, note, limit)]
                sql += f" AND rowid IN ({_marks(picked)})" if picked else " AND 0"
                args += picked
            sql += f" ORDER BY {_ORDER}, {_position('layer', layers)}, {_position('scope', scopes)}, path, line"
            args += [*layers, *scopes]
            for row in self.db.execute(sql, args):  # rows of files gone or unreadable are left out
                if note.readable(row[0]):
                    rows.append(row)
                    if limit is not None and len(rows) >= limit:
                        break
        return [EntrySummary(str(r[0]), str(r[1]), str(r[2]), str(r[3]), int(r[4]), r[5], str(r[6]),
                             json.loads(r[7]), str(r[8])) for r in rows], skipped

    def live_grades(self, relpaths: list[str], scopes: list[str], layers: list[str], today: date,
                    windows: dict[str, int]) -> tuple[dict[str, dict[str, int]], list[str]]:
        """How many live entries of these files, layers and scopes are fresh, aging, stale or
        unverified, per layer (format.freshness.grade's rule, counted in the database: no
        entry's fields are decoded); and the files that cannot be read (left out)."""
        note = self.of_note(relpaths)
        skipped = note.unreadable()
        normal = windows.get("normal", 90)
        window = "CASE volatility " + " ".join("WHEN ? THEN ?" for _ in windows) + " ELSE ? END"
        age = "(julianday(?) - julianday(basis))"
        graded = (f"CASE WHEN basis = '' THEN 'unverified' WHEN {age} > {window} THEN 'stale'"
                  f" WHEN {age} > ({window}) / 2.0 THEN 'aging' ELSE 'fresh' END")
        pairs = [v for item in windows.items() for v in item]
        day = today.isoformat()
        sql = (f"SELECT path, layer, {graded}, COUNT(*) FROM summary_entries WHERE layer IN"
               f" ({_marks(layers)}) AND scope IN ({_marks(scopes)}) AND status = 'live'"
               " AND (until = '' OR until >= ?) GROUP BY 1, 2, 3")
        args = [day, *pairs, normal, day, *pairs, normal, *layers, *scopes, day]
        counts: dict[str, dict[str, int]] = {}
        for path, layer, grade, count in self.db.execute(sql, args):
            if note.readable(path):
                per = counts.setdefault(str(layer), {})
                per[str(grade)] = per.get(str(grade), 0) + int(count)
        return counts, skipped

    def _first(self, layer: str, scope: str, live: str, live_args: list[object], note: Notable,
               limit: int) -> list[int]:
        """The row ids of the first `limit` live entries of readable files of one layer and
        scope, in the card's order: read in the order of an index, so no query sorts every
        entry of a layer (the first `limit` of all layers and scopes are among these)."""
        sql = (f"SELECT rowid, path FROM summary_entries WHERE layer = ? AND scope = ? AND {live} "
               f"ORDER BY {_ORDER}, path, line")
        found: list[int] = []
        for rowid, path in self.db.execute(sql, [layer, scope, *live_args]):
            if note.readable(path):
                found.append(int(rowid))
                if len(found) >= limit:
                    break
        return found

    def conflicted(self, relpaths: Iterable[str]) -> list[str]:
        """Those of these files that hold conflict markers."""
        return self.of_note(relpaths).conflicted()
