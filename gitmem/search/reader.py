"""Reading the search index: postings, per-document facts, filters and top hits.

Works on the whoosh reader objects `index.py` opens, without importing whoosh itself: the
hot loops read whole posting blocks and whole columns through two codec internals (each with a
fallback to the public per-item API, compared in tests), and accumulate scores term at a time.
"""

from __future__ import annotations

import contextlib
import heapq
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from itertools import accumulate, compress
from operator import itemgetter, mul
from typing import Any

from gitmem.format.freshness import Freshness
from gitmem.search.analysis import highlight_words, query_groups
from gitmem.search.files import FileRecord
from gitmem.search.rank import (
    EntryFacts,
    Scores,
    idf,
    plan_words,
    rank_factor,
    score_entries,
    snippet,
    sort_key,
)

TERMS = "terms"
PREFIX_EXPANSIONS = 12
MIN_PREFIX_CHARS = 3
HIDDEN_STATUSES = ("forgotten", "superseded", "archived")  # archived: project documents


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


@dataclass(frozen=True)
class SearchRequest:
    """One search: analysed query, filters and the day freshness is graded on."""

    query: str
    scopes: Sequence[str] | None
    layer: str | None
    limit: int
    include_all: bool
    now: date


def matcher_blocks(matcher: Any) -> Iterator[tuple[Iterable[int], Sequence[float]]]:
    """(doc ids, weights) of a posting list, a whole block at a time when the codec allows."""
    if type(matcher).__name__ == "FilterMatcher":
        matcher = matcher.child  # deleted documents are dropped later, when ranking
    if type(matcher).__name__ == "W3LeafMatcher" and not getattr(matcher, "_byteids", True):
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


def raw_postings(leaf: Any, fieldname: str, term: str) -> Any:
    """A segment's posting matcher for a term, deletions not applied; None when absent."""
    if (fieldname, term) not in leaf:
        return None
    terms = getattr(leaf, "_terms", None)
    if terms is not None and hasattr(terms, "matcher"):
        # Straight from the codec: whoosh's postings() wraps the matcher to skip deleted docs,
        # which decodes the first block once more; deleted docs are dropped when ranking.
        return terms.matcher(fieldname, term.encode("utf-8"), leaf.schema[fieldname].format)
    return leaf.postings(fieldname, term)


def _column_values(leaf: Any, name: str) -> array[int]:
    """All values of a numeric column of one segment, read at once when the codec allows."""
    reader = leaf.column_reader(name, translate=False)
    count = leaf.doc_count_all()
    dbfile = getattr(reader, "_dbfile", None)
    if type(reader).__qualname__ == "NumericColumn.Reader" and dbfile is not None:
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


class SegmentCache:
    """Per-segment data that never changes once a segment is written (facts, key doc sets)."""

    def __init__(self) -> None:
        self._facts: dict[str, array[int]] = {}
        self._docs: dict[tuple[str, str, str], frozenset[int]] = {}
        self._factors: dict[tuple[str, int, bool], array[float]] = {}

    @staticmethod
    def _name(leaf: Any) -> str:
        return str(leaf.segment().segment_id())

    def facts(self, leaf: Any) -> array[int]:
        name = self._name(leaf)
        if name not in self._facts:
            self._facts[name] = _column_values(leaf, "facts")
        return self._facts[name]

    def factors(self, leaf: Any, today: int, include_expired: bool) -> array[float]:
        """importance x freshness multiplier of every doc of a segment on one day."""
        key = (self._name(leaf), today, include_expired)
        if key not in self._factors:
            memo: dict[int, float] = {}
            values = array("d")
            for packed in self.facts(leaf):
                factor = memo.get(packed)
                if factor is None:
                    factor = memo[packed] = rank_factor(packed, today, include_expired)
                values.append(factor)
            self._factors[key] = values
        return self._factors[key]

    def local_docs(self, leaf: Any, fieldname: str, value: str) -> frozenset[int]:
        key = (self._name(leaf), fieldname, value)
        if key not in self._docs:
            docs: set[int] = set()
            matcher = raw_postings(leaf, fieldname, value)
            if matcher is not None:
                for ids, _weights in matcher_blocks(matcher):
                    docs.update(ids)
            self._docs[key] = frozenset(docs)
        return self._docs[key]

    def retain(self, leaves: list[tuple[Any, int]]) -> None:
        """Forget segments no longer in the index."""
        live = {self._name(leaf) for leaf, _offset in leaves}
        self._facts = {k: v for k, v in self._facts.items() if k in live}
        self._docs = {k: v for k, v in self._docs.items() if k[0] in live}
        self._factors = {k: v for k, v in self._factors.items() if k[0] in live}


@dataclass
class View:
    """An open reader and what has been computed from it (valid until the index changes)."""

    reader: Any
    folder: str
    generation: int
    cache: SegmentCache
    _docsets: dict[tuple[str, str], frozenset[int]] = field(default_factory=dict)
    _facts: array[int] | None = None
    _deleted: frozenset[int] | None = None
    _factor_cache: dict[tuple[int, bool], array[float]] = field(default_factory=dict)

    def leaves(self) -> list[tuple[Any, int]]:
        return list(self.reader.leaf_readers())

    def postings(self, fieldname: str, term: str) -> Iterator[tuple[Iterable[int], Sequence[float]]]:
        """Posting blocks of a term over all segments, with global doc numbers."""
        for leaf, offset in self.leaves():
            matcher = raw_postings(leaf, fieldname, term)
            if matcher is None:
                continue
            for ids, weights in matcher_blocks(matcher):
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
        return (TERMS, term) in self.reader

    def expand(self, word: str) -> list[str]:
        """Index terms extending `word`, or the longest term `word` extends (a cut-off stem)."""
        if len(word) < MIN_PREFIX_CHARS:
            return []
        reader = self.reader
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

    def run(self, request: SearchRequest) -> list[SearchHit]:
        """Score, filter and rank; build the top hits."""
        groups = query_groups(request.query)
        reader = self.reader
        frequency: dict[str, int] = {}

        def doc_frequency(term: str) -> int:
            if term not in frequency:
                frequency[term] = reader.doc_frequency(TERMS, term)
            return frequency[term]

        plans = plan_words(groups, lambda t: doc_frequency(t) > 0, self.expand)
        doc_count = max(1, reader.doc_count_all())
        scores = score_entries(plans, lambda t: self.postings(TERMS, t),
                               lambda t: idf(doc_count, doc_frequency(t)), doc_count)
        docs = self._admitted(scores.docs, request)
        if not docs:
            return []
        words = highlight_words(groups)
        facts = self.facts()
        return [_hit(fields, score, EntryFacts.unpack(facts[doc]).freshness(request.now), words)
                for doc, score, fields in self._top(scores, docs, request)]

    def _admitted(self, matching: set[int], request: SearchRequest) -> list[int]:
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

    def factors(self, request: SearchRequest) -> array[float]:
        """importance x freshness multiplier of every doc on the request's day (0.0 = hidden)."""
        key = (request.now.toordinal(), request.include_all)
        if key not in self._factor_cache:
            values = array("d")
            for leaf, _offset in self.leaves():
                values.extend(self.cache.factors(leaf, *key))
            self._factor_cache[key] = values
        return self._factor_cache[key]

    def _top(self, scores: Scores, docs: list[int],
             request: SearchRequest) -> list[tuple[int, float, dict[str, Any]]]:
        """The best `limit` docs by final score; ties by path and line (all loops run in C)."""
        finals = list(map(mul, scores.bases(docs), map(self.factors(request).__getitem__, docs)))
        best = heapq.nlargest(request.limit, finals)
        best = [score for score in best if score > 0.0]
        if not best:
            return []
        cut = best[-1] - 1e-9
        chosen = []
        for index in compress(range(len(docs)), map(cut.__le__, finals)):
            doc, score = docs[index], finals[index]
            fields = self.reader.stored_fields(doc)
            chosen.append((sort_key(score, fields["path"], fields["line"]), doc, score, fields))
        chosen.sort(key=itemgetter(0))
        return [(doc, score, fields) for _key, doc, score, fields in chosen[: request.limit]]


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


class DocLookup:
    """Doc numbers and stored fields of a file's entries in the segments a writer starts from."""

    # The manifest says which segment holds a file, so only that segment is opened (for files
    # written by a full rebuild: the rebuild's segments; for unknown files: all of them).

    def __init__(self, writer: Any, files: dict[str, FileRecord], view: View | None,
                 open_segment: Callable[[Any], Any]) -> None:
        self._open_segment = open_segment
        self._files = files
        self._segments: list[tuple[Any, int]] = []
        offset = 0
        for segment in writer.segments:
            self._segments.append((segment, offset))
            offset += segment.doc_count_all()
        ids = [segment.segment_id() for segment, _ in self._segments]
        self._view = view if view is not None and [
            leaf.segment().segment_id() for leaf, _ in view.leaves()] == ids else None
        self._referenced = {record.segment for record in files.values()}
        self._readers: dict[str, Any] = {}

    def _reader(self, segment: Any) -> Any:
        name = segment.segment_id()
        if name not in self._readers:
            self._readers[name] = self._open_segment(segment)
        return self._readers[name]

    def _holders(self, relpath: str) -> list[tuple[Any, int]]:
        record = self._files.get(relpath)
        if record is None:
            return self._segments
        if record.segment:
            return [(s, o) for s, o in self._segments if s.segment_id() == record.segment]
        return [(s, o) for s, o in self._segments if s.segment_id() not in self._referenced]

    def docnums(self, relpath: str) -> list[int]:
        if self._view is not None:
            return sorted(self._view.docset("path", relpath))
        out: list[int] = []
        for segment, offset in self._holders(relpath):
            reader = self._reader(segment)
            if ("path", relpath) in reader:
                for ids, _weights in matcher_blocks(reader.postings("path", relpath)):
                    out.extend(offset + doc for doc in ids)
        return out

    def stored_fields(self, docnum: int) -> dict[str, Any]:
        if self._view is not None:
            return dict(self._view.reader.stored_fields(docnum))
        for segment, offset in reversed(self._segments):
            if docnum >= offset:
                return dict(self._reader(segment).stored_fields(docnum - offset))
        raise KeyError(docnum)

    def close(self) -> None:
        for reader in self._readers.values():
            with contextlib.suppress(Exception):
                reader.close()
