"""Query understanding: what a whole question asks for, beyond its plain words.

- its date expression (dates.py) leaves the words and becomes a span of days to match;
- a date relative to an event ("two weeks before the launch", events.py) leaves the words too;
  the reader finds the event's day in the store and `anchored` makes it a span like any other,
  the event's words back at EVENT_WORD_WEIGHT (measured: 0 and 1 both lose, decision 0039);
- question words and filler are dropped (analysis.QUERY_STOPWORDS);
- names (a capitalised word after the first) and numbers weigh NAME_WEIGHT times a plain word.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from datetime import date

from gitmem.search.analysis import FILLER, QueryGroup, query_groups
from gitmem.search.dates import Anchor, When, parse_when
from gitmem.search.events import Event, parse_event

NAME_WEIGHT = 2.0
EVENT_WORD_WEIGHT = 0.3  # an anchored event's words still count, less than the question's own


@dataclass(frozen=True)
class Levers:
    """Which parts of query understanding and context a search uses (all on but feedback)."""

    understanding: bool = True  # names and numbers weigh more, spoken filler drops out
    dates: bool = True  # a date expression matches the days entries are about
    neighbours: bool = True  # an entry's neighbours in its topic lift it when they match
    feedback: bool = False  # pseudo-relevance feedback (measured: no gain, off)
    events: bool = True  # a date relative to an event the store dates ("after the outage")


DEFAULT_LEVERS = Levers()
_TOKEN_RE = re.compile(r"[^\W_][\w'.-]*")


@dataclass(frozen=True)
class Question:
    """An analysed query: its word groups and the date expression it holds, if any; `event`:
    an event-relative expression still to be anchored in the store."""

    groups: list[QueryGroup]
    when: When | None = None
    event: Event | None = None

    def searchable(self) -> bool:
        """True when something can match: a word, a span of days or an event."""
        return bool(self.groups) or self.when is not None or self.event is not None


def _salient(text: str) -> set[str]:
    """Lower-cased names (capitalised words after the first word) and numbers of a query."""
    found: set[str] = set()
    for index, match in enumerate(_TOKEN_RE.finditer(text)):
        word = match.group(0).rstrip(".'")
        if any(ch.isdigit() for ch in word) or (index > 0 and word[:1].isupper()):
            found.add(word.lower().removesuffix("'s"))
    return found


def understand(query: str, today: date, levers: Levers = DEFAULT_LEVERS) -> Question:
    """The groups and date span (or event to anchor) of a query on day `today`."""
    event = parse_event(query) if levers.dates and levers.events else None
    if event is not None:
        return Question(_words(event.rest, True, levers), event=event)
    when = parse_when(query, today) if levers.dates else None
    return Question(_words(when.rest if when else query, when is not None, levers), when)


def anchored(question: Question, anchor: Anchor | None, query: str, today: date,
             levers: Levers = DEFAULT_LEVERS) -> Question:
    """A question's event resolved against the entry the store dates it by; with no such entry
    (or no window) the question is understood as if it named no event, its words all kept."""
    event = question.event
    span = event.window(anchor.day, today) if event is not None and anchor is not None else None
    if event is None or anchor is None or span is None:
        return understand(query, today, dataclasses.replace(levers, events=False))
    asked = {g.terms for g in question.groups}
    kept = [dataclasses.replace(g, weight=g.weight * EVENT_WORD_WEIGHT) for g in event.groups
            if EVENT_WORD_WEIGHT > 0.0 and g.terms not in asked]
    return Question(question.groups + kept, When(span, event.phrase, event.rest, anchor))


def _words(text: str, dated: bool, levers: Levers) -> list[QueryGroup]:
    """The word groups of a query's text once its date expression is out (`dated`: there was
    one, so a question left with only filler has no words)."""
    groups = query_groups(text)
    if levers.understanding:
        salient = _salient(text)
        kept = [g for g in groups if g.raw not in FILLER] or ([] if dated else groups)
        groups = [dataclasses.replace(g, weight=NAME_WEIGHT) if g.raw in salient else g
                  for g in kept]
    return groups
