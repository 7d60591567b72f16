"""Partial words: which index terms a half-typed or mid-word query word may stand for.

A plain query word (letters only) that matches no entry whole, or the only word of a query with
fewer whole matches than the page holds (rank.plan_words), is looked up as part of longer words,
in three kinds, best first:
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
used (by kind, then shortest first: the fewer letters a term adds, the likelier it is the word
meant), and together they read at most POSTINGS_BUDGET postings (the first one always counts);
the dictionary is not scanned for infixes once those bounds are reached.
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


class _Selection:
    """The terms chosen so far for one partial word, best first, within the bounds."""

    def __init__(self, lexicon: Lexicon, exclude: Iterable[str]) -> None:
        self._lexicon = lexicon
        self._skip = set(exclude)
        self.seen: set[str] = set()
        self.chosen: list[tuple[str, float]] = []
        self._spent = 0

    @property
    def full(self) -> bool:
        return len(self.chosen) >= MAX_TERMS or self._spent >= POSTINGS_BUDGET

    def offer(self, terms: Iterable[str], weight: float) -> None:
        """Take new terms, shortest first, while they fit (the first one always does)."""
        fresh = sorted(set(terms) - self.seen, key=lambda t: (len(t), t))
        self.seen.update(fresh)
        for term in fresh[: 4 * MAX_TERMS]:
            if self.full:
                return
            frequency = self._lexicon.doc_frequency(term)
            if term in self._skip or frequency <= 0:
                continue
            if self.chosen and self._spent + frequency > POSTINGS_BUDGET:
                continue
            self.chosen.append((term, weight))
            self._spent += frequency


def partial_alternatives(word: str, lexicon: Lexicon,
                         exclude: Iterable[str] = ()) -> list[tuple[str, float]]:
    """(term, weight) pairs a partial word stands for, best first, within MAX_TERMS and
    POSTINGS_BUDGET; `exclude`: its whole-word terms. See the module docstring."""
    if len(word) < MIN_PREFIX_CHARS:
        return []
    selection = _Selection(lexicon, exclude)
    completed = completions(word)
    present = [s for s in completed if lexicon.doc_frequency(s) > 0]
    selection.offer(present + cut_stems(word, lexicon), PREFIX_WEIGHT)
    if not selection.full:
        selection.offer(lexicon.prefixed(word, PREFIX_SCAN), PREFIX_WEIGHT)
    if len(word) < MIN_INFIX_CHARS or selection.full:
        return selection.chosen  # an infix term could not be taken: spare the scans
    infixes: list[str] = []
    for fragment in _fragments(word, (s for s in completed if s not in present)):
        infixes += lexicon.containing(fragment, INFIX_SCAN)
    if not infixes and not selection.seen and core(word) != word:
        infixes = lexicon.containing(core(word), INFIX_SCAN)
    selection.offer(infixes, INFIX_WEIGHT)
    return selection.chosen
