"""Context in ranking: an entry's neighbours in its topic lift it when they match the query.

In an episodic topic the turns around an answer often carry the question's words ("Ana, what do
you think of the release?" just before Ana's answer); under one heading the entries next to a
match are about the same thing. Entries of one file are consecutive documents of one segment, and
each document's facts carry a 12-bit code of its file's path, so "the entry before and after" is
docnum - 1 and + 1 with the same code: no stored field is read.

Each of the best LIFT_SOURCES matches passes LIFT times its score to its two neighbours (each
neighbour keeps the largest lift offered), so a neighbour ranks near the match that lifted it but
an exact hit is never pushed down by its own neighbours.
"""

from __future__ import annotations

import heapq
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


def neighbour_lift(docs: Sequence[int], finals: Sequence[float], facts: Sequence[int],
                   admitted: Callable[[set[int]], set[int]]) -> Lift:
    """Lifts from the best matches to their neighbours in the same file (pure)."""
    lift = Lift()
    count = len(facts)
    best = heapq.nlargest(LIFT_SOURCES, range(len(docs)), key=finals.__getitem__)
    offers: dict[int, tuple[float, int]] = {}
    for index in best:
        source, score = docs[index], finals[index]
        if score <= 0.0:
            continue
        code = facts[source] >> FILE_SHIFT
        for near in (source - 1, source + 1):
            if 0 <= near < count and facts[near] >> FILE_SHIFT == code:
                amount = LIFT * score
                if amount > offers.get(near, (0.0, 0))[0]:
                    offers[near] = (amount, source)
    allowed = admitted(set(offers))
    lift.given = {doc: offer for doc, offer in offers.items() if doc in allowed}
    return lift
