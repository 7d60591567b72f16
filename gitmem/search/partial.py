"""Partial words: which index terms a half-typed or mid-word query word may stand for.

A plain query word (letters only) that matches few entries whole is looked up as part of longer
words, in three kinds, best first:
1. the word typed part of the way through its ending: `stagin` -> staging -> `stage`,
   `deploym` -> deployment; or typed past its stem (`consolida` -> `consolid`);
2. index terms that start with it (`whoos` -> `whoosh`, `stagin` -> `staging.md`);
3. index terms that contain it, its stem or a completed stem (>= 4 letters): `isten` -> `listen`,
   `ndex` -> `index`, `reindex`; when none does, terms that contain its core, the word without
   its last two letters (`lembic` -> `lemb` -> `alemb`, the stem of alembic).
Kinds 1-2 weigh PREFIX_WEIGHT, kind 3 INFIX_WEIGHT of a whole match, and entries found only
through partial words rank after every entry that matches some query word whole (reader.py).

Bounds, so that a common fragment cannot flood the results or the time: at most PREFIX_SCAN
and INFIX_SCAN candidate terms are read from the term dictionary, at most MAX_TERMS of them are
used (shortest first: the fewer letters a term adds, the likelier it is the word meant), and
together they read at most POSTINGS_BUDGET postings (the first one always counts).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from gitmem.search.analysis import stem

PREFIX_WEIGHT = 0.7
INFIX_WEIGHT = 0.5
MIN_PREFIX_CHARS = 3
MIN_INFIX_CHARS = 4
MAX_TERMS = 12  # terms one partial word may stand for
PREFIX_SCAN = 200  # terms read from the dictionary for a prefix
INFIX_SCAN = 400  # terms collected from the dictionary for one infix fragment
POSTINGS_BUDGET = 10_000  # entries read for one partial word (the first term always counts)
MAX_FRAGMENTS = 2  # dictionary scans for one word (a third, for its core, when none matched)
CUT_CHARS = 2  # letters a stem may end before the word typed does
# Word endings a person may stop typing part of the way through (`stagin`, `deploym`).
ENDINGS = (
    "ing", "ings", "ion", "ions", "ation", "ations", "ication", "ment", "ments", "ness", "ed",
    "er", "ers", "es", "ies", "ied", "ity", "ive", "ize", "ized", "izing", "ise", "able", "ible",
    "ful", "less", "ly", "al", "ally", "ence", "ance", "ent", "ant", "ous", "ure", "ship", "ism",
)


class Lexicon(Protocol):
    """What partial matching reads from the index's term dictionary."""

    def doc_frequency(self, term: str) -> int: ...

    def prefixed(self, prefix: str, limit: int) -> list[str]: ...

    def containing(self, fragment: str, limit: int) -> list[str]: ...


def completions(word: str) -> list[str]:
    """Stems of the word with a partly typed ending completed (`stagin` -> `stage`)."""
    stems: dict[str, None] = {}
    for ending in ENDINGS:
        for typed in range(1, len(ending)):
            if word.endswith(ending[:typed]):
                stems[stem(word + ending[typed:])] = None
    return list(stems)


def cut_stems(word: str, lexicon: Lexicon) -> list[str]:
    """The longest index term the word starts with, when the word was typed past its stem."""
    shortest = max(MIN_PREFIX_CHARS + 1, len(word) - 3)
    for size in range(len(word) - 1, shortest - 1, -1):
        if lexicon.doc_frequency(word[:size]) > 0:
            return [word[:size]]
    return []


def _fragments(word: str, absent: Iterable[str]) -> list[str]:
    """Infix fragments: the word, its stem and its completed stems that are not terms
    themselves; one that contains another is dropped (every term containing it contains the
    shorter one)."""
    pool = sorted({f for f in (word, stem(word), *absent) if len(f) >= MIN_INFIX_CHARS},
                  key=len)
    kept: list[str] = []
    for fragment in pool:
        if not any(shorter in fragment for shorter in kept):
            kept.append(fragment)
    return sorted(kept, key=lambda f: (f != word, len(f)))[:MAX_FRAGMENTS]


def core(word: str) -> str:
    """The word without up to CUT_CHARS of its ending (at least MIN_INFIX_CHARS remain): stems
    of whole words can end earlier than the word typed (`alembic` is indexed as `alemb`, so
    `lembic` finds it through `lemb`)."""
    return word[:max(MIN_INFIX_CHARS, len(word) - CUT_CHARS)]


def candidates(word: str, lexicon: Lexicon) -> list[tuple[str, float]]:
    """(term, weight) pairs, best first and unbounded by budget; see the module docstring."""
    if len(word) < MIN_PREFIX_CHARS:
        return []
    completed = completions(word)
    present = [s for s in completed if lexicon.doc_frequency(s) > 0]
    ranked: dict[str, tuple[int, int, str]] = {}

    def add(terms: Iterable[str], kind: int) -> None:
        for term in terms:
            if term not in ranked:
                ranked[term] = (kind, len(term), term)

    add(present, 0)
    add(cut_stems(word, lexicon), 0)
    add(lexicon.prefixed(word, PREFIX_SCAN), 1)
    if len(word) >= MIN_INFIX_CHARS and len(ranked) < MAX_TERMS:
        for fragment in _fragments(word, (s for s in completed if s not in present)):
            add(lexicon.containing(fragment, INFIX_SCAN), 2)
        if not ranked and core(word) != word:
            add(lexicon.containing(core(word), INFIX_SCAN), 3)
    order = sorted(ranked, key=ranked.__getitem__)
    return [(t, PREFIX_WEIGHT if ranked[t][0] < 2 else INFIX_WEIGHT) for t in order]


def partial_alternatives(word: str, lexicon: Lexicon,
                         exclude: Iterable[str] = ()) -> list[tuple[str, float]]:
    """The terms a partial word stands for, within MAX_TERMS and POSTINGS_BUDGET."""
    skip = set(exclude)
    chosen: list[tuple[str, float]] = []
    spent = 0
    for term, weight in candidates(word, lexicon)[: 4 * MAX_TERMS]:
        if term in skip:
            continue
        frequency = lexicon.doc_frequency(term)
        if frequency <= 0 or (chosen and spent + frequency > POSTINGS_BUDGET):
            continue
        chosen.append((term, weight))
        spent += frequency
        if len(chosen) >= MAX_TERMS:
            break
    return chosen
