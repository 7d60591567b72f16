"""The whoosh search index under `index/`: incremental updates, self-repair, ranked search.

Layout of `index/`:
- `manifest.json`   per-file stamp and hash, the current index folder and generation;
- `whoosh-<stamp>/` the whoosh index (a rebuild writes a new folder, then switches to it);
- `write.lock`      a file lock held by whoever writes the index (one writer at a time).
Readers never take the lock: they read the manifest and open the folder it names.

Each entry is one whoosh document. Its terms are indexed once, in the `terms` field, with a
precomputed BM25F weight (see rank.py); scoring reads those postings directly.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any

from whoosh.reading import SegmentReader

from gitmem import caller
from gitmem.errors import LockTimeoutError, SearchFault
from gitmem.eventlog import log_event
from gitmem.fsio import file_lock
from gitmem.redaction import redact
from gitmem.search import manifeststore
from gitmem.search.build import FOLDER_PREFIX, build_folder
from gitmem.search.cache import shared_cache
from gitmem.search.files import (
    BODY_STORE_CHARS,
    MANIFEST_NAME,
    FileRecord,
    Manifest,
    diff_files,
    diff_paths,
    doc_from_stored,
    indexable,
    merge_candidates,
    normalize_relpath,
    read_file,
    scan_memory_files,
)
from gitmem.search.hits import SearchHit
from gitmem.search.lookup import DocLookup
from gitmem.search.query import DEFAULT_LEVERS, Levers, understand
from gitmem.search.reader import SearchRequest, View
from gitmem.search.schema import (
    SCHEMA,
    IndexCodec,
    doc_fields,
    drop_dead_segments,
    index_present,
    open_index,
)
from gitmem.search.watch import ChangeWatcher
from gitmem.stamps import Stamp

__all__ = ["SCHEMA", "SearchHit", "SearchIndex"]

INDEX_DIR = "index"
LOCK_NAME = "write.lock"
WRITE_WAIT_SECONDS = 600.0  # a writer waits this long for another writer (a rebuild) to finish
SEARCH_WAIT_SECONDS = 2.0  # a search waits this long to index files changed behind its back
PARALLEL_MIN_FILES = 200  # smaller stores rebuild in this process alone
MAX_REBUILD_PROCS = 4


class SearchIndex:
    """The search index of one store root; lives in `root/index`."""

    def __init__(self, root: Path, *, watch: bool = True, folder: Path | None = None) -> None:
        """`watch=False` disables change notifications: every refresh stats every file;
        `folder`: where the index lives (default: root/index)."""
        self.root = Path(root)
        self.dir = folder or self.root / INDEX_DIR
        self._watch = watch
        self._watcher: ChangeWatcher | None = None  # created by the first refresh
        self._watching = False  # armed, and a full scan since then found the index in step
        self._pending: set[str] = set()  # changed files a busy writer kept us from indexing
        self._manifest_path = self.dir / MANIFEST_NAME
        self._manifest: Manifest | None = None
        self._loaded: manifeststore.Loaded | None = None  # the manifest as on disk, and where
        self._manifest_key: tuple[Stamp | None, int] | None = None  # its base and log end
        self._checked_key: tuple[Stamp | None, int] | None = None
        self._ix: Any = None
        self._view: View | None = None
        self._note: Callable[[str], None] = lambda _message: None  # a one-line note to the caller

    # -- state -------------------------------------------------------------------------------

    def exists(self) -> bool:
        """True when a readable manifest names an index folder that is present."""
        self._reload_manifest()
        return self._usable()

    def _usable(self) -> bool:
        """A manifest names an index folder holding a whoosh index (checked once per manifest)."""
        manifest = self._manifest
        if manifest is None:
            return False
        if self._checked_key != self._manifest_key:
            if not index_present(self.dir / manifest.folder):
                return False
            self._checked_key = self._manifest_key
        return True

    def _reload_manifest(self) -> None:
        self._adopt(manifeststore.reread(self._manifest_path, self._loaded))

    def _adopt(self, loaded: manifeststore.Loaded | None) -> None:
        key = None if loaded is None else (loaded.base, loaded.offset)
        if key is None or key != self._manifest_key:
            self._watching = False  # written by someone else: compare every file once
        self._loaded = loaded
        self._manifest = None if loaded is None else loaded.manifest
        self._manifest_key = key

    def _save_manifest(self, manifest: Manifest, changed: Iterable[str] | None = None) -> None:
        """Write the manifest (the lock held): a line of the `changed` paths' rows in its log
        when this index read it last, the whole of it when `changed` is None."""
        before = self._loaded if changed is not None else None
        loaded = manifeststore.save(self._manifest_path, manifest, before, set(changed or ()))
        self._loaded, self._manifest = loaded, loaded.manifest
        self._manifest_key = (loaded.base, loaded.offset)

    def _lock(self, timeout: float = WRITE_WAIT_SECONDS) -> contextlib.AbstractContextManager[None]:
        self.dir.mkdir(parents=True, exist_ok=True)
        return file_lock(self.dir / LOCK_NAME, timeout, "the search index writer lock")

    def unreadable(self) -> dict[str, str]:
        """Indexed paths that could not be read, with why (`path:line: reason`): skipped."""
        manifest = self._manifest
        return {p: r.error for p, r in manifest.files.items() if r.error} if manifest else {}

    def close(self) -> None:
        """Release the open reader (a later search reopens it); keeps watching for changes."""
        if self._view is not None:
            with contextlib.suppress(Exception):
                self._view.reader.close()
        self._view = None
        self._ix = None

    # -- writing -----------------------------------------------------------------------------

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Index every memory file from scratch into a fresh folder; returns entries indexed."""
        with self._lock():
            return self._rebuild_locked(progress)

    def _rebuild_locked(self, progress: Callable[[int, int], None] | None = None) -> int:
        paths = sorted(scan_memory_files(self.root))
        procs = min(os.cpu_count() or 1, MAX_REBUILD_PROCS)
        if len(paths) >= PARALLEL_MIN_FILES and procs > 1:
            try:
                return self._build_folder(paths, progress, procs)
            except Exception:  # noqa: BLE001 - a worker process failed: build in this process
                pass
        return self._build_folder(paths, progress, 1)

    def _build_folder(self, paths: list[str], progress: Callable[[int, int], None] | None,
                      procs: int) -> int:
        """Write a complete index of `paths` into a new folder, then switch the manifest to it."""
        built = build_folder(self.root, self.dir, paths, progress, procs)
        self._save_manifest(Manifest(folder=built.folder, generation=built.generation, files=built.files))
        self._remove_stale_folders(keep=built.folder)
        return built.count

    def _remove_stale_folders(self, keep: str) -> None:
        for item in self.dir.iterdir():
            if item.name.startswith(FOLDER_PREFIX) and item.name != keep and item.is_dir():
                shutil.rmtree(item, ignore_errors=True)

    def update_paths(self, relpaths: Iterable[str]) -> None:
        """Re-index just these files (a deleted file leaves the index); updates the manifest."""
        paths = [normalize_relpath(self.root, p) for p in relpaths]
        wanted = [p for p in dict.fromkeys(paths) if indexable(p)]
        if not wanted:
            return
        with self._lock():
            self._reload_manifest()
            if not self._usable():
                self._rebuild_locked()
            else:
                self._update_or_rebuild(wanted)

    def _update_or_rebuild(self, paths: list[str]) -> None:
        """Under the lock: update these paths; a damaged index is rebuilt instead."""
        try:
            self._update_locked(paths)
        except Exception:  # noqa: BLE001 - unreadable index files: start over, do not fail the write
            self.close()
            self._rebuild_locked()

    def _update_locked(self, paths: list[str]) -> None:
        manifest = self._manifest
        assert manifest is not None
        ix = open_index(self.dir / manifest.folder)
        writer = ix.writer(codec=IndexCodec())
        files = dict(manifest.files)
        segment = writer.get_segment().segment_id()
        lookup = DocLookup(writer, files, self._view,
                           lambda seg: SegmentReader(writer.storage, writer.schema, seg),
                           in_step=ix.latest_generation() == manifest.generation)
        try:
            for relpath in paths:
                for docnum in lookup.docnums(relpath):
                    writer.delete_document(docnum)
                self._index_file(writer, relpath, files, segment)
            carried = merge_candidates(writer.segments, files, set(paths))
            for relpath in carried:
                self._carry_over(writer, lookup, relpath, files, segment)
            writer.commit(mergetype=drop_dead_segments)
        except BaseException:
            with contextlib.suppress(Exception):
                writer.cancel()
            raise
        finally:
            lookup.close()
        generation = ix.latest_generation()
        self._save_manifest(Manifest(folder=manifest.folder, generation=generation, files=files),
                            changed=[*paths, *carried])
        # With the lock held no rebuild runs: another folder is one a killed rebuild left.
        self._remove_stale_folders(keep=manifest.folder)

    def _carry_over(self, writer: Any, lookup: DocLookup, relpath: str,
                    files: dict[str, FileRecord], segment: str) -> None:
        """Move a file's documents into the new segment (to empty a crowded old one)."""
        docnums = lookup.docnums(relpath)
        stored = [lookup.stored_fields(d) for d in docnums]
        if any(len(f.get("body", "")) >= BODY_STORE_CHARS for f in stored):
            stored = []  # a body was cut short when stored: read the file again instead
        for docnum in docnums:
            writer.delete_document(docnum)
        if stored or not docnums:
            for fields in stored:
                writer.add_document(**doc_fields(doc_from_stored(fields)))
            files[relpath].segment = segment
            return
        self._index_file(writer, relpath, files, segment)

    def _index_file(self, writer: Any, relpath: str, files: dict[str, FileRecord], segment: str) -> None:
        """Read a file and add its entries to the writer (a file that is gone leaves the manifest)."""
        content = read_file(self.root, relpath)
        if content is None:
            files.pop(relpath, None)
            return
        for doc in content.docs:
            writer.add_document(**doc_fields(doc))
        content.record.segment = segment
        files[relpath] = content.record

    # -- noticing changes --------------------------------------------------------------------

    def refresh(self) -> list[str]:
        """Re-index files changed on disk since they were indexed; rebuild an unusable index."""
        self._reload_manifest()
        if not self._usable():
            return self._repair()
        manifest = self._manifest
        assert manifest is not None
        if self._watch and self._watcher is None:
            self._watcher = ChangeWatcher.create(self.root)
        suspects = self._watcher.poll() if self._watching and self._watcher else None
        if suspects is None:
            armed = self._watcher.arm() if self._watcher else False
            changed, touched = diff_files(self.root, manifest.files, scan_memory_files(self.root))
            self._watching = armed
        else:
            changed, touched = diff_paths(self.root, manifest.files, suspects | self._pending)
        if not changed and not touched:
            return []
        return self._apply_refresh(changed, touched)

    def _repair(self) -> list[str]:
        """Rebuild a missing, corrupt or outdated index (waiting for any other writer)."""
        with self._lock():
            self._reload_manifest()
            if not self._usable():
                self.close()
                self._rebuild_locked()
        return sorted(self._manifest.files) if self._manifest else []

    def _apply_refresh(self, changed: list[str], touched: dict[str, FileRecord]) -> list[str]:
        """Index changed files (and remember touched ones) if the lock can be had soon."""
        try:
            with self._lock(SEARCH_WAIT_SECONDS if changed else 0.0):
                self._reload_manifest()
                if not self._usable():
                    self._rebuild_locked()
                    self._pending.clear()
                    return sorted(changed)
                if changed:
                    self._update_or_rebuild(sorted(changed))
                if touched:
                    self._remember(touched)
        except LockTimeoutError:  # another process is writing: answer from the current index
            self._pending.update(changed)
            self._remember_in_memory(touched)
            return []
        except PermissionError:  # a read-only index serves while nothing changed (else: a fallback)
            if changed:
                raise
            self._remember_in_memory(touched)
            return []
        self._pending.difference_update(changed)
        return sorted(changed)

    def _remember(self, touched: dict[str, FileRecord]) -> None:
        """Persist new stamps of files whose content did not change (lock held)."""
        manifest = self._manifest
        assert manifest is not None
        files = dict(manifest.files)
        kept = []
        for relpath, record in touched.items():
            current = files.get(relpath)
            if current is not None and current.digest == record.digest:
                files[relpath] = record
                kept.append(relpath)
        self._save_manifest(Manifest(manifest.schema, manifest.folder, manifest.generation, files),
                            changed=kept)

    def _remember_in_memory(self, touched: dict[str, FileRecord]) -> None:
        if self._manifest is not None:
            for relpath, record in touched.items():
                if relpath in self._manifest.files:
                    self._manifest.files[relpath] = record

    # -- searching ---------------------------------------------------------------------------

    def _current_view(self) -> View:
        """The open reader, reopened when the manifest names a new folder or generation."""
        manifest = self._manifest
        assert manifest is not None
        view = self._view
        if view is None or view.folder != manifest.folder:
            self.close()
            self._ix = open_index(self.dir / manifest.folder)
            view = View(self._ix.reader(), manifest.folder, manifest.generation,
                        shared_cache(str(self.dir / manifest.folder)))
        elif view.generation != manifest.generation:
            # A fresh reader, not a refreshed one: whoosh would reuse segment readers whose
            # deletions changed. Unchanged segments keep their cached facts and doc sets.
            with contextlib.suppress(Exception):
                view.reader.close()
            view = View(self._ix.reader(), manifest.folder, manifest.generation, view.cache)
            view.cache.retain(view.leaves())
        if view is not self._view:
            view.cache.ahead(view.leaves(), self._ix.reader)  # long-lived processes: cache.decode_ahead
        self._view = view
        return view

    def search(self, query: str, *, scopes: Sequence[str] | None = None, layer: str | None = None,
               limit: int = 10, include_all: bool = False, now: date | None = None,
               windows: Mapping[str, int] | None = None,
               levers: Levers = DEFAULT_LEVERS, explain: bool = False,
               shown: Callable[[list[str]], list[str]] | None = None) -> list[SearchHit]:
        """Ranked entries matching `query` (plain words; no query syntax is interpreted);
        `windows`: the store's freshness windows in days by volatility (default: the defaults);
        `levers`: which parts of query understanding and context to use (query.py);
        `explain`: each hit says why it ranked where it did (explain.py); `shown`: how the hits'
        texts are printed (the secret mask), applied before a snippet is cut."""
        self.refresh()
        request = SearchRequest(query, scopes, layer, limit, include_all, now or caller.today(),
                                windows, levers, explain, shown)
        if limit < 1 or not understand(query, request.now, levers).searchable():
            return []
        failure: Exception | None = None
        for again in (False, True):  # the open reader, then the manifest read anew
            try:
                if again:
                    self._reload_manifest()
                return self._current_view().run(request)
            except Exception as exc:  # noqa: BLE001 - reopen, then rebuild, an index that cannot be read
                failure = failure or exc
                self.close()
        reason = redact(f"{type(failure).__name__}: {failure}")[:200]  # derived data: rebuilt, and said
        log_event(self.root, {"event": "index-rebuilt", "reason": reason})
        self._note(f"the search index could not be read ({reason}); it was rebuilt from the files")
        with self._lock():
            self._rebuild_locked()
        try:
            return self._current_view().run(request)
        except Exception as exc:  # noqa: BLE001 - on a new index the fault is the search's
            self.close()
            raise SearchFault(f"search failed on a freshly rebuilt index: {type(exc).__name__}: "
                              f"{exc}") from exc
