"""The store: the library object behind every verb. Each write = lock, absorb hand edits, change
files atomically, regenerate layer indexes, commit once, update the search index."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem.errors import InvalidInputError, NotFoundError
from gitmem.eventlog import log_event
from gitmem.format import layers as L
from gitmem.format.entry import TopicFile
from gitmem.format.idmarks import MARKS_PATH
from gitmem.format.normalize import Outcome, Problem
from gitmem.fsio import json_text, read_regular_text, read_text, sweep_temp
from gitmem.observe.record import record
from gitmem.resources import read_text as read_resource
from gitmem.store import absorb, catchup, generated, gitgate, handedits, journal, marks, tree
from gitmem.store.aftercall import later as after_the_answer
from gitmem.store.base import StoreBase
from gitmem.store.registry import Registry, save_registry
from gitmem.store.txn import Located, WriteTxn, commit_message, last_look, refuse_subagent
from gitmem.store.warm import enabled as kept_warm

if TYPE_CHECKING:
    from gitmem.search.index import SearchIndex

__all__ = ["Located", "Store", "WriteTxn", "open_store", "refuse_subagent"]


class Store(StoreBase):
    """A gitmem store rooted at a folder: the write transaction, hand edits, lookups, init."""

    # The open batch, when writes are being gathered into one commit (see `batch`).
    _batch: WriteTxn | None = None
    _batch_stamps: dict[str, str] | None = None
    _look: object = None  # set inside catchup.one_look(): the catalog is caught up already
    changes: catchup.Look | None = None  # what this store's last catch-up found changed
    _seen_clean = False  # the last absorb_hand_edits found `git status` empty

    # -- the write transaction ---------------------------------------------------------------
    @contextlib.contextmanager
    def writing(self, verb: str, *, absorb: bool = True,
                allow_secret: bool | None = None) -> Iterator[WriteTxn]:
        """One logical write: everything changed inside becomes exactly one commit, and none
        that adds a likely secret to a file unless `allow_secret` (the verb's --allow-secret).

        Inside `batch()` it joins the batch's transaction instead: no commit of its own.
        """
        refuse_subagent(verb)
        if self._batch is not None:
            if allow_secret:
                self._batch.allow_secret = True
            with self._joined(self._batch):
                yield self._batch
            return
        self.require()
        gitgate.refuse_off_branch(self.git.git_dir, verb)
        self._look = None  # a write (and every read after it) catches up for itself
        with self.locked():
            _ = self.registry  # a broken memory.json: git's last good one, a write into it refused
            self.held = {}
            self.recover_interrupted()
            self.ignore_temp_files()
            # A tree found clean a moment ago under the lock needs no second status walk.
            clean = absorb and not self.absorb_hand_edits() and self._seen_clean
            txn = WriteTxn(verb, changed_elsewhere=self.catch_up_catalog(clean=clean),
                           allow_secret=allow_secret)
            try:
                yield txn
                last_look(self.root, txn, self._committed_text)
            except Exception:
                self.undo(txn)
                raise
            self.finish(txn)

    def _committed_text(self, relpath: str) -> str | None:
        data = self.git.read_file_at("HEAD", relpath)
        return None if data is None else data.decode("utf-8", "replace")

    @contextlib.contextmanager
    def batch(self, verb: str) -> Iterator[WriteTxn]:
        """Many writes, one commit: every `writing()` inside joins this transaction.

        For bursts (a consolidation pass, a history ingest): each write still goes through its
        verb (dedup, ids, freshness), and the catalog is brought up to date after each one so the
        next sees its ids and text; the commit, layer indexes and search update happen once.
        """
        with self.writing(verb) as txn:
            self._batch, self._batch_stamps = txn, {}
            try:
                yield txn
            finally:
                self._batch, stamps = None, self._batch_stamps or {}
                self._batch_stamps = None
            # A file cataloged during the batch and rewritten since is read again by finish().
            txn.cataloged -= {p for p, stamp in stamps.items() if self._stamp(p) != stamp}

    @contextlib.contextmanager
    def _joined(self, txn: WriteTxn) -> Iterator[None]:
        """One write inside a batch; afterwards the catalog holds what it changed."""
        before = {relpath: self._stamp(relpath) for relpath in txn.touched}
        try:
            yield
        finally:
            changed = [p for p in txn.touched if before.get(p) != self._stamp(p)]
            self.settle(txn, changed, self._read_lenient)
            for relpath in changed:
                if self._batch_stamps is not None:
                    self._batch_stamps[relpath] = self._stamp(relpath)

    def settle(self, txn: WriteTxn, relpaths: list[str],
               read: Callable[[str], TopicFile | None] | None = None) -> None:
        """Catalog files this write has changed so far and drop their parsed copies: a long write
        holds only what it still needs (undo() puts the catalog back if the write fails)."""
        self.catalog.refresh(relpaths, read or (lambda p: txn.parsed.get(p) or self.read_file(p)))
        for relpath in relpaths:
            txn.parsed.pop(relpath, None)
            txn.cataloged.add(relpath)

    def _stamp(self, relpath: str) -> str:
        """A fingerprint of a file's bytes ('' when absent): did it change since?"""
        try:
            return hashlib.sha1(self.path(relpath).read_bytes()).hexdigest()
        except OSError:
            return ""

    def finish(self, txn: WriteTxn) -> str | None:
        """Regenerate layer indexes for what changed, commit, and refresh derived data."""
        if not txn.touched:
            self._clear_journal()
            return None

        def read(relpath: str) -> TopicFile | None:
            return txn.parsed.get(relpath) or self.read_file(relpath)

        self.catalog.refresh([p for p in txn.touched if p not in txn.cataloged], read)
        for relpath in self.regenerate_layer_indexes(txn.touched + txn.changed_elsewhere):
            txn.note(relpath)
        self.refresh_system_doc(txn)
        self.keep_marks(txn)
        message = commit_message(txn.message or f"{txn.verb}")
        if self.commit_trailer:
            message = f"{message.rstrip()}\n\n{self.commit_trailer}"
        oid = self.git.commit_paths(txn.touched, message)
        self.catalog.set_meta("head", self.git.head_oid())
        self._clear_journal()
        self.update_search_index(txn.touched)
        self.record_write(txn.verb, oid, txn.touched, message)
        return oid

    def keep_marks(self, txn: WriteTxn) -> None:
        """A number whose entry left the files stays handed out: ids.json, in this commit."""
        text = marks.wanted(self.catalog, self.marks_text())
        if text is not None and MARKS_PATH not in self.held and MARKS_PATH not in self.stand_ins:
            self.write_file(txn, MARKS_PATH, text)

    def record_write(self, verb: str, oid: str | None, paths: list[str], message: str) -> None:
        """Every commit the store makes is logged, counted and shown by `gitmem log` from here."""
        if oid is None:
            return  # nothing was committed: nothing was written
        summary = message.split("\n", 1)[0]
        record(self.root, "write", count=("writes",), activity=summary, verb=verb,
               commit=oid, files=len(paths), message=summary)

    def recover_interrupted(self) -> None:
        """Clear what a killed write left behind: its temp files, and its changes, which are
        committed under that write's own name (stale git lock files go in GitRepo.before_write)."""
        for relpath in sweep_temp(self.root):
            log_event(self.root, {"event": "temp-file-removed", "path": relpath})
        self.clear_stale_git_locks()
        found = journal.pending(self.root)
        if found is None:
            return
        verb, paths = found
        dirty = set(self.git.dirty_paths())
        paths = [p for p in paths if p in dirty]
        held = self.hold_back(paths)  # once: each call normalizes every path
        paths = [p for p in paths if p not in held]
        if paths:
            self.catalog.refresh(paths, self._read_lenient)
            paths += self.regenerate_layer_indexes(paths)
            message = f"{verb}: recovered after an interrupted write"
            self.record_write(verb, self.git.commit_paths(paths, message), paths, message)
        self._clear_journal()

    def ignore_temp_files(self) -> None:
        """A store made by an earlier version gets the .gitignore lines it lacks (temp files)."""
        try:
            current: str | None = read_regular_text(self.path(".gitignore"))
        except FileNotFoundError:
            current = None
        except (OSError, UnicodeDecodeError):  # not a file gitmem can add lines to: leave it
            self.notes.append(".gitignore is not a regular UTF-8 file: its lines were not checked")
            return
        text = generated.with_missing_lines(current, generated.GITIGNORE)
        if text is None:
            return
        txn = WriteTxn("gitignore")
        self.write_file(txn, ".gitignore", text)
        self.git.commit_paths([".gitignore"], "gitignore: temp files and derived folders")
        self._clear_journal()

    def absorb_hand_edits(self) -> list[str]:
        """Commit changes someone made by hand (normalized) before our own write; returns the
        committed paths. What cannot be committed is left out (see absorb.hold_back)."""
        return absorb.absorb_hand_edits(self)

    def hold_back(self, relpaths: list[str], outcomes: list[Outcome] | None = None) -> dict[str, Problem]:
        return absorb.hold_back(self, relpaths, outcomes)

    def normalize_paths(self, relpaths: list[str], *, fix: bool,
                        dates_from_history: bool = False, gate: bool = False) -> list[Outcome]:
        """Run the normalization rules over memory files in the working tree (`gate`: edits about
        to be committed); a file that cannot be read comes back as an outcome holding that error.
        `dates_from_history` dates entries by their first commit (check --fix)."""
        self.catch_up_catalog()
        texts, unreadable = tree.read_texts(self.root, [p for p in relpaths if L.is_memory_file(p)])
        created = handedits.created_lookup(self.root, texts) if dates_from_history else None
        return unreadable + handedits.normalize_texts(
            self.catalog, texts, today=self.today().isoformat(), fix=fix, created=created,
            committed=handedits.committed_reader(self.root) if gate else None)

    def normalize_texts(self, texts: dict[str, str], *, fix: bool,
                        gone: list[str] | None = None, gate: bool = False) -> list[Outcome]:
        """Normalize given texts (working-tree or staged copies), ids allocated consistently;
        `gone` are files deleted in the commit being made; `gate` as in normalize_paths.

        The caller brings the catalog up to date first (see catch_up_catalog_from).
        """
        committed = handedits.committed_reader(self.root) if gate else None
        return handedits.normalize_texts(self.catalog, texts, today=self.today().isoformat(), fix=fix,
                                         gone=gone or [], committed=committed)

    def _read_lenient(self, relpath: str) -> TopicFile | None:
        """Parse for the catalog: never fatal; an unreadable file carries its problem."""
        return tree.read_lenient(self.root, relpath)

    def catch_up_catalog(self, *, clean: bool = False) -> list[str]:
        """Bring the catalog up to HEAD, then to the working tree (files renamed, moved or edited
        by hand and not yet committed): re-read only files changed since it last looked.
        `clean`: the caller has just seen `git status` report nothing, under the store lock.

        Returns the topic files that changed underneath it (pulls, plain-git commits), so a
        write can regenerate their layer indexes too.
        """
        if self._look is not None or self.behind_writer:  # caught up at one_look's start, or
            return []  # a read while a writer holds the store: the catalog as it stands
        head = self.git.head_oid()
        changed = self.catch_up_catalog_from(head, self.git.changed_between)
        dirty = [] if clean else self.git.dirty_paths(under=L.SCOPE_ROOTS)
        stale = catchup.reconcile(self.catalog, self.root, dirty, self._read_lenient)
        topics = frozenset(p for p in dirty if L.classify_path(p).kind == "topic")
        self.changes = catchup.Look(head, topics, tuple(dict.fromkeys([*changed, *stale])))
        return changed

    def catch_up_catalog_from(self, head: str | None, changed_between: catchup.ChangedBetween) -> list[str]:
        """catch_up_catalog for a caller that knows HEAD and diffs commits itself (git hooks)."""
        changed = catchup.catch_up(self.catalog, head, changed_between, self.all_topic_files,
                                   self._read_lenient)
        marks.take_in(self.catalog, self.marks_text(), changed=bool(changed))
        return changed

    def marks_text(self) -> str | None:
        """ids.json as gitmem reads it: the file, or git's last good version when it does not parse."""
        return self.read_json(MARKS_PATH, marks.checked, lambda: None)

    def all_topic_files(self) -> list[str]:
        return tree.all_topic_files(self.root)

    def all_memory_files(self) -> list[str]:
        return tree.all_memory_files(self.root)

    def scope_keys(self) -> list[str]:
        return tree.scope_keys(self.root)

    def regenerate_layer_indexes(self, relpaths: list[str]) -> list[str]:
        """Rewrite the layer index of every layer these topic files belong to; returns changed paths."""
        return generated.regenerate_layer_indexes(self.root, self.catalog, relpaths, self.notes.append,
                                                  held=self.held)

    def update_search_index(self, relpaths: list[str]) -> None:
        """Keep an existing search index current for these files in the warm server (once the
        caller has its answer: store/aftercall.py) or a process that has it open. A one-shot
        process leaves it: the next search indexes every file whose stamp moved (~0.2 s saved)."""
        if self._search_index is None and not kept_warm():
            return
        index, paths = self.root / "index", list(relpaths)
        if index.is_dir() and not index.is_symlink() and not after_the_answer(
                self.root, lambda: self._update_search_index(paths)):
            self._update_search_index(paths)

    def _update_search_index(self, relpaths: list[str]) -> None:
        try:
            self.search_index().update_paths(relpaths)
        except Exception as exc:  # noqa: BLE001 - see the docstring
            reason = f"{type(exc).__name__}: {exc}"
            log_event(self.root, {"event": "index-update-failed", "error": reason})
            self.notes.append(f"the search index could not be updated ({reason}); "
                              "the next search brings it up to date")

    def search_index(self) -> SearchIndex:
        """The store's search index, kept open so later searches reuse its reader and manifest."""
        if self._search_index is None:
            from gitmem.search.guard import GuardedIndex

            self._search_index = GuardedIndex(self.root, note=self.notes.append)
        return self._search_index

    # -- init --------------------------------------------------------------------------------
    def init(self, *, branch: str = "main") -> bool:
        """Create the store (or adopt an existing repo); returns False when it already existed."""
        from gitmem.store.create import create

        return create(self, branch)

    # -- scopes and workspaces ---------------------------------------------------------------
    def ensure_scope(self, txn: WriteTxn, scope: str) -> None:
        """Create a scope's INDEX.md from its template once; never overwrite it."""
        relpath = f"{L.scope_dir(scope)}/INDEX.md"
        if self.path(relpath).exists():
            return
        template = read_resource("templates/INDEX.md")
        title = "Global memory" if scope == L.GLOBAL else f"Workspace {scope}"
        self.write_file(txn, relpath, template.replace("{{title}}", title))
        if scope != L.GLOBAL:
            meta = {"key": scope, "created": self.today().isoformat()}
            self.write_file(txn, f"{L.scope_dir(scope)}/meta.json", json.dumps(meta, indent=2) + "\n")

    def resolve_workspace(self, explicit: str | None = None, cwd: Path | None = None) -> str:
        from gitmem.store.workspaces import resolve_workspace_key

        flag = explicit if explicit is not None else self.workspace_flag
        return resolve_workspace_key(self.root, flag, cwd or self.cwd)

    def scope_for(self, scope: str, workspace: str | None = None) -> str:
        """'global' or the resolved workspace key."""
        if scope == "global" and not workspace:
            return L.GLOBAL
        if scope not in ("global", "workspace"):
            raise InvalidInputError(f"unknown scope {scope!r} (use global or workspace)")
        return self.resolve_workspace(workspace)

    def register_workspace(self, txn: WriteTxn, key: str, title: str | None = None) -> None:
        """Add the workspace to memory.json and create its folder on first use."""
        registry = self.registry
        record = registry.workspaces.get(key)
        wanted_title = title or (record or {}).get("title") or key
        if record is None or record.get("title") != wanted_title:
            registry.workspaces[key] = {**(record or {}), "title": wanted_title}
            self.save_registry(txn, registry)
        self.ensure_scope(txn, key)

    # -- lookups -----------------------------------------------------------------------------
    def locate(self, entry_id: str) -> Located:
        """Find an entry by id (catalog first, then the file)."""
        with self.reading():
            self.catch_up_catalog()
        paths = self.catalog.locate(entry_id)
        if not paths and L.parse_id(entry_id) is None:  # one written by hand is still found
            raise InvalidInputError(f"malformed Id {entry_id!r} (expected <scope>-<abbr>-<NNNN>)")
        for relpath in paths:
            topic = self.read_file(relpath)
            if topic is None:
                continue
            index = topic.find(entry_id)
            if index is not None:
                role = L.classify_path(relpath)
                return Located(topic.entries[index], relpath, role.scope, role.layer,
                               str(topic.meta.get("topic") or role.slug))
        raise NotFoundError(f"no entry with Id {entry_id}")

    def save_registry(self, txn: WriteTxn, registry: Registry) -> None:
        _ = self.registry
        self.refuse_stand_in("memory.json")
        before = self.path("memory.json")
        old = read_text(before) if before.exists() else ""
        _refuse_new_secrets(old, registry)
        self._journal(txn, ["memory.json"])
        save_registry(self.root, registry)
        if read_text(before) != old:
            txn.note("memory.json")
        self._registry = registry


def _refuse_new_secrets(old: str, registry: Registry) -> None:
    """memory.json is committed, and every verb that records a name, a description, a keyword,
    a route or a setting there goes through save_registry: a likely secret on a line it adds is
    refused before anything is written (one already there is not this write's doing)."""
    from gitmem.secrets.scan import added_lines, refusal, scan_lines

    found = scan_lines(added_lines(old, json_text(registry.data)), path="memory.json")
    if found:
        raise refusal(found, "", None)


def open_store(root: str | os.PathLike[str] | None = None, **kwargs: Any) -> Store:
    """Open an existing store, raising StoreStateError when there is none."""
    store = Store(root, **kwargs)
    store.require()
    return store
