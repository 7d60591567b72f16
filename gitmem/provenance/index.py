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

from collections import Counter
from collections.abc import Iterable

from gitmem.format.versions import (
    Signature,
    entry_signatures,
    frontmatter_raw,
    frontmatter_readable,
    signature_ids,
)
from gitmem.git.graph import FileChange, Graph, Node
from gitmem.git.repo import GitRepo
from gitmem.store.sqlitecache import open_cache

MEMORY_FOLDERS = ("global", "workspaces")
INDEX_FILE = "history.sqlite"
SCHEMA_VERSION = "3"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS commits (
    oid TEXT PRIMARY KEY, seq INTEGER NOT NULL, time INTEGER NOT NULL, eff INTEGER NOT NULL,
    first_parent TEXT, parents TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS changes (
    id TEXT NOT NULL, oid TEXT NOT NULL, paths TEXT NOT NULL, PRIMARY KEY (id, oid)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS changes_oid ON changes (oid);
CREATE TABLE IF NOT EXISTS line (depth INTEGER PRIMARY KEY, oid TEXT NOT NULL, time INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS line_oid ON line (oid);
"""
_TABLES = ("meta", "commits", "changes", "line")
_PARSED_KEPT = 20_000  # file versions whose entries are kept while reading history
_RETRIES = 3  # another process extended the index meanwhile: look again, this many times

Row = tuple[str, int, int, int, str | None, str]  # oid, seq, time, eff, first parent, parents


class HistoryIndex:
    """The commits that changed each entry, for the history reachable from HEAD."""

    def __init__(self, git: GitRepo) -> None:
        self.graph: Graph = git.commit_graph(MEMORY_FOLDERS)
        self.path = git.root / "state" / INDEX_FILE
        self.db = open_cache(self.path, _SCHEMA, SCHEMA_VERSION, _TABLES)
        self._parsed: dict[str, Counter[Signature]] = {}
        self._frontmatter: dict[str, bool] = {}

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
        """Extend (or cut back) the index to HEAD; returns HEAD."""
        head = self.graph.head()
        for _attempt in range(_RETRIES):
            seen = tip = self.tip()
            if tip == head:
                return head
            if tip is not None and not self.graph.has_commit(tip):
                tip = None  # a history this repository does not hold: read it all again
            gone: list[str] = []
            if tip is not None and head is not None and not self.graph.is_ancestor(tip, head):
                gone = [n.oid for n in self.graph.commits(tip, hide=head)]
            new = [] if head is None else list(self.graph.commits(head, hide=tip))
            changed = [(node, self._changed(node)) for node in new]
            if self._store(seen, tip, head, gone, changed):
                return head
        return head

    def _store(self, seen: str | None, tip: str | None, head: str | None, gone: list[str],
               changed: list[tuple[Node, dict[str, set[str]]]]) -> bool:
        """Write what was read, unless another process moved the index meanwhile."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            if self.tip() != seen:
                self.db.execute("ROLLBACK")
                return False
            if tip is None or head is None:
                self.db.execute("DELETE FROM commits")
                self.db.execute("DELETE FROM changes")
                self.db.execute("DELETE FROM line")
            self._drop(gone)
            self._add(changed)
            self._follow_line(head, {node.oid: node for node, _ids in changed})
            if head is None:
                self.db.execute("DELETE FROM meta WHERE key='tip'")
            else:
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('tip', ?)", (head,))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return True

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

    def _add(self, changed: list[tuple[Node, dict[str, set[str]]]]) -> None:
        """Insert new commits (children before parents) above every commit already indexed."""
        top = self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM commits").fetchone()[0]
        eff = {node.oid: node.time for node, _ids in changed}
        lowered: dict[str, int] = {}
        rows: list[Row] = []
        for position, (node, ids) in enumerate(changed):
            for parent in node.parents:
                target = eff if parent in eff else lowered
                target[parent] = min(target.get(parent, eff[node.oid]), eff[node.oid])
            rows.append((node.oid, top + len(changed) - position, node.time, eff[node.oid],
                         node.parents[0] if node.parents else None, " ".join(node.parents)))
            self.db.executemany("INSERT OR REPLACE INTO changes VALUES (?, ?, ?)",
                                ((entry_id, node.oid, "\n".join(sorted(paths)))
                                 for entry_id, paths in sorted(ids.items())))
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

    # -- what one commit changed -------------------------------------------------------------
    def _changed(self, node: Node) -> dict[str, set[str]]:
        """The ids whose entries differ from their state in every parent, each with the files
        (on either side of any parent) where its versions differ."""
        found: dict[str, set[str]] | None = None
        for files in self.graph.changes(node.oid):
            differing = self._differing(files)
            if found is None:
                found = differing
            else:
                found = {i: found[i] | differing[i] for i in found.keys() & differing.keys()}
            if not found:
                return {}
        return found or {}

    def _differing(self, files: Iterable[FileChange]) -> dict[str, set[str]]:
        """Ids of the entries whose versions differ across these changed files, with those files
        (an entry only reformatted is among them: trace.py, which reads the versions, passes
        over it)."""
        found: dict[str, set[str]] = {}
        for change in files:
            old = self._signatures(change.old_blob)
            new = self._signatures(change.new_blob)
            same_path = change.old_path == change.new_path
            for side, signatures in ((change.old_path, old - new if same_path else old),
                                     (change.new_path, new - old if same_path else new)):
                for signature in signatures:
                    for entry_id in signature_ids(signature):
                        found.setdefault(entry_id, set()).add(side or "")
        return found

    def _signatures(self, blob: str | None) -> Counter[Signature]:
        """The entry signatures of one file version (none when trace.py could not read it)."""
        if blob is None:
            return Counter()
        found = self._parsed.get(blob)
        if found is None:
            found = Counter()
            try:
                text = self.graph.blob(blob).decode("utf-8")
            except UnicodeDecodeError:
                text = None
            if text is not None and self._readable(frontmatter_raw(text)):
                found = Counter(entry_signatures(text))
            if len(self._parsed) >= _PARSED_KEPT:
                self._parsed.clear()
            self._parsed[blob] = found
        return found

    def _readable(self, frontmatter: str) -> bool:
        if not frontmatter:
            return True
        known = self._frontmatter.get(frontmatter)
        if known is None:
            known = self._frontmatter[frontmatter] = frontmatter_readable(frontmatter)
        return known
