"""What is kept per index segment in this process (a segment never changes once written): its
facts, the freshness factors of a day, key doc sets, its term dictionary and decoded postings,
shared by every reader of the index folder (the warm server's calls and the page hold one copy).
"""

from __future__ import annotations

import contextlib
import threading
import time
import weakref
from array import array
from typing import Any

from gitmem.search.rank import Windows, rank_factor
from gitmem.search.segments import (
    TermDictionary,
    column_values,
    matcher_blocks,
    raw_postings,
    segment_name,
)

POSTINGS_KEPT = 2_000_000  # decoded postings kept per index (16 bytes each: ~32 MB at most)
AHEAD_SHARE = 0.5  # of POSTINGS_KEPT, decoded ahead in a long-lived process (decode_ahead)
AHEAD_MIN_DOCS = 1_000  # segments with fewer entries are not decoded ahead
_ahead = False  # whether this process decodes the biggest posting lists ahead (decode_ahead)


def decode_ahead(on: bool = True) -> None:
    """In a long-lived process (the warm server, the page): each new segment's biggest posting
    lists are decoded on a thread of their own as soon as a reader meets the segment, so that
    the first search for a common word (or a prefix of one) finds them decoded. They are the
    expensive ones; a rare term's list is short to decode when it is asked for."""
    global _ahead
    _ahead = on


class SegmentCache:
    """Per-segment data that never changes once a segment is written (facts, key doc sets,
    the term dictionary, decoded postings). Safe to share between threads: a value is computed
    whole and then stored (two threads may both compute it; both get an equal one), and
    retain() swaps whole dicts, so each method returns the value it computed or found rather
    than reading it back."""

    def __init__(self) -> None:
        self._facts: dict[str, array[int]] = {}
        self._docs: dict[tuple[str, str, str], frozenset[int]] = {}
        self._factors: dict[tuple[str, int, bool, Windows], array[float]] = {}
        self._dictionaries: dict[str, TermDictionary] = {}
        self._postings: dict[tuple[str, str], tuple[array[int], array[float]]] = {}
        self._postings_size = 0
        self._postings_lock = threading.Lock()
        self._ahead: set[str] = set()  # segments whose biggest lists were decoded (or are being)

    @staticmethod
    def _name(leaf: Any) -> str:
        return segment_name(leaf) or ""

    def facts(self, leaf: Any) -> array[int]:
        name = self._name(leaf)
        found = self._facts.get(name)
        if found is None:
            found = self._facts[name] = column_values(leaf, "facts")
        return found

    def factors(self, leaf: Any, today: int, include_expired: bool,
                windows: Windows) -> array[float]:
        """importance x freshness multiplier of every doc of a segment on one day."""
        key = (self._name(leaf), today, include_expired, windows)
        values = self._factors.get(key)
        if values is None:
            memo: dict[int, float] = {}
            values = array("d")
            for packed in self.facts(leaf):
                factor = memo.get(packed)
                if factor is None:
                    factor = memo[packed] = rank_factor(packed, today, include_expired, windows)
                values.append(factor)
            self._factors[key] = values
        return values

    def local_docs(self, leaf: Any, fieldname: str, value: str) -> frozenset[int]:
        key = (self._name(leaf), fieldname, value)
        found = self._docs.get(key)
        if found is None:
            docs: set[int] = set()
            matcher = raw_postings(leaf, fieldname, value)
            if matcher is not None:
                for ids, _weights in matcher_blocks(matcher):
                    docs.update(ids)
            found = self._docs[key] = frozenset(docs)
        return found

    def postings(self, leaf: Any, term: str) -> tuple[array[int], array[float]]:
        """A term's postings in one segment (doc ids, weights), decoded once and kept (the last
        POSTINGS_KEPT postings): someone typing a query asks for the same expansions of a prefix
        again and again (`dep`, `depl`, `deploy`), and decoding is most of a search's time."""
        key = (self._name(leaf), term)
        found = self._postings.get(key)
        if found is None:
            ids, weights = array("q"), array("d")
            matcher = self.dictionary(leaf).postings(leaf, term)
            if matcher is not None:
                for block_ids, block_weights in matcher_blocks(matcher):
                    ids.extend(iter(block_ids))  # iter: a block may be an array of another kind
                    weights.extend(iter(block_weights))
            found = (ids, weights)
            self._keep(key, found)
        return found

    def ahead(self, leaves: list[tuple[Any, int]], open_reader: Any) -> None:
        """decode_ahead's work for the segments among `leaves` no thread has taken on yet, on a
        thread of its own. It reads through a reader of its own (`open_reader()`): a segment's
        file read from two threads at once returns garbage."""
        if not _ahead:
            return
        with self._postings_lock:
            # A write's small new segment decodes in no time when asked: no thread for it.
            small = {self._name(leaf) for leaf, _offset in leaves if leaf.doc_count_all() < AHEAD_MIN_DOCS}
            self._ahead |= small
            pending = any(self._name(leaf) not in self._ahead for leaf, _offset in leaves)
        if pending:
            threading.Thread(target=self._decode_ahead, args=(open_reader,), daemon=True,
                             name="gitmem-decode-ahead").start()

    def _decode_ahead(self, open_reader: Any) -> None:
        try:
            reader = open_reader()
        except Exception:  # noqa: BLE001 - the index went away meanwhile: nothing to warm
            return
        try:
            leaves = [leaf for leaf, _offset in reader.leaf_readers() if segment_name(leaf)]
            total = sum(leaf.doc_count_all() for leaf in leaves) or 1
            for leaf in leaves:
                name = self._name(leaf)
                with self._postings_lock:
                    if name in self._ahead:
                        continue
                    self._ahead.add(name)
                share = int(POSTINGS_KEPT * AHEAD_SHARE * leaf.doc_count_all() / total)
                for term in self.dictionary(leaf).biggest(leaf, share):
                    self.postings(leaf, term)
                    time.sleep(0)  # a search asked meanwhile gets the interpreter between terms
        except Exception:  # noqa: BLE001 - a cache filled ahead of need; a search decodes what it needs
            return
        finally:
            with contextlib.suppress(Exception):
                reader.close()

    def _keep(self, key: tuple[str, str], decoded: tuple[array[int], array[float]]) -> None:
        with self._postings_lock:
            if key in self._postings:
                return
            self._postings[key] = decoded
            self._postings_size += len(decoded[0])
            while self._postings_size > POSTINGS_KEPT and len(self._postings) > 1:
                oldest = next(iter(self._postings))  # the oldest first
                self._postings_size -= len(self._postings.pop(oldest)[0])

    def dictionary(self, leaf: Any) -> TermDictionary:
        name = self._name(leaf)
        found = self._dictionaries.get(name)
        if found is None:
            found = self._dictionaries[name] = TermDictionary(leaf)
        return found

    def retain(self, leaves: list[tuple[Any, int]]) -> None:
        """Forget segments no longer in the index."""
        live = {self._name(leaf) for leaf, _offset in leaves}
        self._facts = {k: v for k, v in self._facts.items() if k in live}
        self._docs = {k: v for k, v in self._docs.items() if k[0] in live}
        self._factors = {k: v for k, v in self._factors.items() if k[0] in live}
        self._dictionaries = {k: v for k, v in self._dictionaries.items() if k in live}
        with self._postings_lock:
            self._postings = {k: v for k, v in self._postings.items() if k[0] in live}
            self._ahead &= live
            self._postings_size = sum(len(ids) for ids, _weights in self._postings.values())


# One cache per index folder in this process: every reader of the folder shares it (the warm
# server's calls each hold a reader of their own, and a reader opened for a call running beside
# others would otherwise compute every segment's data again). Held while a view holds it.
_shared: weakref.WeakValueDictionary[str, SegmentCache] = weakref.WeakValueDictionary()
_shared_guard = threading.Lock()


def shared_cache(folder: str) -> SegmentCache:
    """The segment cache of the index in `folder` (a path) that this process's readers share."""
    with _shared_guard:
        cache = _shared.get(folder)
        if cache is None:
            cache = _shared[folder] = SegmentCache()
        return cache
