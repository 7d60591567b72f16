"""Dates relative to an event named in the question: "two weeks before the launch", "the day
after the migration", "a month after we moved to Postgres", "before the offsite", "since the
outage".

`parse_event` finds such an expression: an optional offset (`two weeks`, `a month`, `3 days`,
`a few days`, `the day`, `the week`, `shortly`), a relation (`before`, `after`, `since`,
`until`, `prior to`) and the event phrase up to the end of its clause. The store itself says when
the event was: the reader searches the event's words and `anchor_day` takes a day from the best
matching entry (a date in its text next to the event's words, else its session's day, else its
Created day); `window` turns that day into the span of days the question asks about.

Without an offset the phrase must name an event (`the launch`, `our offsite`, `we moved`, a
capitalised name): "review before release" or "lint after merge" is an order of steps, not a
time. A phrase that is itself a date (`since last week`, `before May 14`) is left to dates.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from gitmem.search.analysis import FILLER, QUERY_STOPWORDS, QueryGroup, index_terms, query_groups
from gitmem.search.dates import (
    NUMBER_WORD,
    NUMBERS,
    UNIT_DAYS,
    Anchor,
    Span,
    around,
    parse_when,
)

BARE_DAYS = 30  # "before the offsite" without an offset: its day and the 30 days before it
NEAR_DAYS = 7  # "shortly after the launch", "right before the outage"
EVENT_WORDS = 6  # an event phrase is cut after this many words
ANCHOR_CANDIDATES = 5  # best event matches tried for a day, in order

_UNIT = r"(?P<unit>day|week|month|year)s?"
_OFFSET = (rf"(?:(?P<n>{NUMBER_WORD}|a\s+few|a\s+couple\s+of|couple\s+of)\s+{_UNIT}"
           r"|the\s+(?P<the>day|week|month|year)|(?P<near>shortly|right|just|soon))")
_RELATION = r"(?P<rel>before|after|since|until|till|prior\s+to)"
_PATTERN = re.compile(rf"\b(?:{_OFFSET}\s+)?{_RELATION}\s+(?P<event>[^?!.,;:()\[\]\"]+)",
                      re.IGNORECASE)
# Where an event phrase ends: the next clause or what the question asks about it.
_CLAUSE_END = re.compile(r"\s+(?:and|but|or|about|regarding|concerning|when|where|because|so|"
                         r"which|who|while|if|then|what|how|for|in\s+(?:the\s+)?(?:channel|chat|"
                         r"meeting|thread))\b.*$", re.IGNORECASE | re.DOTALL)
# Words that open a phrase naming an event when there is no offset.
_EVENT_OPENERS = frozenset(
    ["the", "our", "my", "his", "her", "their", "your", "its", "we", "i", "he", "she", "they",
     "you", "it", "this", "that", "last", "first", "second", "next"]
)
_NOT_EVENTS = QUERY_STOPWORDS | FILLER | _EVENT_OPENERS | frozenset(
    ["him", "hers", "theirs", "long", "ago", "date", "day", "week", "month", "year", "moment",
     "point"]
)


@dataclass(frozen=True)
class Event:
    """An event-relative expression: relation, offset (count and unit, or None), the event
    phrase as asked and its words, the whole expression and the question without it."""

    relation: str  # before, after, since, until
    count: int | None
    unit: str | None
    exact: bool  # "the day after": exactly one unit, no slack
    event: str
    groups: list[QueryGroup]
    phrase: str
    rest: str

    def window(self, anchor: date, today: date) -> Span | None:
        """The days asked about when the event was on `anchor`; None for none (since a day
        still to come, or a window past the calendar's ends)."""
        try:
            return self._window(anchor, today)
        except OverflowError:  # "999 years before" an entry dated 0001-01-01
            return None

    def _window(self, anchor: date, today: date) -> Span | None:
        one = timedelta(days=1)
        back = self.relation in ("before", "until")
        if self.unit is not None and self.count is not None:
            if not self.exact:
                return around(anchor, -self.count if back else self.count, self.unit)
            length = timedelta(days=UNIT_DAYS[self.unit])
            if self.unit == "day":
                day = anchor - one if back else anchor + one
                return Span(day, day)
            return Span(anchor - length, anchor - one) if back else Span(anchor + one,
                                                                         anchor + length)
        # The event's own day is in: what happened just before or after it is often that day.
        reach = timedelta(days=BARE_DAYS if self.count is None else NEAR_DAYS)
        if back:
            return Span(anchor - reach, anchor)
        if self.relation == "after":
            return Span(anchor, anchor + reach)
        return Span(anchor, today) if today >= anchor else None


def _offset(match: re.Match[str]) -> tuple[int | None, str | None, bool]:
    """(count, unit, exact) of a matched offset; (None, None, False) when there is none, and
    (0, None, False) for "shortly" and the like."""
    if match.group("the"):
        return 1, match.group("the").lower(), True
    if match.group("near"):
        return 0, None, False
    raw = (match.group("n") or "").lower()
    if not raw:
        return None, None, False
    if "few" in raw or "couple" in raw:
        count = 3 if "few" in raw else 2
    else:
        count = NUMBERS.get(raw) or int(raw)
    return count, match.group("unit").lower(), False


def _event_phrase(text: str) -> str:
    """The event phrase: up to the end of its clause, at most EVENT_WORDS words."""
    words = _CLAUSE_END.sub("", text).split()[:EVENT_WORDS]
    return " ".join(words)


def _names_event(phrase: str, offset: bool) -> bool:
    """True when a phrase can name an event: a content word, and with no offset an opening
    word that makes it one ("the launch", "we moved", "Ana's talk"); not a date."""
    groups = query_groups(phrase)
    if not any(g.raw not in _NOT_EVENTS for g in groups):
        return False
    if parse_when(phrase, date(2000, 1, 1)) is not None:
        return False
    first = phrase.split()[0]
    return offset or first.lower() in _EVENT_OPENERS or first[:1].isupper()


def parse_event(query: str) -> Event | None:
    """The first event-relative expression of a question, or None."""
    for match in _PATTERN.finditer(query):
        count, unit, exact = _offset(match)
        event = _event_phrase(match.group("event"))
        if not event or not _names_event(event, count is not None):
            continue
        end = match.start("event") + len(event)
        relation = match.group("rel").lower()
        relation = "before" if relation.startswith("prior") else relation
        relation = "until" if relation == "till" else relation
        groups = [g for g in query_groups(event) if g.raw not in _NOT_EVENTS]
        rest = f"{query[:match.start()]} {query[end:]}"
        return Event(relation, count, unit, exact, event, groups, query[match.start():end], rest)
    return None


_ISO_AT = re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?!\d)")


def _text_day(text: str, words: set[str]) -> date | None:
    """The ISO date in `text` nearest to a word of the event (by characters), if any."""
    spots = [m.start() for m in re.finditer(r"[\w'-]+", text)
             if set(index_terms(m.group(0))) & words]
    best: tuple[int, date] | None = None
    for found in _ISO_AT.finditer(text):
        try:
            day = date(int(found.group(1)), int(found.group(2)), int(found.group(3)))
        except ValueError:
            continue
        distance = min((abs(found.start() - spot) for spot in spots), default=0)
        if best is None or distance < best[0]:
            best = (distance, day)
    return best[1] if best else None


def anchor_day(fields: Mapping[str, Any], event: Event) -> tuple[date, str] | None:
    """The day an entry puts the event on, and where it came from: a date in its text, its
    topic's day (an episodic session), or its Created day."""
    words = {term for group in event.groups for term in group.terms}
    text = f"{fields.get('title', '')}\n{fields.get('body', '')}"
    day = _text_day(text, words)
    if day is not None:
        return day, "text"
    for key, source in (("topic", "session"), ("created", "created")):
        found = _ISO_AT.match(str(fields.get(key, ""))[:10])
        if found:
            try:
                return date.fromisoformat(found.group(0)), source
            except ValueError:
                continue
    return None


def pick_anchor(event: Event, candidates: list[Mapping[str, Any]]) -> Anchor | None:
    """The first of the best event matches (in order) that has a day."""
    for fields in candidates:
        found = anchor_day(fields, event)
        if found is not None:
            day, source = found
            return Anchor(event.event, str(fields.get("id") or ""),
                          f"{fields.get('path')}:{fields.get('line')}",
                          str(fields.get("title", "")), day, source)
    return None
