"""The per-entry history index (state/history.sqlite): which commits changed each entry Id.

A commit changed an entry when the entry (its file, heading, body and fields; every copy of it)
differs from its state in every parent — git's rule for `git log PATH` (see trace.py). That is a
property of the commit and its parents alone, so it is read once per commit: the index holds
exactly the commits reachable from the tip it was last brought to, and each use extends it to
HEAD by reading only the commits since (their changed topic files, each file version split into
entries once, and only the entries whose text changed read for their Id: format/versions.py).
When HEAD moved backwards or sideways (reset, rebase, a fresh clone), the commits no longer
reachable are dropped and the ones not yet read are read. The graph kept beside (parents, time)
orders an entry's commits as the walk of history does; HEAD's first-parent line, numbered from the
root, finds the commit at a date without walking history. Deleting the file only costs the time to read history again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from gitmem.fsio import FileLock
from gitmem.git.graph import Graph, Node
from gitmem.git.repo import GitRepo
from gitmem.provenance.commitread import CommitReader
from gitmem.store.sqlitecache import open_cache

MEMORY_FOLDERS = ("global", "workspaces")
INDEX_FILE = "history.sqlite"
LOCK_FILE = "history.lock"
SCHEMA_VERSION = "4"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS commits (
    oid TEXT PRIMARY KEY, seq INTEGER NOT NULL, time INTEGER NOT NULL, eff INTEGER NOT NULL,
    first_parent TEXT, parents TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS commits_seq ON commits (seq);
CREATE TABLE IF NOT EXISTS changes (
    id TEXT NOT NULL, oid TEXT NOT NULL, paths TEXT NOT NULL, PRIMARY KEY (id, oid)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS changes_oid ON changes (oid);
CREATE TABLE IF NOT EXISTS line (depth INTEGER PRIMARY KEY, oid TEXT NOT NULL, time INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS line_oid ON line (oid);
"""
_TABLES = ("meta", "commits", "changes", "line")
BATCH = 2_000  # commits read between two transactions: what a killed reading loses at most
_LOCK_POLL = 0.05  # seconds between two looks at the lock another process holds

Row = tuple[str, int, int, int, str | None, str]  # oid, seq, time, eff, first parent, parents
Progress = Callable[[int, int], None]  # (commits read, commits to read)


class HistoryIndex:
    """The commits that changed each entry, for the history reachable from HEAD."""

    def __init__(self, git: GitRepo, progress: Progress | None = None, batch: int = BATCH) -> None:
        self.graph: Graph = git.commit_graph(MEMORY_FOLDERS)
        self.path = git.root / "state" / INDEX_FILE
        self.db = open_cache(self.path, _SCHEMA, SCHEMA_VERSION, _TABLES)
        self.progress = progress
        self.batch = batch
        self._reader = CommitReader(self.graph)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> HistoryIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- answers -----------------------------------------------------------------------------
    def commits_changing(self, entry_id: str) -> list[str]:
        """The commits reachable from HEAD that changed the entry, in the walk's order (newest
        first by commit time, never a parent before its child)."""
        self.update()
        rows = self.db.execute("SELECT c.oid FROM changes AS ch JOIN commits AS c ON c.oid = ch.oid "
                               "WHERE ch.id = ? ORDER BY c.eff DESC, c.seq DESC", (entry_id,))
        return [str(oid) for (oid,) in rows]

    def paths_of(self, entry_id: str) -> list[str]:
        """Every file the entry ever lived in (in the history reachable from the tip): a commit
        that put it into a file is one that changed it there."""
        rows = self.db.execute("SELECT paths FROM changes WHERE id = ?", (entry_id,))
        return sorted({path for (paths,) in rows for path in str(paths).split("\n") if path})

    def commit_before(self, when: int) -> str | None:
        """The newest commit on HEAD's first-parent line committed at or before `when` (epoch)."""
        head = self.update()
        if head is None:
            return None
        row = self.db.execute("SELECT oid FROM line WHERE time <= ? ORDER BY depth DESC LIMIT 1",
                              (when,)).fetchone()
        return None if row is None else str(row[0])

    def tip(self) -> str | None:
        """The commit the index was last brought to."""
        row = self.db.execute("SELECT value FROM meta WHERE key='tip'").fetchone()
        return None if row is None else str(row[0])

    # -- bringing it to HEAD -----------------------------------------------------------------
    def update(self) -> str | None:
        """Extend (or cut back) the index to HEAD; returns HEAD. One process at a time reads
        history into it (state/history.lock); the others wait for it, then find it current."""
        head = self.graph.head()
        if self.tip() == head and self._meta("building") is None:
            return head
        with self._locked():
            self._drop_unfinished(head)
            tip = self.tip()
            if tip == head:
                return head
            if tip is not None and not self.graph.has_commit(tip):
                tip = None  # a history this repository does not hold: read it all again
            gone: list[str] = []
            if tip is not None and head is not None and not self.graph.is_ancestor(tip, head):
                gone = [n.oid for n in self.graph.commits(tip, hide=head)]
            new = [] if head is None else list(self.graph.commits(head, hide=tip))
            if head is None or gone or len(new) <= self.batch:
                self._store_at_once(tip, head, gone, new)
            else:
                self._store_in_batches(tip, head, new)
        return head

    @contextmanager
    def _locked(self) -> Iterator[None]:
        lock = FileLock(self.path.with_name(LOCK_FILE))
        try:
            while not lock.try_acquire():
                time.sleep(_LOCK_POLL)
            yield
        finally:
            lock.release()

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _drop_unfinished(self, head: str | None) -> None:
        """A reading toward another HEAD that was cut short (a killed process): what it stored
        (the commits numbered above `base`) goes, leaving the index as its tip left it."""
        building = self._meta("building")
        if building is None or building == head:
            return
        base = int(self._meta("base") or 0)
        with self._transaction():
            self.db.execute("DELETE FROM changes WHERE oid IN (SELECT oid FROM commits WHERE seq > ?)", (base,))
            self.db.execute("DELETE FROM commits WHERE seq > ?", (base,))
            self.db.execute("DELETE FROM meta WHERE key IN ('building', 'base')")

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def _store_at_once(self, tip: str | None, head: str | None, gone: list[str], new: list[Node]) -> None:
        """Read the new commits, then write them with what left, in one transaction."""
        top = self._top()
        changed = [pair for start in range(0, len(new), self.batch)
                   for pair in self._read(new[start:start + self.batch], len(new), start)]
        with self._transaction():
            if tip is None or head is None:
                self._clear()
            self._drop(gone)
            self._add(changed, top + len(new))
            self._finish(head, new)

    def _store_in_batches(self, tip: str | None, head: str, new: list[Node]) -> None:
        """Many commits to read (a first use, a fresh clone): oldest first, a transaction per
        BATCH, so a killed process loses one batch and the next use goes on from there."""
        if self._meta("building") is None:
            with self._transaction():
                if tip is None:
                    self._clear()
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('building', ?)", (head,))
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('base', ?)", (str(self._top()),))
        base = int(self._meta("base") or 0)
        done = {str(oid) for (oid,) in self.db.execute("SELECT oid FROM commits WHERE seq > ?", (base,))}
        todo = len(new) - len(done)
        read = 0
        stop = len(new)
        while stop > 0:  # positions [start, stop) of the walk's order, children first
            start = max(0, stop - self.batch)
            batch = [node for node in new[start:stop] if node.oid not in done]
            if batch:
                changed = self._read(batch, todo, read)
                read += len(batch)
                with self._transaction():
                    self._add(changed, base + len(new) - start, [n.oid for n in new[start:stop]])
            stop = start
        with self._transaction():
            self._finish(head, new)

    def _read(self, nodes: list[Node], total: int, before: int = 0) -> list[tuple[Node, dict[str, set[str]]]]:
        """What each commit changed, saying how far the reading got (at most once a commit)."""
        out = []
        for count, (node, ids) in enumerate(zip(nodes, self._reader.changed_many(nodes), strict=True),
                                            start=before + 1):
            out.append((node, ids))
            if self.progress is not None:
                self.progress(count, total)
        return out

    def _top(self) -> int:
        return int(self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM commits").fetchone()[0])

    def _clear(self) -> None:
        for table in ("commits", "changes", "line"):
            self.db.execute(f"DELETE FROM {table}")  # noqa: S608 - the table names are ours
        self.db.execute("DELETE FROM meta WHERE key='tip'")

    def _finish(self, head: str | None, new: list[Node]) -> None:
        """The first-parent line and the tip, once every new commit is in."""
        self._follow_line(head, {node.oid: node for node in new})
        if head is None:
            self.db.execute("DELETE FROM meta WHERE key='tip'")
        else:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('tip', ?)", (head,))
        self.db.execute("DELETE FROM meta WHERE key IN ('building', 'base')")

    def _follow_line(self, head: str | None, new: dict[str, Node]) -> None:
        """Keep HEAD's first-parent line, numbered from the root: follow it down from HEAD to
        the first commit already on the kept line, and replace what stood above that one."""
        chain: list[tuple[str, int]] = []
        base, oid = -1, head
        while oid is not None:
            row = self.db.execute("SELECT depth FROM line WHERE oid = ?", (oid,)).fetchone()
            if row is not None:
                base = int(row[0])
                break
            node = new.get(oid)
            if node is not None:
                chain.append((oid, node.time))
                oid = node.parents[0] if node.parents else None
                continue
            found = self.db.execute("SELECT time, first_parent FROM commits WHERE oid = ?", (oid,)).fetchone()
            if found is None:
                break
            chain.append((oid, int(found[0])))
            oid = found[1]
        self.db.execute("DELETE FROM line WHERE depth > ?", (base,))
        self.db.executemany("INSERT INTO line VALUES (?, ?, ?)",
                            ((base + 1 + n, oid, when) for n, (oid, when) in enumerate(reversed(chain))))

    def _drop(self, gone: list[str]) -> None:
        """Forget commits no longer reachable; effective times they lowered are worked out again."""
        if not gone:
            return
        self.db.executemany("DELETE FROM commits WHERE oid = ?", ((oid,) for oid in gone))
        self.db.executemany("DELETE FROM changes WHERE oid = ?", ((oid,) for oid in gone))
        if self.db.execute("SELECT 1 FROM commits WHERE eff < time LIMIT 1").fetchone():
            self._recompute_eff()

    def _add(self, changed: list[tuple[Node, dict[str, set[str]]]], first_seq: int,
             order: list[str] | None = None) -> None:
        """Insert commits (children before parents) numbered down from `first_seq`; `order`,
        the oids of a whole batch, numbers them by their place in it (some may be in already)."""
        place = {oid: n for n, oid in enumerate(order or [node.oid for node, _ids in changed])}
        eff = {node.oid: node.time for node, _ids in changed}
        lowered: dict[str, int] = {}
        rows: list[Row] = []
        for node, _ids in changed:
            for parent in node.parents:
                target = eff if parent in eff else lowered
                target[parent] = min(target.get(parent, eff[node.oid]), eff[node.oid])
            rows.append((node.oid, first_seq - place[node.oid], node.time, eff[node.oid],
                         node.parents[0] if node.parents else None, " ".join(node.parents)))
        self.db.executemany("INSERT OR REPLACE INTO changes VALUES (?, ?, ?)",
                            ((entry_id, node.oid, "\n".join(sorted(paths)))
                             for node, ids in changed for entry_id, paths in sorted(ids.items())))
        self.db.executemany("INSERT OR REPLACE INTO commits VALUES (?, ?, ?, ?, ?, ?)", rows)
        self._lower(lowered)

    def _lower(self, lowered: dict[str, int]) -> None:
        """Indexed commits whose new child was committed earlier than they were (a clock set
        wrong): the walk shows them after that child, and their ancestors likewise."""
        queue = list(lowered.items())
        while queue:
            oid, when = queue.pop()
            row = self.db.execute("SELECT eff, parents FROM commits WHERE oid = ?", (oid,)).fetchone()
            if row is None or row[0] <= when:
                continue
            self.db.execute("UPDATE commits SET eff = ? WHERE oid = ?", (when, oid))
            queue += [(parent, when) for parent in str(row[1]).split()]

    def _recompute_eff(self) -> None:
        """Every commit's effective time from its own time and its children's, children first."""
        rows = self.db.execute("SELECT oid, time, parents FROM commits ORDER BY seq DESC").fetchall()
        eff = {str(oid): int(time) for oid, time, _parents in rows}
        for oid, _time, parents in rows:
            for parent in str(parents).split():
                if parent in eff:
                    eff[parent] = min(eff[parent], eff[oid])
        self.db.executemany("UPDATE commits SET eff = ? WHERE oid = ?", ((e, o) for o, e in eff.items()))
