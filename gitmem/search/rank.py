"""Ranking and snippets for search (pure: no I/O, no whoosh).

Index time: each entry's terms get one BM25F weight that combines title, topic and body
(field boosts and length normalisation against fixed nominal lengths, then tf saturation).
Query time, for the entries that match:

  final score = sum over query words of idf(term) x weight(entry, term)   (BM25F)
                x coverage bonus   (share of query words the entry matches)
                x importance boost (critical > high > normal > low)
                x freshness factor (stale and unverified entries rank lower, never vanish)

Ties are broken by path, then line, so equal matches always come out in the same order.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from itertools import filterfalse

from gitmem.format.freshness import DEFAULT_WINDOWS, GRADE_PENALTY, Freshness, classify, parse_day
from gitmem.search.analysis import QueryGroup, index_terms
from gitmem.search.partial import Lexicon, partial_alternatives

K1 = 1.2


@dataclass(frozen=True)
class FieldWeighting:
    """BM25F parameters of one text field."""

    boost: float
    b: float
    nominal_length: float


FIELDS: dict[str, FieldWeighting] = {
    "title": FieldWeighting(boost=2.5, b=0.5, nominal_length=8.0),
    "topic": FieldWeighting(boost=1.5, b=0.3, nominal_length=3.0),
    "body": FieldWeighting(boost=1.0, b=0.75, nominal_length=60.0),
}
ID_WEIGHT = 4.0  # an entry's own Id, indexed as one strong term
DATE_WEIGHT = 1.5  # a day or month the entry is about (dates.py), like a word in a short title
IMPORTANCE_BOOST: dict[str, float] = {"critical": 1.3, "high": 1.15, "normal": 1.0, "low": 0.85}
COVERAGE_BONUS = 0.6  # an entry matching every query word scores up to 60% more
SNIPPET_CHARS = 200
_SPACE_RE = re.compile(r"\s+")


# -- index time ------------------------------------------------------------------------------


def term_weights(title: str, body: str, topic: str, entry_id: str = "",
                 dates: Sequence[str] = ()) -> dict[str, float]:
    """BM25F weight of every term of an entry (saturated, length-normalised, field-boosted);
    `dates`: its day and month terms, each of one fixed weight."""
    combined: dict[str, float] = {}
    for name, text in (("title", title), ("topic", topic), ("body", body)):
        terms = index_terms(text)
        if not terms:
            continue
        spec = FIELDS[name]
        norm = spec.boost / (1.0 - spec.b + spec.b * len(terms) / spec.nominal_length)
        for term in terms:
            combined[term] = combined.get(term, 0.0) + norm
    weights = {term: tf * (K1 + 1.0) / (tf + K1) for term, tf in combined.items()}
    if entry_id:
        weights[entry_id.lower()] = weights.get(entry_id.lower(), 0.0) + ID_WEIGHT
    for term in dates:
        weights[term] = DATE_WEIGHT
    return weights


# -- query time ------------------------------------------------------------------------------


def idf(doc_count: int, doc_frequency: int) -> float:
    """BM25 inverse document frequency (always positive)."""
    return math.log(1.0 + (doc_count - doc_frequency + 0.5) / (doc_frequency + 0.5))


@dataclass(frozen=True)
class WordPlan:
    """How one query word matches: the best of its alternatives, or all of its parts together."""

    alternatives: tuple[tuple[str, float], ...]  # (term, multiplier); < 1.0: a partial match
    parts: tuple[str, ...] = ()

    def terms(self) -> list[str]:
        return [t for t, _ in self.alternatives] + list(self.parts)

    @property
    def partial(self) -> bool:
        """True when some entry may match this word only partially."""
        return any(multiplier < 1.0 for _term, multiplier in self.alternatives)


def plan_words(groups: Sequence[QueryGroup], lexicon: Lexicon, limit: int) -> list[WordPlan]:
    """One plan per query word; words that cannot match anything get an empty plan.

    A plain word that matches no entry whole is matched as part of longer words (partial.py);
    so is a one-word query with fewer than `limit` whole matches, to fill the page below them.
    """
    few = limit if len(groups) == 1 else 1
    plans: list[WordPlan] = []
    for group in groups:
        frequencies = {t: lexicon.doc_frequency(t) for t in group.terms}
        alternatives = [(t, group.weight) for t, df in frequencies.items() if df > 0]
        parts = tuple(p for p in group.parts if p not in group.terms)
        if len(parts) < 2 or not all(lexicon.doc_frequency(p) > 0 for p in parts):
            parts = ()
        if group.prefixable and not parts and sum(frequencies.values()) < few:
            alternatives += partial_alternatives(group.raw, lexicon, exclude=frequencies)
        plans.append(WordPlan(tuple(alternatives), parts))
    return plans


Postings = Callable[[str], Iterable[tuple[Iterable[int], Sequence[float]]]]


def _best_of(plan: WordPlan, postings: Postings, idf_of: Callable[[str], float],
             best: list[float]) -> tuple[set[int], set[int]]:
    """Score of one query word per entry into `best` (zeroed, indexed by docnum): its best
    alternative, or the sum of all its parts. Returns the entries matched and those matched whole."""
    seen: set[int] = set()
    whole: set[int] = set()
    for term, multiplier in plan.alternatives:
        factor = idf_of(term) * multiplier
        for ids, weights in postings(term):
            block = tuple(ids)
            for doc, weight in zip(block, weights, strict=True):
                score = factor * weight
                if score > best[doc]:
                    best[doc] = score
            seen.update(block)
            if multiplier >= 1.0:
                whole.update(block)
    if plan.parts:
        sums: dict[int, float] = {}
        counts: dict[int, int] = {}
        for part in plan.parts:
            factor = idf_of(part)
            for ids, weights in postings(part):
                for doc, weight in zip(ids, weights, strict=True):
                    sums[doc] = sums.get(doc, 0.0) + factor * weight
                    counts[doc] = counts.get(doc, 0) + 1
        need = len(plan.parts)
        for doc, count in counts.items():
            if count == need:
                seen.add(doc)
                whole.add(doc)
                best[doc] = max(best[doc], sums[doc])
    return seen, whole


def coverage_factor(matched: int, total: int) -> float:
    """Bonus for matching more of the query's words: 1.0 for one word, up to 1 + COVERAGE_BONUS."""
    if total <= 1 or matched <= 1:
        return 1.0
    return 1.0 + COVERAGE_BONUS * (matched - 1) / (total - 1)


@dataclass
class Scores:
    """Per-document BM25F sums and matched-word counts of one query (indexed by docnum)."""

    total: Sequence[float] | Mapping[int, float]
    matched: bytearray | None  # None: one query word, so each doc in `docs` matched it
    docs: set[int]
    words: int
    whole: set[int] | None = None  # docs matching some word whole; None: all of them

    def bases(self, docs: Sequence[int]) -> list[float]:
        """BM25F x coverage bonus of each doc (the loops run in C via map)."""
        if self.matched is None:  # one word: no coverage bonus to give
            return list(map(self.total.__getitem__, docs))
        bonus = [coverage_factor(n, self.words) for n in range(256)]
        return list(map(operator.mul, map(self.total.__getitem__, docs),
                        map(bonus.__getitem__, map(self.matched.__getitem__, docs))))

    def coverage(self, doc: int) -> float:
        """The coverage bonus of one doc (1.0 for a doc matching no query word)."""
        return 1.0 if self.matched is None else coverage_factor(self.matched[doc], self.words)

    def tiers(self, docs: list[int]) -> list[list[int]]:
        """Docs that match some query word whole, then docs found only through partial words."""
        if self.whole is None:
            return [docs]
        inside = self.whole.__contains__  # filter in C: a prefix can match ten thousand docs
        return [list(filter(inside, docs)), list(filterfalse(inside, docs))]


class _Sparse(dict[int, float]):
    """Scores of the docs a query matched; every other doc scores 0.0."""

    def __missing__(self, key: int) -> float:
        return 0.0


def score_entries(plans: Sequence[WordPlan], postings: Postings, idf_of: Callable[[str], float],
                  doc_count: int) -> Scores:
    """Accumulate BM25F per document over all query words; docnums are < doc_count."""
    if len(plans) == 1 and not plans[0].parts:
        return _one_word(plans[0], postings, idf_of)
    total = [0.0] * doc_count  # accumulators indexed by docnum: cheaper than dict updates
    matched = bytearray(doc_count)
    seen: set[int] = set()
    whole: set[int] | None = set() if any(plan.partial for plan in plans) else None
    for plan in plans:
        if len(plan.alternatives) == 1 and not plan.parts:  # the common case: one plain term
            term, multiplier = plan.alternatives[0]
            factor = idf_of(term) * multiplier
            for ids, weights in postings(term):
                block = tuple(ids)
                for doc, weight in zip(block, weights, strict=True):
                    total[doc] += factor * weight
                    matched[doc] += 1
                seen.update(block)
                if whole is not None and multiplier >= 1.0:
                    whole.update(block)
        elif plan.alternatives or plan.parts:
            best = [0.0] * doc_count
            found, whole_here = _best_of(plan, postings, idf_of, best)
            for doc in found:
                total[doc] += best[doc]
                matched[doc] += 1
            seen.update(found)
            if whole is not None:
                whole.update(whole_here)
    return Scores(total, matched, seen, min(len(plans), 255), whole)


def _one_word(plan: WordPlan, postings: Postings, idf_of: Callable[[str], float]) -> Scores:
    """A one-word query (what the page asks as a person types): each doc's best alternative,
    kept for the matched docs alone. The first term's scores fill the dict in C, with no Python
    step per doc; a later alternative keeps a doc's better score, as _best_of does."""
    best = _Sparse()
    whole: set[int] | None = set() if plan.partial else None
    for number, (term, multiplier) in enumerate(plan.alternatives):
        factor = idf_of(term) * multiplier
        for ids, weights in postings(term):
            block = ids if whole is None or multiplier < 1.0 else tuple(ids)
            pairs = zip(block, map(factor.__mul__, weights), strict=True)
            if number == 0:  # a term holds each doc once: nothing to compare yet
                best.update(pairs)
            else:
                known = best.get
                best.update([(doc, score) for doc, score in pairs if score > known(doc, 0.0)])
            if whole is not None and multiplier >= 1.0:
                whole.update(block)
    return Scores(best, None, set(best), 1, whole)


DATE_BOOST = 1.0  # a question's date counts this many times a plain word's match


def date_plan(terms: Sequence[str], lexicon: Lexicon) -> WordPlan:
    """The plan of a question's span of days: any of its day (or month) terms matches."""
    return WordPlan(tuple((t, DATE_BOOST) for t in terms if lexicon.doc_frequency(t) > 0))


# -- final ranking ---------------------------------------------------------------------------


IMPORTANCE_CODES: dict[str, int] = {"low": 0, "normal": 1, "high": 2, "critical": 3}
VOLATILITY_CODES: dict[str, int] = {"stable": 0, "normal": 1, "volatile": 2}
_IMPORTANCE_NAMES = {code: name for name, code in IMPORTANCE_CODES.items()}
_VOLATILITY_NAMES = {code: name for name, code in VOLATILITY_CODES.items()}
# Freshness window in days by volatility code (stable, normal, volatile; code 3 is unused and
# reads as normal), from the store's settings or the defaults.
Windows = tuple[int, int, int, int]


def window_days(windows: Mapping[str, int] | None = None) -> Windows:
    """The windows of a store's settings (missing volatilities keep their defaults), by code."""
    merged = {**DEFAULT_WINDOWS, **(windows or {})}
    stable, normal, volatile = (int(merged[name]) for name in ("stable", "normal", "volatile"))
    return (stable, normal, volatile, normal)


DEFAULT_WINDOW_DAYS = window_days()


@dataclass(frozen=True)
class EntryFacts:
    """What ranking needs about an entry, packable into one integer for a per-document column."""

    importance: str
    volatility: str
    basis: int  # ordinal of Verified, else Created; 0 when neither is a date
    until: int  # ordinal of Valid-until; 0 when absent

    @classmethod
    def from_fields(cls, importance: str, volatility: str, verified: str, created: str,
                    valid_until: str) -> EntryFacts:
        basis = parse_day(verified) or parse_day(created)
        until = parse_day(valid_until)
        return cls(importance if importance in IMPORTANCE_CODES else "normal",
                   volatility if volatility in VOLATILITY_CODES else "normal",
                   basis.toordinal() if basis else 0, until.toordinal() if until else 0)

    def pack(self) -> int:
        """importance (2 bits) | volatility (2 bits) | basis (24 bits) | until (24 bits)."""
        return (IMPORTANCE_CODES[self.importance] | VOLATILITY_CODES[self.volatility] << 2
                | self.basis << 4 | self.until << 28)

    @classmethod
    def unpack(cls, packed: int) -> EntryFacts:
        return cls(_IMPORTANCE_NAMES[packed & 3], _VOLATILITY_NAMES.get(packed >> 2 & 3, "normal"),
                   packed >> 4 & 0xFFFFFF, packed >> 28 & 0xFFFFFF)

    def freshness(self, now: date, windows: Windows = DEFAULT_WINDOW_DAYS) -> Freshness:
        """The same grade `freshness.grade` gives with these windows, from the packed dates."""
        window = windows[VOLATILITY_CODES.get(self.volatility, 1)]
        today = now.toordinal()
        age = today - self.basis if self.basis else None
        return classify(age, bool(self.until and self.until < today), window)


_IMPORTANCE_BY_CODE = [IMPORTANCE_BOOST[_IMPORTANCE_NAMES[code]] for code in range(4)]


def rank_factor(packed: int, today: int, include_expired: bool,
                windows: Windows = DEFAULT_WINDOW_DAYS) -> float:
    """importance x freshness multiplier of packed facts on day ordinal `today`; 0.0 hides it."""
    basis = packed >> 4 & 0xFFFFFF
    until = packed >> 28 & 0xFFFFFF
    if until and until < today:
        if not include_expired:
            return 0.0
        grade_name = "expired"
    elif not basis:
        grade_name = "unverified"
    else:
        age = today - basis
        window = windows[packed >> 2 & 3]
        grade_name = "stale" if age > window else "aging" if age > window / 2 else "fresh"
    return _IMPORTANCE_BY_CODE[packed & 3] * GRADE_PENALTY[grade_name]


def sort_key(score: float, path: str, line: int) -> tuple[float, str, int]:
    """Best score first; equal scores by path then line (rounding hides float noise)."""
    return (-round(score, 9), path, line)


# -- snippets --------------------------------------------------------------------------------


def _find_first(lower: str, words: list[str]) -> tuple[int, int]:
    """(position, length) of the earliest occurrence of any word; (-1, 0) if none."""
    best, length = -1, 0
    for word in words:
        pos = lower.find(word)
        if pos >= 0 and (best < 0 or pos < best or (pos == best and len(word) > length)):
            best, length = pos, len(word)
    return best, length


def _cut(text: str, start: int, end: int) -> str:
    """text[start:end] moved in to word boundaries where one is near."""
    if start > 0:
        space = text.find(" ", start, min(start + 20, end))
        if space >= 0:
            start = space + 1
    if end < len(text):
        space = text.rfind(" ", max(start, end - 20), end)
        if space > start:
            end = space
    return text[start:end].strip()


def snippet(text: str, words: list[str], limit: int = SNIPPET_CHARS) -> str:
    """A short excerpt (at most `limit` characters) around the first matching word."""
    flat = _SPACE_RE.sub(" ", text).strip()
    if len(flat) <= limit:
        return flat
    pos, length = _find_first(flat.lower(), words)
    budget = limit - 2  # room for the two ellipses
    start = 0 if pos < 0 else max(0, min(pos - (budget - length) // 3, len(flat) - budget))
    end = min(len(flat), start + budget)
    body = _cut(flat, start, end)
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(flat) else ""
    return f"{prefix}{body}{suffix}"
