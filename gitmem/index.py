"""The whoosh search index under `index/`: incremental updates, self-repair, ranked search.

Only this module imports whoosh. Layout of `index/`:
- `manifest.json`   per-file mtime_ns/size/hash, the current index folder and generation;
- `whoosh-<stamp>/` the whoosh index (a rebuild writes a new folder, then switches to it);
- `write.lock`      a file lock held by whoever writes the index (one writer at a time).
Readers never take the lock: they read the manifest and open the folder it names.

Each entry is one whoosh document. Its terms are indexed once, in the `terms` field, with a
precomputed BM25F weight (see search_rank); scoring reads those postings directly.
"""

from __future__ import annotations

import contextlib
import heapq
import importlib
import multiprocessing
import os
import shutil
import sys
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import date
from itertools import accumulate, compress
from operator import itemgetter, mul
from pathlib import Path
from typing import Any

import filelock
from whoosh.fields import COLUMN, STORED, FieldType, Schema
from whoosh.matching import FilterMatcher
from whoosh.reading import SegmentReader

from .analysis import highlight_words, query_groups
from .errors import LockTimeoutError
from .freshness import Freshness
from .index_files import (
    MANIFEST_NAME,
    FileRecord,
    FileStamp,
    Manifest,
    digest,
    indexable,
    load_manifest,
    read_file,
    save_manifest,
    scan_memory_files,
    stat_key,
)
from .index_watch import ChangeWatcher
from .search_rank import (
    MAX_BOOST,
    EntryFacts,
    Scores,
    idf,
    plan_words,
    rank_factor,
    score_entries,
    snippet,
    sort_key,
    term_weights,
)

# These whoosh modules carry no type information; use them as Any.
columns: Any = importlib.import_module("whoosh.columns")
formats: Any = importlib.import_module("whoosh.formats")
windex: Any = importlib.import_module("whoosh.index")
_whoosh3: Any = importlib.import_module("whoosh.codec.whoosh3")
W3Codec: Any = _whoosh3.W3Codec
W3LeafMatcher: Any = _whoosh3.W3LeafMatcher

INDEX_DIR = "index"
LOCK_NAME = "write.lock"
FOLDER_PREFIX = "whoosh-"
WRITE_WAIT_SECONDS = 600.0  # a writer waits this long for another writer (a rebuild) to finish
SEARCH_WAIT_SECONDS = 2.0  # a search waits this long to index files changed behind its back
TERMS = "terms"
PREFIX_EXPANSIONS = 12
MIN_PREFIX_CHARS = 3
SEGMENT_FANOUT = 6  # merge once this many segments of one size tier pile up
RACY_SETTLED_NS = 2_000_000_000
HIDDEN_STATUSES = ("forgotten", "superseded")
PARALLEL_MIN_FILES = 200  # smaller stores rebuild in-process
PARALLEL_CHUNK = 16
REBUILD_WORKERS = 1  # parsing in one worker keeps pace with whoosh writing in this process


@dataclass
class SearchHit:
    """One ranked search result, citing `path:line` of the entry heading."""

    id: str | None
    title: str
    snippet: str
    path: str
    line: int
    scope: str
    layer: str
    topic: str
    importance: str
    freshness: str
    age_days: int | None
    source: str
    status: str
    score: float
    conflicted: bool


class IndexCodec(W3Codec):
    """whoosh's file format, tuned for reading whole posting lists: big uncompressed blocks,
    no per-block length statistics (scoring never uses them)."""

    length_stats = False

    def __init__(self) -> None:
        super().__init__(blocklimit=1024, compression=0)


class WeightedTerms(FieldType):
    """Postings-only field fed a {term: weight} dict; each term is indexed once with its weight."""

    def __init__(self) -> None:
        super().__init__(formats.Existence(), analyzer=None)

    def index(self, value: dict[str, float], **kwargs: Any) -> Iterator[tuple[bytes, int, float, bytes]]:
        """(term bytes, frequency, weight, value) per term."""
        for term, weight in value.items():
            yield term.encode("utf-8"), 1, weight, b""


class Key(FieldType):
    """One exact, stored value per document (path, scope, layer, status) used for filtering."""

    def __init__(self) -> None:
        super().__init__(formats.Existence(), analyzer=None, stored=True)

    def index(self, value: str, **kwargs: Any) -> Iterator[tuple[bytes, int, float, bytes]]:
        """The value itself as the only term."""
        yield value.encode("utf-8"), 1, 1.0, b""


def build_schema() -> Schema:
    """Postings: weighted terms and filter keys; everything else is stored for display."""
    return Schema(
        terms=WeightedTerms(), path=Key(), scope=Key(), layer=Key(), status=Key(),
        id=STORED(), line=STORED(), title=STORED(), body=STORED(), topic=STORED(),
        importance=STORED(), volatility=STORED(), verified=STORED(), created=STORED(),
        valid_until=STORED(), source=STORED(), conflicted=STORED(),
        facts=COLUMN(columns.NumericColumn("Q")),
    )


SCHEMA = build_schema()


def whoosh_document(doc: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments for `add_document`."""
    out = {k: v for k, v in doc.items() if k not in ("full_body", "status", "id")}
    topic_text = doc["topic"].replace("-", " ").replace("_", " ")
    out[TERMS] = term_weights(doc["title"], doc["full_body"], topic_text, doc["id"])
    out["facts"] = EntryFacts.from_fields(doc["importance"], doc["volatility"], doc["verified"],
                                          doc["created"], doc["valid_until"]).pack()
    if doc["id"]:
        out["id"] = doc["id"]
    if doc["status"] != "live":  # only hidden statuses are indexed: each value costs a posting
        out["status"] = doc["status"]
    return out


def prepare_file(root: Path, relpath: str) -> tuple[FileRecord, list[dict[str, Any]]] | None:
    """Read, parse and analyse one memory file: its record and its documents (None if gone)."""
    content = read_file(root, relpath)
    if content is None:
        return None
    return content.record, [whoosh_document(doc) for doc in content.docs]


def _prepare_chunk(root: Path, relpaths: list[str]) -> list[Any]:
    return [prepare_file(root, relpath) for relpath in relpaths]


def _prepare_all(root: Path, paths: list[str]) -> Iterator[tuple[str, Any]]:
    """Prepared files in order; big stores parse and analyse in a worker process meanwhile."""
    if len(paths) < PARALLEL_MIN_FILES or (os.cpu_count() or 1) < 2:
        for relpath in paths:
            yield relpath, prepare_file(root, relpath)
        return
    chunks = [paths[i : i + PARALLEL_CHUNK] for i in range(0, len(paths), PARALLEL_CHUNK)]
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(max_workers=REBUILD_WORKERS, mp_context=context) as pool:
        results = pool.map(_prepare_chunk, [root] * len(chunks), chunks)
        for chunk, prepared in zip(chunks, results, strict=True):
            yield from zip(chunk, prepared, strict=True)


def _size_tier(segment: Any) -> int:
    return len(str(max(1, segment.doc_count_all())))


def tiered_merge(writer: Any, segments: list[Any]) -> list[Any]:
    """Merge policy: fold segments of the smallest crowded size tier into the new one."""
    tiers: dict[int, list[Any]] = {}
    for segment in segments:
        tiers.setdefault(_size_tier(segment), []).append(segment)
    crowded = [tier for tier, members in sorted(tiers.items()) if len(members) >= SEGMENT_FANOUT]
    if not crowded:
        return segments
    merged = tiers[crowded[0]]
    for segment in merged:
        reader = SegmentReader(writer.storage, writer.schema, segment)
        writer.add_reader(reader)
        reader.close()
    return [s for s in segments if s not in merged]


def _index_present(folder: Path) -> bool:
    """True when `folder` holds a readable whoosh index of this schema."""
    if not folder.is_dir():
        return False
    try:
        return bool(windex.open_dir(str(folder), schema=SCHEMA).latest_generation() >= 0)
    except Exception:  # noqa: BLE001 - any damage means "not usable": it will be rebuilt
        return False


def _normalize_relpath(root: Path, path: str | os.PathLike[str]) -> str:
    """A repo-relative posix path, whether given relative or absolute."""
    candidate = Path(path)
    if candidate.is_absolute():
        with contextlib.suppress(ValueError):
            candidate = candidate.relative_to(root)
    text = candidate.as_posix()
    return text[2:] if text.startswith("./") else text


class SearchIndex:
    """The search index of one store root; lives in `root/index`."""

    def __init__(self, root: Path, *, watch: bool = True) -> None:
        """`watch=False` disables change notifications: every refresh stats every file."""
        self.root = Path(root)
        self.dir = self.root / INDEX_DIR
        self._watcher = ChangeWatcher.create(self.root) if watch else None
        self._watching = False  # armed, and a full scan since then found the index in step
        self._pending: set[str] = set()  # changed files a busy writer kept us from indexing
        self._manifest_path = self.dir / MANIFEST_NAME
        self._manifest: Manifest | None = None
        self._manifest_key: tuple[int, int, int, int] | None = None
        self._checked_key: tuple[int, int, int, int] | None = None
        self._ix: Any = None
        self._view: _View | None = None

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
            if not _index_present(self.dir / manifest.folder):
                return False
            self._checked_key = self._manifest_key
        return True

    def _reload_manifest(self) -> None:
        key = stat_key(self._manifest_path)
        if key is None or key != self._manifest_key:
            self._manifest = load_manifest(self._manifest_path) if key else None
            self._manifest_key = key
            self._watching = False  # written by someone else: compare every file once

    def _save_manifest(self, manifest: Manifest) -> None:
        save_manifest(self._manifest_path, manifest)
        self._manifest = manifest
        self._manifest_key = stat_key(self._manifest_path)

    def _lock(self, timeout: float) -> filelock.BaseFileLock:
        self.dir.mkdir(parents=True, exist_ok=True)
        return filelock.FileLock(str(self.dir / LOCK_NAME), timeout=timeout)

    def close(self) -> None:
        """Release the open searcher (a later search reopens it); keeps watching for changes."""
        if self._view is not None:
            with contextlib.suppress(Exception):
                self._view.searcher.close()
        self._view = None
        self._ix = None

    # -- writing -----------------------------------------------------------------------------

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Index every memory file from scratch into a fresh folder; returns entries indexed."""
        with self._writing():
            return self._rebuild_locked(progress)

    @contextlib.contextmanager
    def _writing(self, timeout: float = WRITE_WAIT_SECONDS) -> Iterator[None]:
        try:
            with self._lock(timeout):
                yield
        except filelock.Timeout:
            raise LockTimeoutError("the search index is being written by another process") from None

    def _rebuild_locked(self, progress: Callable[[int, int], None] | None = None) -> int:
        paths = sorted(scan_memory_files(self.root))
        folder = f"{FOLDER_PREFIX}{time.time_ns():x}-{os.getpid()}"
        target = self.dir / folder
        target.mkdir(parents=True)
        ix = windex.create_in(str(target), SCHEMA)
        writer = ix.writer(limitmb=256, codec=IndexCodec())
        files: dict[str, FileRecord] = {}
        count = 0
        try:
            for done, (relpath, prepared) in enumerate(_prepare_all(self.root, paths), 1):
                if prepared is not None:
                    record, docs = prepared
                    for doc in docs:
                        writer.add_document(**doc)
                    count += len(docs)
                    files[relpath] = record
                if progress is not None:
                    progress(done, len(paths))
            writer.commit(merge=False)
        except BaseException:
            with contextlib.suppress(Exception):
                writer.cancel()
            shutil.rmtree(target, ignore_errors=True)
            raise
        self._save_manifest(Manifest(folder=folder, generation=ix.latest_generation(), files=files))
        self._remove_stale_folders(keep=folder)
        return count

    def _remove_stale_folders(self, keep: str) -> None:
        for item in self.dir.iterdir():
            if item.name.startswith(FOLDER_PREFIX) and item.name != keep and item.is_dir():
                shutil.rmtree(item, ignore_errors=True)

    def update_paths(self, relpaths: Iterable[str]) -> None:
        """Re-index just these files (a deleted file leaves the index); updates the manifest."""
        paths = [_normalize_relpath(self.root, p) for p in relpaths]
        wanted = [p for p in dict.fromkeys(paths) if indexable(p)]
        if not wanted:
            return
        with self._writing():
            self._reload_manifest()
            if not self._usable():
                self._rebuild_locked()
            else:
                self._update_or_rebuild(wanted)

    def _update_or_rebuild(self, paths: list[str]) -> None:
        """Under the lock: update these paths; a damaged index is rebuilt instead."""
        try:
            self._update_locked(paths)
        except OSError:
            raise
        except Exception:  # unreadable index files: start over rather than fail the write
            self.close()
            self._rebuild_locked()

    def _update_locked(self, paths: list[str]) -> None:
        manifest = self._manifest
        assert manifest is not None
        ix = windex.open_dir(str(self.dir / manifest.folder), schema=SCHEMA)
        writer = ix.writer(codec=IndexCodec())
        files = dict(manifest.files)
        try:
            for relpath in paths:
                writer.delete_by_term("path", relpath)
                content = read_file(self.root, relpath)
                if content is None:
                    files.pop(relpath, None)
                    continue
                for doc in content.docs:
                    writer.add_document(**whoosh_document(doc))
                files[relpath] = content.record
            writer.commit(mergetype=tiered_merge)
        except BaseException:
            with contextlib.suppress(Exception):
                writer.cancel()
            raise
        generation = ix.latest_generation()
        self._save_manifest(Manifest(folder=manifest.folder, generation=generation, files=files))

    # -- noticing changes --------------------------------------------------------------------

    def refresh(self) -> list[str]:
        """Re-index files changed on disk since they were indexed; rebuild an unusable index."""
        self._reload_manifest()
        if not self._usable():
            return self._repair()
        manifest = self._manifest
        assert manifest is not None
        suspects = self._watcher.poll() if self._watching and self._watcher else None
        if suspects is None:
            armed = self._watcher.arm() if self._watcher else False
            changed, touched = self._diff(manifest, scan_memory_files(self.root))
            self._watching = armed
        else:
            changed, touched = self._diff_paths(manifest, suspects | self._pending)
        if not changed and not touched:
            return []
        return self._apply_refresh(changed, touched)

    def _diff_paths(self, manifest: Manifest,
                    paths: set[str]) -> tuple[list[str], dict[str, FileRecord]]:
        """`_diff` restricted to the given paths (those change notifications named)."""
        stamps: dict[str, FileStamp] = {}
        for relpath in paths:
            if not indexable(relpath):
                continue
            try:
                st = os.stat(self.root / relpath)
            except OSError:
                continue
            stamps[relpath] = (st.st_mtime_ns, st.st_size)
        gone = {p for p in paths if p not in stamps and p in manifest.files}
        changed, touched = self._diff(Manifest(files={p: manifest.files[p] for p in paths
                                                      if p in manifest.files}), stamps)
        return sorted(set(changed) | gone), touched

    def _repair(self) -> list[str]:
        """Rebuild a missing, corrupt or outdated index (waiting for any other writer)."""
        with self._writing():
            self._reload_manifest()
            if not self._usable():
                self.close()
                self._rebuild_locked()
        return sorted(self._manifest.files) if self._manifest else []

    def _diff(self, manifest: Manifest,
              stamps: dict[str, FileStamp]) -> tuple[list[str], dict[str, FileRecord]]:
        """(paths whose content changed, new records of files only touched) since indexing."""
        files = manifest.files
        changed = [p for p in files if p not in stamps]
        touched: dict[str, FileRecord] = {}
        now_ns = time.time_ns()
        for relpath, stamp in stamps.items():
            record = files.get(relpath)
            if record is None:
                changed.append(relpath)
            elif record.stamp != stamp or record.racy:
                self._confirm(relpath, record, stamp, now_ns, changed, touched)
        return changed, touched

    def _confirm(self, relpath: str, record: FileRecord, stamp: FileStamp, now_ns: int,
                 changed: list[str], touched: dict[str, FileRecord]) -> None:
        """Hash a suspect file: changed content goes to `changed`, same content to `touched`."""
        try:
            data = (self.root / relpath).read_bytes()
        except OSError:
            changed.append(relpath)
            return
        if len(data) != stamp[1] or digest(data) != record.digest:
            changed.append(relpath)
        elif record.stamp != stamp or now_ns - stamp[0] >= RACY_SETTLED_NS:
            touched[relpath] = FileRecord(stamp[0], stamp[1], record.digest, now_ns, record.error)

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
        except filelock.Timeout:  # another process is writing: answer from the current index
            self._pending.update(changed)
            self._remember_in_memory(touched)
            return []
        self._pending.difference_update(changed)
        return sorted(changed)

    def _remember(self, touched: dict[str, FileRecord]) -> None:
        """Persist new stamps of files whose content did not change (lock held)."""
        manifest = self._manifest
        assert manifest is not None
        files = dict(manifest.files)
        for relpath, record in touched.items():
            current = files.get(relpath)
            if current is not None and current.digest == record.digest:
                files[relpath] = record
        self._save_manifest(Manifest(manifest.schema, manifest.folder, manifest.generation, files))

    def _remember_in_memory(self, touched: dict[str, FileRecord]) -> None:
        if self._manifest is not None:
            for relpath, record in touched.items():
                if relpath in self._manifest.files:
                    self._manifest.files[relpath] = record

    # -- searching ---------------------------------------------------------------------------

    def _current_view(self) -> _View:
        """The open searcher, reopened when the manifest names a new folder or generation."""
        manifest = self._manifest
        assert manifest is not None
        view = self._view
        if view is None or view.folder != manifest.folder:
            self.close()
            self._ix = windex.open_dir(str(self.dir / manifest.folder), schema=SCHEMA)
            view = _View(self._ix.searcher(), manifest.folder, manifest.generation, _SegmentCache())
        elif view.generation != manifest.generation:
            # A fresh searcher, not searcher.refresh(): whoosh would reuse segment readers whose
            # deletions changed. Unchanged segments keep their cached facts and doc sets.
            with contextlib.suppress(Exception):
                view.searcher.close()
            view = _View(self._ix.searcher(), manifest.folder, manifest.generation, view.cache)
            view.cache.retain(view.leaves())
        self._view = view
        return view

    def search(self, query: str, *, scopes: Sequence[str] | None = None, layer: str | None = None,
               limit: int = 10, include_all: bool = False, now: date | None = None) -> list[SearchHit]:
        """Ranked entries matching `query` (plain words; no query syntax is interpreted)."""
        self.refresh()
        request = _Request(query, scopes, layer, limit, include_all, now or date.today())
        if limit < 1 or not query_groups(query):
            return []
        try:
            return self._current_view().run(request)
        except OSError:
            raise
        except Exception:  # noqa: BLE001 - reopen, then rebuild, an index that cannot be read
            self.close()
        try:
            self._reload_manifest()
            return self._current_view().run(request)
        except OSError:
            raise
        except Exception:  # noqa: BLE001
            self.close()
        with self._writing():
            self._rebuild_locked()
        return self._current_view().run(request)


@dataclass(frozen=True)
class _Request:
    query: str
    scopes: Sequence[str] | None
    layer: str | None
    limit: int
    include_all: bool
    now: date


def _matcher_blocks(matcher: Any) -> Iterator[tuple[Iterable[int], Sequence[float]]]:
    """(doc ids, weights) of a posting list, a whole block at a time when the codec allows."""
    if isinstance(matcher, FilterMatcher):
        matcher = matcher.child  # deleted documents are dropped later, when ranking
    if type(matcher) is W3LeafMatcher and not getattr(matcher, "_byteids", True):
        # whoosh stores postings in pickled blocks of delta-coded ids; decoding a whole block
        # at once avoids several Python calls per posting (a test checks this path against the
        # generic one below).
        while matcher.is_active():
            if matcher._data is None:
                matcher._read_data()
            matcher._read_weights()
            yield accumulate(matcher._data[0]), matcher._weights
            matcher._next_block()
        return
    ids: list[int] = []
    weights: list[float] = []
    while matcher.is_active():
        ids.append(matcher.id())
        weights.append(matcher.weight())
        matcher.next()
    yield ids, weights


def _column_values(leaf: Any, name: str) -> array[int]:
    """All values of a numeric column of one segment, read at once when the codec allows."""
    reader = leaf.column_reader(name, translate=False)
    count = leaf.doc_count_all()
    dbfile = getattr(reader, "_dbfile", None)
    if type(reader) is columns.NumericColumn.Reader and dbfile is not None:
        values = array("Q")
        values.frombytes(dbfile.get(reader._basepos, reader._count * 8))
        if sys.byteorder == "little":
            values.byteswap()  # whoosh writes columns big-endian
        values.extend([0] * (count - len(values)))  # trailing default values are not written
        return values
    return array("Q", (reader[doc] for doc in range(count)))


def _deleted_docs(leaf: Any) -> Iterable[int]:
    """Deleted doc numbers of one segment."""
    known = getattr(leaf, "deleted_docs_set", None)
    if isinstance(known, frozenset | set):
        return known
    return [doc for doc in range(leaf.doc_count_all()) if leaf.is_deleted(doc)]


class _SegmentCache:
    """Per-segment data that never changes once a segment is written (facts, key doc sets)."""

    def __init__(self) -> None:
        self._facts: dict[str, array[int]] = {}
        self._docs: dict[tuple[str, str, str], frozenset[int]] = {}

    @staticmethod
    def _name(leaf: Any) -> str:
        return str(leaf.segment().segment_id())

    def facts(self, leaf: Any) -> array[int]:
        name = self._name(leaf)
        if name not in self._facts:
            self._facts[name] = _column_values(leaf, "facts")
        return self._facts[name]

    def local_docs(self, leaf: Any, fieldname: str, value: str) -> frozenset[int]:
        key = (self._name(leaf), fieldname, value)
        if key not in self._docs:
            docs: set[int] = set()
            if (fieldname, value) in leaf:
                for ids, _weights in _matcher_blocks(leaf.postings(fieldname, value)):
                    docs.update(ids)
            self._docs[key] = frozenset(docs)
        return self._docs[key]

    def retain(self, leaves: list[tuple[Any, int]]) -> None:
        """Forget segments no longer in the index."""
        live = {self._name(leaf) for leaf, _offset in leaves}
        self._facts = {k: v for k, v in self._facts.items() if k in live}
        self._docs = {k: v for k, v in self._docs.items() if k[0] in live}


@dataclass
class _View:
    """An open searcher and what has been computed from it (valid until the index changes)."""

    searcher: Any
    folder: str
    generation: int
    cache: _SegmentCache
    _docsets: dict[tuple[str, str], frozenset[int]] = field(default_factory=dict)
    _facts: array[int] | None = None
    _deleted: frozenset[int] | None = None
    _factor_cache: dict[tuple[int, bool], dict[int, float]] = field(default_factory=dict)

    def leaves(self) -> list[tuple[Any, int]]:
        return list(self.searcher.reader().leaf_readers())

    def postings(self, fieldname: str, term: str) -> Iterator[tuple[Iterable[int], Sequence[float]]]:
        """Posting blocks of a term over all segments, with global doc numbers."""
        for leaf, offset in self.leaves():
            if (fieldname, term) not in leaf:
                continue
            for ids, weights in _matcher_blocks(leaf.postings(fieldname, term)):
                yield (map(offset.__add__, ids) if offset else ids), weights

    def docset(self, fieldname: str, value: str) -> frozenset[int]:
        """Global doc numbers having this key value (cached for this view)."""
        key = (fieldname, value)
        if key not in self._docsets:
            docs: set[int] = set()
            for leaf, offset in self.leaves():
                local = self.cache.local_docs(leaf, fieldname, value)
                docs.update(map(offset.__add__, local) if offset else local)
            self._docsets[key] = frozenset(docs)
        return self._docsets[key]

    def facts(self) -> array[int]:
        """Packed ranking facts of every document, by global doc number."""
        if self._facts is None:
            values = array("Q")
            for leaf, _offset in self.leaves():
                values.extend(self.cache.facts(leaf))
            self._facts = values
        return self._facts

    def deleted(self) -> frozenset[int]:
        """Global doc numbers deleted in their segments (their postings remain until a merge)."""
        if self._deleted is None:
            docs: set[int] = set()
            for leaf, offset in self.leaves():
                if leaf.has_deletions():
                    docs.update(offset + d for d in _deleted_docs(leaf))
            self._deleted = frozenset(docs)
        return self._deleted

    def has_term(self, term: str) -> bool:
        return (TERMS, term) in self.searcher.reader()

    def expand(self, word: str) -> list[str]:
        """Index terms extending `word`, or the longest term `word` extends (a cut-off stem)."""
        if len(word) < MIN_PREFIX_CHARS:
            return []
        reader = self.searcher.reader()
        found: list[str] = []
        for raw in reader.expand_prefix(TERMS, word):
            found.append(raw.decode("utf-8"))
            if len(found) >= PREFIX_EXPANSIONS:
                return found
        shortest = max(MIN_PREFIX_CHARS + 1, len(word) - 3)
        for size in range(len(word) - 1, shortest - 1, -1):
            if (TERMS, word[:size]) in reader:
                return found + [word[:size]]
        return found

    def run(self, request: _Request) -> list[SearchHit]:
        """Score, filter and rank; build the top hits."""
        groups = query_groups(request.query)
        plans = plan_words(groups, self.has_term, self.expand)
        reader = self.searcher.reader()
        doc_count = max(1, reader.doc_count_all())
        scores = score_entries(plans, lambda t: self.postings(TERMS, t),
                               lambda t: idf(doc_count, reader.doc_frequency(TERMS, t)), doc_count)
        docs = self._admitted(scores.docs, request)
        if not docs:
            return []
        words = highlight_words(groups)
        facts = self.facts()
        return [_hit(fields, score, EntryFacts.unpack(facts[doc]).freshness(request.now), words)
                for doc, score, fields in self._top(scores, docs, request)]

    def _admitted(self, matching: set[int], request: _Request) -> list[int]:
        """Matching docs the request may return: not deleted, hidden or outside its filters."""
        keys = matching - self.deleted()
        if not request.include_all:
            for status in HIDDEN_STATUSES:
                keys -= self.docset("status", status)
        if request.scopes is not None:
            keys &= frozenset().union(*(self.docset("scope", s) for s in request.scopes))
        if request.layer:
            keys &= self.docset("layer", request.layer)
        return list(keys)

    def _factors(self, docs: Iterable[int], request: _Request) -> dict[int, float]:
        """importance x freshness multipliers (0.0 = hidden), cached per day for this view."""
        key = (request.now.toordinal(), request.include_all)
        factors = self._factor_cache.get(key)
        if factors is None:
            factors = self._factor_cache[key] = {}
        facts = self.facts()
        today, include = key
        for doc in [d for d in docs if d not in factors]:
            factors[doc] = rank_factor(facts[doc], today, include)
        return factors

    def _top(self, scores: Scores, docs: list[int],
             request: _Request) -> list[tuple[int, float, dict[str, Any]]]:
        """The best `limit` docs by final score (exact); ties by path and line."""
        bases = scores.bases(docs)
        # A final score never exceeds BM25F x coverage x MAX_BOOST, so once a few real finals
        # are known, only docs whose score can still reach the k-th of them need a look.
        probe = heapq.nlargest(request.limit * 2, range(len(docs)), key=bases.__getitem__)
        known = heapq.nlargest(request.limit, (final for _doc, final in
                                               self._finals(docs, bases, probe, request)))
        if len(known) == request.limit and known[-1] > 0.0:
            threshold = known[-1] / MAX_BOOST
            picked = list(compress(range(len(docs)), map(threshold.__le__, bases)))
        else:
            picked = list(range(len(docs)))
        finals = self._finals(docs, bases, picked, request)
        best = heapq.nlargest(request.limit, map(itemgetter(1), finals))
        if not best:
            return []
        cut = best[-1] - 1e-9
        chosen = []
        for doc, score in finals:
            if score >= cut:
                fields = self.searcher.stored_fields(doc)
                chosen.append((sort_key(score, fields["path"], fields["line"]), doc, score, fields))
        chosen.sort(key=itemgetter(0))
        return [(doc, score, fields) for _key, doc, score, fields in chosen[: request.limit]]

    def _finals(self, docs: list[int], bases: list[float], picked: list[int],
                request: _Request) -> list[tuple[int, float]]:
        """(doc, final score) of the picked positions, leaving out hidden (0.0) ones."""
        chosen = [docs[i] for i in picked]
        factors = self._factors(chosen, request)
        pairs = zip(chosen, map(mul, map(bases.__getitem__, picked), map(factors.__getitem__, chosen)), strict=True)
        return [pair for pair in pairs if pair[1] > 0.0]


def _hit(fields: dict[str, Any], score: float, fresh: Freshness, words: list[str]) -> SearchHit:
    status = fields.get("status", "live")
    if status == "live" and fresh.grade == "expired":
        status = "expired"
    return SearchHit(
        id=fields.get("id") or None,
        title=fields.get("title", ""),
        snippet=snippet(fields.get("body") or fields.get("title", ""), words),
        path=fields["path"],
        line=int(fields["line"]),
        scope=fields.get("scope", ""),
        layer=fields.get("layer", ""),
        topic=fields.get("topic", ""),
        importance=fields.get("importance", "normal"),
        freshness=fresh.grade,
        age_days=fresh.age_days,
        source=fields.get("source", ""),
        status=status,
        score=round(score, 6),
        conflicted=bool(fields.get("conflicted", False)),
    )
