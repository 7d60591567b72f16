"""Reading the search index: postings, per-document facts, filters and top hits.

Works on the whoosh reader objects `index.py` opens, without importing whoosh itself: the
hot loops read whole posting blocks, whole columns and the term dictionary through codec
internals (segments.py), and accumulate scores term at a time.
"""

from __future__ import annotations

import heapq
import threading
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from itertools import compress, islice
from operator import itemgetter, mul
from typing import Any

from gitmem.search.analysis import highlight_words
from gitmem.search.cache import SegmentCache
from gitmem.search.context import (
    FEEDBACK_WEIGHT,
    LIFT_SOURCES,
    Lift,
    feedback_terms,
    neighbour_lift,
)
from gitmem.search.dates import Anchor
from gitmem.search.events import ANCHOR_CANDIDATES, Event, pick_anchor
from gitmem.search.explain import explain_hit
from gitmem.search.hits import SearchHit, make_hit, shown_texts
from gitmem.search.query import DEFAULT_LEVERS, Levers, anchored, understand
from gitmem.search.rank import (
    EntryFacts,
    Scores,
    Windows,
    WordPlan,
    date_plan,
    idf,
    plan_words,
    score_entries,
    sort_key,
    window_days,
)
from gitmem.search.segments import (
    TERMS,
    deleted_docs,
    matcher_blocks,
    raw_postings,
    segment_name,
)

__all__ = ["SearchRequest", "View"]

HIDDEN_STATUSES = ("forgotten", "superseded", "archived")  # archived: project documents
STORED_KEPT = 2048  # stored fields of this many docs kept per view (~1 KB each)


@dataclass(frozen=True)
class SearchRequest:
    """One search: analysed query, filters, the day freshness is graded on and the store's
    freshness windows (days by volatility; None: the defaults)."""

    query: str
    scopes: Sequence[str] | None
    layer: str | None
    limit: int
    include_all: bool
    now: date
    windows: Mapping[str, int] | None = None
    levers: Levers = DEFAULT_LEVERS
    explain: bool = False
    # How printed text is shown (the caller's secret mask, texts in, texts out); applied to the
    # hits' stored texts before a snippet is cut from the body, so no cut can split a secret.
    shown: Callable[[list[str]], list[str]] | None = None

    def window_days(self) -> Windows:
        return window_days(self.windows)


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
    _factor_cache: dict[tuple[int, bool, Windows], array[float]] = field(default_factory=dict)
    _leaves: list[tuple[Any, int]] | None = None
    _stored: dict[int, dict[str, Any]] = field(default_factory=dict)
    _stored_lock: threading.Lock = field(default_factory=threading.Lock)

    def leaves(self) -> list[tuple[Any, int]]:
        """(segment reader, doc offset) of each segment; none for an index without documents."""
        if self._leaves is None:
            self._leaves = [(leaf, offset) for leaf, offset in self.reader.leaf_readers()
                            if segment_name(leaf) is not None]
        return self._leaves

    def postings(self, fieldname: str, term: str) -> Iterator[tuple[Iterable[int], Sequence[float]]]:
        """Posting blocks of a term over all segments, with global doc numbers (a `terms`
        posting list comes decoded from the segment cache, shared by every reader of the index)."""
        for leaf, offset in self.leaves():
            if fieldname == TERMS:
                ids, weights = self.cache.postings(leaf, term)
                if ids:
                    yield (map(offset.__add__, ids) if offset else ids), weights
                continue
            matcher = raw_postings(leaf, fieldname, term)
            if matcher is None:
                continue
            for block_ids, block_weights in matcher_blocks(matcher):
                yield (map(offset.__add__, block_ids) if offset else block_ids), block_weights

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
                    docs.update(offset + d for d in deleted_docs(leaf))
            self._deleted = frozenset(docs)
        return self._deleted

    def stored(self, doc: int) -> dict[str, Any]:
        """The stored fields of a doc (to read, not to change). The last STORED_KEPT read are
        kept: they never change while the view lives, and the searches of someone typing a
        query (`dep`, `depl`, `deploy`) mostly show the same entries (~60 us each to read)."""
        fields = self._stored.get(doc)
        if fields is None:
            fields = self.reader.stored_fields(doc)
            with self._stored_lock:  # the page's threads share a view
                while len(self._stored) >= STORED_KEPT:
                    del self._stored[next(iter(self._stored))]  # the oldest first
                self._stored[doc] = fields
        return fields

    def doc_frequency(self, term: str) -> int:
        """Entries holding `term` in the `terms` field (deleted ones until their segment goes)."""
        return sum(self.cache.dictionary(leaf).doc_frequency(leaf, term)
                   for leaf, _offset in self.leaves())

    def prefixed(self, prefix: str, limit: int) -> dict[str, int]:
        """Up to `limit` index terms starting with `prefix`, in dictionary order, with their doc
        frequencies, over all segments (each segment's dictionary is searched in memory:
        segments.TermDictionary)."""
        counts: dict[bytes, int] = {}
        for leaf, _offset in self.leaves():
            for raw, frequency in self.cache.dictionary(leaf).prefixed(leaf, prefix, limit):
                counts[raw] = counts.get(raw, 0) + frequency
        return {raw.decode("utf-8"): counts[raw] for raw in islice(sorted(counts), limit)}

    def containing(self, fragment: str, limit: int) -> list[str]:
        """Up to `limit` index terms containing `fragment` anywhere, over all segments."""
        found: dict[str, None] = {}
        for leaf, _offset in self.leaves():
            terms = self.cache.dictionary(leaf).containing(leaf, fragment, limit - len(found))
            found.update(dict.fromkeys(terms))
            if len(found) >= limit:
                break
        return list(found)

    def run(self, request: SearchRequest) -> list[SearchHit]:
        """Score, filter and rank; build the top hits."""
        question = understand(request.query, request.now, request.levers)
        lexicon = _MemoLexicon(self)
        doc_count = max(1, self.reader.doc_count_all())

        def idf_of(term: str) -> float:
            return idf(doc_count, lexicon.doc_frequency(term))

        if question.event is not None:  # only then: a question naming no event costs nothing
            anchor = self._anchor(question.event, request, lexicon, idf_of, doc_count)
            question = anchored(question, anchor, request.query, request.now, request.levers)
        groups = question.groups
        plans = plan_words(groups, lexicon, request.limit)
        if question.when is not None:
            plans.append(date_plan(question.when.span.terms(), lexicon))
        scores = score_entries(plans, lambda t: self.postings(TERMS, t), idf_of, doc_count)
        docs = self._admitted(scores.docs, request)
        if not docs:
            return []
        lifting = request.levers.neighbours and len(plans) > 1  # a one-word lookup: no context
        if request.levers.feedback:
            first, _lift = self._top(scores, docs, request, lifting)
            known = {term for plan in plans for term in plan.terms()}
            extra = feedback_terms([fields for _d, _s, fields in first], idf_of, known)
            plans = plans + [WordPlan(((term, FEEDBACK_WEIGHT),)) for term in extra]
            scores = score_entries(plans, lambda t: self.postings(TERMS, t), idf_of, doc_count)
            docs = self._admitted(scores.docs, request)
        words = highlight_words(groups)
        facts = self.facts()
        windows = request.window_days()
        top, lift = self._top(scores, docs, request, lifting)
        texts = shown_texts([fields for _doc, _score, fields in top], words, request.shown)
        hits = [make_hit(fields, score, EntryFacts.unpack(facts[doc]).freshness(request.now, windows), text)
                for (doc, score, fields), text in zip(top, texts, strict=True)]
        if request.explain:
            raw = [group.raw for group in groups]
            for hit, (doc, score, fields) in zip(hits, top, strict=True):
                given = lift.given.get(doc) if lift else None
                source = (given[0], dict(self.reader.stored_fields(given[1]))) if given else None
                fresh = EntryFacts.unpack(facts[doc]).freshness(request.now, windows)
                hit.explain = explain_hit(fields, plans, raw, question.when, idf_of, fresh, score,
                                          source)
        return hits

    def _anchor(self, event: Event, request: SearchRequest, lexicon: _MemoLexicon,
                idf_of: Callable[[str], float], doc_count: int) -> Anchor | None:
        """The entry that dates an event: the best whole matches of its words (filters and
        freshness as for the hits), the first of them with a day (events.py)."""
        plans = plan_words(event.groups, lexicon, 1)
        scores = score_entries(plans, lambda t: self.postings(TERMS, t), idf_of, doc_count)
        tier = scores.tiers(self._admitted(scores.docs, request))[0]
        finals = map(mul, scores.bases(tier), map(self.factors(request).__getitem__, tier))
        best = heapq.nlargest(ANCHOR_CANDIDATES, zip(finals, tier, strict=True),
                              key=lambda pair: (pair[0], -pair[1]))  # ties: the earlier entry
        return pick_anchor(event, [self.stored(doc) for score, doc in best
                                   if score > 0.0])

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
        key = (request.now.toordinal(), request.include_all, request.window_days())
        if key not in self._factor_cache:
            values = array("d")
            for leaf, _offset in self.leaves():
                values.extend(self.cache.factors(leaf, *key))
            self._factor_cache[key] = values
        return self._factor_cache[key]

    def _top(self, scores: Scores, docs: list[int], request: SearchRequest,
             lifting: bool) -> tuple[list[tuple[int, float, dict[str, Any]]], Lift | None]:
        """The best `limit` docs by final score, those matching a query word whole first;
        `lifting`: the best of the first tier lift their neighbours (context.py)."""
        factors = self.factors(request)
        top: list[tuple[int, float, dict[str, Any]]] = []
        lift = None
        for tier in scores.tiers(docs):
            want = request.limit - len(top)
            if want <= 0:
                break
            seen = {doc for doc, _score, _fields in top}
            lift_here = lifting and lift is None
            # One pass over the tier (in C) keeps the candidates for both the page and the lift.
            finals = list(map(mul, scores.bases(tier), map(factors.__getitem__, tier)))
            depth = max(LIFT_SOURCES, want + len(seen)) if lift_here else want + len(seen)
            head = [score for score in heapq.nlargest(depth, finals) if score > 0.0]
            if not head:
                continue
            cut = head[-1] - 1e-9
            candidates = list(compress(zip(tier, finals, strict=True), map(cut.__le__, finals)))
            if lift_here:
                lift, lifted = self._lifted(scores, candidates, factors, request)
                candidates += lifted
            top += self._best(candidates, want, seen)
        return top, lift

    def _lifted(self, scores: Scores, candidates: list[tuple[int, float]], factors: array[float],
                request: SearchRequest) -> tuple[Lift, list[tuple[int, float]]]:
        """Neighbour lift from the best candidates: the lifted neighbours with their lifted
        score (a doc already a candidate then appears twice; `_best` keeps its better score)."""
        sources = sorted(candidates, key=itemgetter(1), reverse=True)[:LIFT_SOURCES]
        lift = neighbour_lift(sources, self.facts(), lambda found: set(self._admitted(found, request)))
        lifted: list[tuple[int, float]] = []
        partly = scores.whole
        for doc, (amount, _source) in list(lift.given.items()):
            factor = factors[doc]
            own = scores.total[doc] * scores.coverage(doc) * factor
            if factor <= 0.0 or (partly is not None and own > 0.0 and doc not in partly):
                del lift.given[doc]  # hidden, or a partial match: it keeps its own tier
                continue
            lifted.append((doc, own + amount))
        return lift, lifted

    def _best(self, candidates: list[tuple[int, float]], limit: int,
              seen: set[int]) -> list[tuple[int, float, dict[str, Any]]]:
        """The best `limit` candidates (each doc's best score, none in `seen`); ties by path
        and line."""
        scores: dict[int, float] = {}
        for doc, score in candidates:
            if doc not in seen and score > scores.get(doc, 0.0):
                scores[doc] = score
        best = heapq.nlargest(limit, scores.values())
        if not best:
            return []
        cut = best[-1] - 1e-9
        chosen = []
        for doc, score in scores.items():
            if score >= cut:
                fields = self.stored(doc)
                chosen.append((sort_key(score, fields["path"], fields["line"]), doc, score, fields))
        chosen.sort(key=itemgetter(0))
        return [(doc, score, fields) for _key, doc, score, fields in chosen[:limit]]


class _MemoLexicon:
    """A view's term dictionary for one search, remembering document frequencies."""

    def __init__(self, view: View) -> None:
        self._view = view
        self._frequency: dict[str, int] = {}

    def doc_frequency(self, term: str) -> int:
        if term not in self._frequency:
            self._frequency[term] = self._view.doc_frequency(term)
        return self._frequency[term]

    def prefixed(self, prefix: str, limit: int) -> list[str]:
        found = self._view.prefixed(prefix, limit)
        self._frequency.update(found)  # read with the terms: no second look-up for each
        return list(found)

    def containing(self, fragment: str, limit: int) -> list[str]:
        return self._view.containing(fragment, limit)
