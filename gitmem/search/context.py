"""Context in ranking: an entry's neighbours in its topic lift it when they match the query.

In an episodic topic the turns around an answer often carry the question's words ("Ana, what do
you think of the release?" just before Ana's answer); under one heading the entries next to a
match are about the same thing. Entries of one file are consecutive documents of one segment, and
each document's facts carry a 12-bit code of its file's path, so "the entry before and after" is
docnum - 1 and + 1 with the same code: no stored field is read.

Each of the best LIFT_SOURCES matches passes LIFT (< 1) times its score to its two neighbours
(each neighbour keeps the largest lift offered). A neighbour that shares no word with the query
so ranks below the match that lifted it; one that matches some words itself can pass it (in a
dialogue the answer often names the person asked about, the question the topic). An entry that
matched a query word only in part (partial.py) is not lifted out of the tier below the whole
matches.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

FILE_SHIFT = 52  # bits 52..63 of the packed facts (rank.EntryFacts.pack uses 0..51)
FILE_MASK = 0xFFF
LIFT = 0.7
LIFT_SOURCES = 20


def file_code(path: str) -> int:
    """The 12-bit code of a file path, shifted into place in the facts column."""
    return (zlib.crc32(path.encode("utf-8")) & FILE_MASK) << FILE_SHIFT


@dataclass
class Lift:
    """What neighbour lift gave: lifted doc -> (amount added to its score, doc that lifted it)."""

    given: dict[int, tuple[float, int]] = field(default_factory=dict)


def neighbour_lift(sources: Sequence[tuple[int, float]], facts: Sequence[int],
                   admitted: Callable[[set[int]], set[int]]) -> Lift:
    """Lifts from these (doc, final score) matches to their neighbours in the same file (pure)."""
    count = len(facts)
    offers: dict[int, tuple[float, int]] = {}
    for source, score in sources:
        code = facts[source] >> FILE_SHIFT
        for near in (source - 1, source + 1):
            if 0 <= near < count and facts[near] >> FILE_SHIFT == code:
                amount = LIFT * score
                if amount > offers.get(near, (0.0, 0))[0]:
                    offers[near] = (amount, source)
    allowed = admitted(set(offers))
    return Lift({doc: offer for doc, offer in offers.items() if doc in allowed})


FEEDBACK_DOCS = 3
FEEDBACK_TERMS = 6
FEEDBACK_WEIGHT = 0.3


def feedback_terms(top_fields: Sequence[dict[str, object]], idf_of: Callable[[str], float],
                   exclude: set[str]) -> list[str]:
    """Pseudo-relevance feedback: the terms that weigh most (weight x idf) in the best hits."""
    from gitmem.search.rank import term_weights

    totals: dict[str, float] = {}
    for fields in top_fields[:FEEDBACK_DOCS]:
        topic = str(fields.get("topic", "")).replace("-", " ")
        weights = term_weights(str(fields.get("title", "")), str(fields.get("body", "")), topic)
        for term, weight in weights.items():
            if term not in exclude and len(term) > 2 and not term.isdigit():
                totals[term] = totals.get(term, 0.0) + weight * idf_of(term)
    return sorted(totals, key=lambda t: (-totals[t], t))[:FEEDBACK_TERMS]
