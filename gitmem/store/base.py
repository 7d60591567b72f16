"""The store's state and file access: root, git repository, catalog, memory.json, the lock, and
atomic writes of memory files. The operations built on them are in store.py."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from gitmem import caller
from gitmem.errors import (
    GitmemError,
    InvalidInputError,
    ReadOnlyStoreError,
    StoreStateError,
    UnsafePathError,
)
from gitmem.format.conflicts import keep_blocks
from gitmem.format.entry import Entry, TopicFile
from gitmem.format.markdown import append_entry_text, render_topic_file
from gitmem.format.normalize import Problem
from gitmem.fsio import (
    read_regular_file,
    read_text,
    refuse_link,
    remove_empty_folders,
    write_bytes_atomic,
    write_text_atomic,
)
from gitmem.store import aftercall, gitgate, journal, tree
from gitmem.store.catalog import Catalog, MemoryCatalog
from gitmem.store.lastgood import Parse, StandIn, T, read_json_file
from gitmem.store.lock import store_lock, store_lock_if_free
from gitmem.store.paths import locate_root, missing_store_message
from gitmem.store.registry import Registry, default_registry, parse_registry
from gitmem.store.txn import WriteTxn

if TYPE_CHECKING:
    from gitmem.git.repo import GitRepo
    from gitmem.search.index import SearchIndex
    from gitmem.store.summaries import Summaries


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
        self.cwd = Path(caller.absolute(str(cwd or caller.cwd())))
        self.root, self.root_source = locate_root(root, self.cwd)
        self.workspace_flag = workspace
        self.clock = clock or caller.now
        self._git: GitRepo | None = None
        self._catalog: Catalog | None = None
        self._registry: Registry | None = None
        self._search_index: SearchIndex | None = None
        self._summaries: Summaries | None = None
        self._lock_depth = 0
        self._locked_at = 0.0  # when this object took the store lock (time.time())
        self.read_only = False  # set when a read found the store not writable for this user
        self.behind_writer = False  # a read while another holds the store lock: nothing updated
        self.notes: list[str] = []  # one-line notes for the person (e.g. the index lags behind)
        # Uncommitted hand edits this write leaves out (files gitmem cannot parse, memory
        # files with an error): path -> the first problem. A write into one is refused.
        self.held: dict[str, Problem] = {}
        # Store JSON files that do not parse, read from git's last good version (lastgood.py).
        self.stand_ins: dict[str, StandIn] = {}
        # A line the commits end their message with while set (verbs/routed.py: where a write went).
        self.commit_trailer = ""

    # -- lifecycle ---------------------------------------------------------------------------
    def exists(self) -> bool:
        return (self.root / "memory.json").is_file() and (self.root / ".git").exists()

    def require(self) -> None:
        """StoreStateError when there is no store here. Every gitmem command comes through
        here first: a git index lock a killed gitmem left is removed at once (gitgate)."""
        if not self.exists():
            raise StoreStateError(missing_store_message(self.root, self.root_source, self.cwd))
        if not self.read_only and (self.root / ".git").is_dir():
            gitgate.clear_orphaned_index_lock(self.root, self.root / ".git")

    @property
    def git(self) -> GitRepo:
        if self._git is None:
            from gitmem.git.repo import GitRepo

            self.require()
            self.wire_git(GitRepo(self.root, token_file=self.root / "state" / "git-token"))
        assert self._git is not None
        return self._git

    def wire_git(self, repo: GitRepo) -> None:
        """Use `repo` as this store's repository, its hooks calling back into the store."""
        repo.before_write = self._before_git_write
        repo.after_head_move = lambda: gitgate.note_head_moved(self.root)
        repo.index_write_later = lambda step, root=self.root: aftercall.later(root, step)
        self._git = repo

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            self._catalog = self._open_catalog()
        return self._catalog

    def _open_catalog(self) -> Catalog:
        """state/catalog.sqlite; for a reader who cannot write it, a catalog in memory."""
        import sqlite3

        if self.read_only:
            return MemoryCatalog(self.root)
        refuse_link(self.root, "state/catalog.sqlite")
        try:
            return Catalog(self.root)
        except (PermissionError, sqlite3.OperationalError) as exc:
            if not isinstance(exc, PermissionError) and "readonly" not in str(exc) \
                    and "unable to open" not in str(exc):
                raise
            if self._lock_depth:
                raise ReadOnlyStoreError(self.root, f"state/catalog.sqlite: {exc}") from None
            self.read_only = True
            return MemoryCatalog(self.root)

    @property
    def summaries(self) -> Summaries:
        """Stat-checked summaries of the topic files, kept beside the catalog."""
        from gitmem.store.summaries import Summaries

        db = self.catalog.db
        if self._summaries is None or self._summaries.db is not db:
            self._summaries = Summaries(db, self.root)
        return self._summaries

    @property
    def registry(self) -> Registry:
        if self._registry is None:
            self._registry = self.read_json("memory.json", parse_registry, default_registry)
        return self._registry

    def read_json(self, relpath: str, parse: Parse[T], empty: Callable[[], T]) -> T:
        """A JSON file of the store, parsed; when it does not parse, git's last good version,
        noted once in `notes` and kept in `stand_ins` (`status` and `check` report it)."""
        value, stand_in = read_json_file(self.root, self._git_if_any, relpath, parse, empty)
        if stand_in is None:
            self.stand_ins.pop(relpath, None)
        elif self.stand_ins.get(relpath) != stand_in:
            self.stand_ins[relpath] = stand_in
            self.notes.append(stand_in.note())
        return value

    def refuse_stand_in(self, relpath: str) -> None:
        """A write into a file that does not parse is refused until it is fixed."""
        stand_in = self.stand_ins.get(relpath)
        if stand_in is not None:
            raise InvalidInputError(f"refused: {stand_in.problem}; fix it by hand or restore it with "
                                    f"git first (gitmem never writes over it); nothing changed")

    def _git_if_any(self) -> GitRepo | None:
        if not (self.root / ".git").exists():
            return None
        try:
            return self.git
        except GitmemError:
            return None

    def reload(self) -> None:
        """Forget memory.json as last read and the notes left for the last caller: a process
        that keeps the store open (`gitmem mcp`) calls this between two requests."""
        self._registry = None
        self.notes.clear()
        self.stand_ins.clear()

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

    def refresh_system_doc(self, txn: WriteTxn) -> None:
        """SYSTEM.md follows every write: its holdings table is rendered from the catalog, so it
        changes (and joins the write's commit) only when the counts or the settings did."""
        path = self.path("SYSTEM.md")
        if path.is_symlink() or (path.exists() and not path.is_file()):
            self.notes.append("SYSTEM.md is not a regular file: left as it is")
            return
        # No fsync: the file is rendered again by the next write should a power cut lose it.
        self.write_file(txn, "SYSTEM.md", self.render_system_doc(), durable=False)

    def render_system_doc(self) -> str:
        from gitmem.store.system_doc import render_system_doc, tier_counts

        return render_system_doc(self.registry, self.catalog.counts(),
                                 tier_counts(tree.scope_keys(self.root), self.read_bytes))

    def read_bytes(self, relpath: str) -> bytes | None:
        """A file of the working tree (None when absent or not a regular file)."""
        try:
            return read_regular_file(self.path(relpath))
        except OSError:
            return None

    def write_file(self, txn: WriteTxn, relpath: str, text: str, *, settling: bool = False,
                   durable: bool = True) -> bool:
        """Write atomically when the content differs; returns whether it changed. A conflict
        block in the file is kept byte for byte or the write is refused, unless the write is
        `settling` it (gitmem resolve). `durable=False` skips the fsync, for a generated file
        the next write renders again if a power cut loses it."""
        if not self._differs(relpath, text, settling=settling):
            return False
        self._journal(txn, [relpath])
        write_text_atomic(self.path(relpath), text, durable=durable)
        txn.note(relpath)
        return True

    def _differs(self, relpath: str, text: str, *, settling: bool = False) -> bool:
        """Whether `text` changes the file (refused as write_file says when it may not)."""
        self.refuse_held(relpath)
        if "\x00" in text:  # from any field of any verb: a file holding one is no text file
            raise InvalidInputError(f"refused: a NUL character would be written into {relpath}: "
                                    "memory files are text; nothing was written")
        try:
            old = read_text(self.path(relpath))
        except FileNotFoundError:
            return True
        if old != text and not settling:
            keep_blocks(relpath, old, text)
        return old != text

    def remove_file(self, txn: WriteTxn, relpath: str) -> bool:
        """Delete a memory file (its removal is committed with the write); False when absent.
        A file holding a conflict block is never removed this way."""
        refuse_link(self.root, relpath)
        self.refuse_held(relpath)
        try:
            old = read_text(self.path(relpath))
        except FileNotFoundError:
            return False
        keep_blocks(relpath, old, "")
        self._journal(txn, [relpath])
        self.path(relpath).unlink()
        txn.note(relpath)
        return True

    def refuse_held(self, relpath: str) -> None:
        """A write into a file holding an uncommitted hand edit gitmem cannot commit is refused
        before anything changes, naming what is wrong with it."""
        problem = self.held.get(relpath)
        if problem is not None:
            raise InvalidInputError(f"{problem} — this uncommitted hand edit cannot be committed, "
                                    "so nothing was written; fix it (`gitmem check` lists every "
                                    "problem) and retry")

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

    def write_topics(self, txn: WriteTxn, topics: dict[str, TopicFile]) -> list[str]:
        """Topic files as write_topic writes each, every one checked before the first changes
        and all announced in one journal write (not one per file); those that changed."""
        texts = {relpath: render_topic_file(topic) for relpath, topic in topics.items()}
        changed = [relpath for relpath, text in texts.items() if self._differs(relpath, text)]
        if changed:
            self._journal(txn, changed)
        for relpath in changed:
            write_text_atomic(self.path(relpath), texts[relpath])
            txn.note(relpath)
            txn.parsed[relpath] = topics[relpath]
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
            self._locked_at = time.time()
            self._registry = None  # another process may have changed it while we waited
            try:
                yield
            finally:
                self._lock_depth = 0

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """The lock for a read that updates derived data (the catalog), when it is free: a
        read never waits for a write or a sync. While one holds the lock, the read answers from
        the catalog as the last finished call left it (`behind_writer`), changing nothing. A
        store this user cannot write is read without it, from a catalog in memory."""
        stack = contextlib.ExitStack()
        if not self._lock_depth and not self.read_only:
            try:
                free = stack.enter_context(store_lock_if_free(self.root))
            except (ReadOnlyStoreError, UnsafePathError):  # state/ not writable, or a link
                self.read_only = True
                if self._catalog is not None and not isinstance(self._catalog, MemoryCatalog):
                    self._catalog.close()
                    self._catalog = None
            else:
                if free:
                    stack.enter_context(self._held())
                else:
                    self.behind_writer = True
                    stack.callback(setattr, self, "behind_writer", False)
        with stack:
            yield

    @contextlib.contextmanager
    def _held(self) -> Iterator[None]:
        """The store lock, just taken by this object: as locked() marks it."""
        self._lock_depth = 1
        self._locked_at = time.time()
        self._registry = None  # another process may have changed it since it was read
        try:
            yield
        finally:
            self._lock_depth = 0

    def _before_git_write(self, head_moves_next: bool) -> bool:
        """Before gitmem writes to the repository: no plain git command that moves HEAD runs, no
        stale lock file is left (just before HEAD moves, only the first). True: it waited."""
        if not self._lock_depth:
            return False
        # Before staging, the announced commits (cheap); just before HEAD moves, every git process.
        waited = gitgate.wait_for_plain_git(self.root, self.git.git_dir, processes=head_moves_next)
        if not head_moves_next:
            self.clear_stale_git_locks()
        return waited

    def clear_stale_git_locks(self) -> None:
        """Remove git lock files left by killed processes (under the store lock only)."""
        if self._lock_depth:
            gitgate.clear_stale_locks(self.root, self.git.git_dir, self._locked_at)

    def _journal(self, txn: WriteTxn, relpaths: list[str]) -> None:
        """Record, before the first byte changes, which files this verb is about to write, and
        keep what each file held (see undo)."""
        for relpath in relpaths:
            if relpath not in txn.originals:
                try:
                    txn.originals[relpath] = read_regular_file(self.path(relpath))
                except FileNotFoundError:
                    txn.originals[relpath] = None
        journal.record(self.root, txn.verb, list(dict.fromkeys([*txn.touched, *relpaths])))

    def undo(self, txn: WriteTxn) -> None:
        """Put back every file a refused write changed: it leaves no file, commit or index entry."""
        for relpath, data in txn.originals.items():
            target = self.path(relpath)
            if data is None:
                target.unlink(missing_ok=True)
                remove_empty_folders(self.root, target.parent)  # those a refused write made
            else:
                write_bytes_atomic(target, data)
        self._registry = None
        self.catalog.refresh(sorted(txn.originals), lambda p: tree.read_lenient(self.root, p))
        self._clear_journal()

    def _clear_journal(self) -> None:
        journal.clear(self.root)

