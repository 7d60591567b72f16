"""The store's state and file access: root, git repository, catalog, memory.json, the lock, and
atomic writes of memory files. The operations built on them are in store.py."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from gitmem.errors import StoreStateError
from gitmem.format.conflicts import keep_blocks
from gitmem.format.entry import Entry, TopicFile
from gitmem.format.markdown import append_entry_text, render_topic_file
from gitmem.fsio import read_text, store_lock, write_text_atomic
from gitmem.store import journal, tree
from gitmem.store.catalog import Catalog
from gitmem.store.paths import resolve_root
from gitmem.store.registry import Registry, load_registry
from gitmem.store.txn import WriteTxn

if TYPE_CHECKING:
    from gitmem.git.repo import GitRepo
    from gitmem.search.index import SearchIndex


class StoreBase:
    """A store's folder, its open git repository, catalog and registry, and its files."""

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        workspace: str | None = None,
        cwd: Path | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.root = resolve_root(root)
        self.workspace_flag = workspace
        self.cwd = (cwd or Path.cwd()).absolute()
        self.clock = clock or datetime.now
        self._git: GitRepo | None = None
        self._catalog: Catalog | None = None
        self._registry: Registry | None = None
        self._search_index: SearchIndex | None = None
        self._lock_depth = 0

    # -- lifecycle ---------------------------------------------------------------------------
    def exists(self) -> bool:
        return (self.root / "memory.json").is_file() and (self.root / ".git").exists()

    def require(self) -> None:
        if not self.exists():
            raise StoreStateError(f"no gitmem store at {self.root}: run `gitmem init` first")

    @property
    def git(self) -> GitRepo:
        if self._git is None:
            from gitmem.git.repo import GitRepo

            self.require()
            self._git = GitRepo(self.root, token_file=self.root / "state" / "git-token")
        return self._git

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            self._catalog = Catalog(self.root)
        return self._catalog

    @property
    def registry(self) -> Registry:
        if self._registry is None:
            self._registry = load_registry(self.root)
        return self._registry

    def close(self) -> None:
        if self._catalog is not None:
            self._catalog.close()
            self._catalog = None
        if self._search_index is not None:
            self._search_index.close()
            self._search_index = None

    def now(self) -> datetime:
        return self.clock()

    def today(self) -> date:
        return self.now().date()

    # -- reading and writing files -----------------------------------------------------------
    def path(self, relpath: str) -> Path:
        return self.root / relpath

    def read_file(self, relpath: str) -> TopicFile | None:
        """Parse a memory file; None when it does not exist, ParseError (`path:line: reason`)
        when it cannot be read (not a regular file, binary, not UTF-8, broken frontmatter)."""
        return tree.read_topic(self.root, relpath)

    def write_file(self, txn: WriteTxn, relpath: str, text: str, *, settling: bool = False) -> bool:
        """Write atomically when the content differs; returns whether it changed.

        A conflict block in the file is kept byte for byte or the write is refused, unless the
        write is `settling` it (gitmem resolve)."""
        target = self.path(relpath)
        try:
            old = read_text(target)
            if old == text:
                return False
            if not settling:
                keep_blocks(relpath, old, text)
        except FileNotFoundError:
            pass
        self._journal(txn, relpath)
        write_text_atomic(target, text)
        txn.note(relpath)
        return True

    def append_entry(self, txn: WriteTxn, relpath: str, entry: Entry) -> bool:
        """Append an entry to an existing topic file without parsing it; False when there is no
        such file (or the catalog does not know it) and the caller must build the file."""
        try:
            text = tree.read_memory_text(self.root, relpath)
        except FileNotFoundError:
            return False
        if not self.catalog.has_file(relpath) or self.catalog.problems(relpath):
            return False  # the parsing path reports what is wrong with the file
        self.write_file(txn, relpath, append_entry_text(text, entry))
        self.catalog.add_entry(relpath, entry)
        txn.cataloged.add(relpath)
        return True

    def write_topic(self, txn: WriteTxn, relpath: str, topic: TopicFile) -> bool:
        changed = self.write_file(txn, relpath, render_topic_file(topic))
        if changed:
            txn.parsed[relpath] = topic
        return changed

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """The store-wide lock, re-entrant within this object."""
        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        with store_lock(self.root):
            self._lock_depth = 1
            self._registry = None  # another process may have changed it while we waited
            try:
                yield
            finally:
                self._lock_depth = 0

    def _journal(self, txn: WriteTxn, relpath: str) -> None:
        """Record, before the first byte changes, which files this verb is about to write."""
        journal.record(self.root, txn.verb, [*txn.touched, relpath])

    def _clear_journal(self) -> None:
        journal.clear(self.root)
