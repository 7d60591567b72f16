"""Query understanding: what a whole question asks for, beyond its plain words.

- its date expression (dates.py) leaves the words and becomes a span of days to match;
- question words and filler are dropped (analysis.QUERY_STOPWORDS);
- names (a capitalised word after the first) and numbers weigh NAME_WEIGHT times a plain word.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from datetime import date

from gitmem.search.analysis import QueryGroup, query_groups
from gitmem.search.dates import When, parse_when

NAME_WEIGHT = 2.0
# Filler of spoken questions, dropped like the question words unless nothing else is left.
FILLER: frozenset[str] = frozenset(
    ["say", "said", "says", "tell", "told", "talk", "talked", "mention", "mentioned", "think",
     "thought", "happened", "happen", "going", "thing", "things", "something", "anything",
     "ever", "also", "just", "really", "other", "both", "each", "time", "times", "now", "new"]
)


@dataclass(frozen=True)
class Levers:
    """Which parts of query understanding and context a search uses (all on but feedback)."""

    understanding: bool = True  # names and numbers weigh more, spoken filler drops out
    dates: bool = True  # a date expression matches the days entries are about
    neighbours: bool = True  # an entry's neighbours in its topic lift it when they match
    feedback: bool = False  # pseudo-relevance feedback (measured: no gain, off)


DEFAULT_LEVERS = Levers()
_TOKEN_RE = re.compile(r"[^\W_][\w'.-]*")


@dataclass(frozen=True)
class Question:
    """An analysed query: its word groups and the date expression it holds, if any."""

    groups: list[QueryGroup]
    when: When | None = None

    def searchable(self) -> bool:
        """True when something can match: a word or a span of days."""
        return bool(self.groups) or self.when is not None


def _salient(text: str) -> set[str]:
    """Lower-cased names (capitalised words after the first word) and numbers of a query."""
    found: set[str] = set()
    for index, match in enumerate(_TOKEN_RE.finditer(text)):
        word = match.group(0).rstrip(".'")
        if any(ch.isdigit() for ch in word) or (index > 0 and word[:1].isupper()):
            found.add(word.lower().removesuffix("'s"))
    return found


def understand(query: str, today: date, levers: Levers = DEFAULT_LEVERS) -> Question:
    """The groups and date span of a query on day `today`."""
    when = parse_when(query, today) if levers.dates else None
    text = when.rest if when else query
    groups = query_groups(text)
    if levers.understanding:
        salient = _salient(text)
        kept = [g for g in groups if g.raw not in FILLER] or ([] if when else groups)
        groups = [dataclasses.replace(g, weight=NAME_WEIGHT) if g.raw in salient else g
                  for g in kept]
    return Question(groups, when)
