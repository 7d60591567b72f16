"""Dates in search: the days an entry is about, and the span of days a question asks about.

Index time: an entry's days are its Created day, the day its topic is named after (an episodic
session, a history day: `2026-05-14-...`) and every ISO date in its title or body. Each becomes a
day term `@d:YYYY-MM-DD` and a month term `@m:YYYY-MM` of its own field weight (rank.py).

Query time: `parse_when` finds one date expression in a question and the span of days it means,
on the request's day: an ISO date, `yesterday`, `today`, `last week`, `this month`, `last year`,
`in 2025`, `three days ago`, `two weeks ago`, `May`, `last May`, `May 14`, `14 May 2026`. The words
of the expression leave the lexical query; the span is matched against the entries' day terms.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta

DAY_PREFIX = "@d:"
MONTH_PREFIX = "@m:"
MAX_DAY_TERMS = 62  # a longer span is matched by its months

_ISO_RE = re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?!\d)")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_MONTH_INDEX = {name: i + 1 for i, name in enumerate(_MONTHS)}
_MONTH_INDEX.update({name[:3]: i + 1 for i, name in enumerate(_MONTHS) if name != "may"})
_MONTH_INDEX["sept"] = 9
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_MONTH_WORD = "|".join(sorted(_MONTH_INDEX, key=len, reverse=True))  # abbreviations: with a day
_MONTH_FULL = "|".join(_MONTHS)
NUMBER_WORD = "|".join(NUMBERS) + r"|\d{1,3}"
_DAY_NUM = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE)) for name, pattern in (
        ("iso", r"\b(?:on\s+|since\s+)?(?P<iso>\d{4}-\d{2}-\d{2})\b"),
        ("ago", rf"\b(?P<n>{NUMBER_WORD})\s+(?P<unit>day|week|month|year)s?\s+ago\b"),
        ("relative", r"\b(?P<which>last|this|past)\s+(?P<unit>week|month|year)\b"),
        ("named_day", r"\b(?:the\s+day\s+before\s+)?(?P<word>yesterday|today)\b"),
        ("month_day", rf"\b(?:on\s+)?(?P<month>{_MONTH_WORD})\.?\s+{_DAY_NUM}(?:,?\s+(?P<year>\d{{4}}))?\b"),
        ("day_month", rf"\b(?:on\s+)?(?:the\s+)?{_DAY_NUM}\s+(?:of\s+)?(?P<month>{_MONTH_WORD})(?:\s+(?P<year>\d{{4}}))?\b"),
        ("month", rf"\b(?P<which>last|this|in|since|during)?\s*(?P<month>{_MONTH_FULL})(?:\s+(?P<year>\d{{4}}))?\b"),
        ("year", r"\b(?:in|during)\s+(?P<year>(?:19|20)\d{2})\b"),
    )
)


@dataclass(frozen=True)
class Span:
    """The days a question asks about, first and last included."""

    first: date
    last: date

    def days(self) -> int:
        return (self.last - self.first).days + 1

    def terms(self) -> list[str]:
        """The index terms that match an entry about a day of this span."""
        if self.days() <= MAX_DAY_TERMS:
            return [day_term(self.first + timedelta(days=n)) for n in range(self.days())]
        months: dict[str, None] = {}
        day = self.first.replace(day=1)
        while day <= self.last:
            months[month_term(day)] = None
            day = (day + timedelta(days=32)).replace(day=1)
        return list(months)

    def __str__(self) -> str:
        if self.first == self.last:
            return self.first.isoformat()
        return f"{self.first.isoformat()}..{self.last.isoformat()}"


def day_term(day: date) -> str:
    return f"{DAY_PREFIX}{day.isoformat()}"


def month_term(day: date) -> str:
    return f"{MONTH_PREFIX}{day.year:04d}-{day.month:02d}"


def _iso(text: str) -> Iterator[date]:
    for match in _ISO_RE.finditer(text):
        try:
            yield date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        except ValueError:
            continue


def entry_days(created: str, topic: str, texts: Iterable[str]) -> list[date]:
    """The days an entry is about: Created, its topic's leading date, ISO dates in its text."""
    days: dict[date, None] = {}
    for text in (created[:10], topic[:10], *texts):
        days.update(dict.fromkeys(_iso(text)))
    return list(days)


def date_terms(days: Iterable[date]) -> list[str]:
    """Day and month terms of these days."""
    terms: dict[str, None] = {}
    for day in days:
        terms[day_term(day)] = None
        terms[month_term(day)] = None
    return list(terms)


def _month_span(year: int, month: int) -> Span:
    first = date(year, month, 1)
    last = (first + timedelta(days=32)).replace(day=1) - timedelta(days=1)
    return Span(first, last)


def _recent_month(month: int, today: date, strictly_before: bool) -> int:
    """The year of the latest such month not after today (before today's month when strict)."""
    if month < today.month or (month == today.month and not strictly_before):
        return today.year
    return today.year - 1


def _week_of(day: date) -> Span:
    monday = day - timedelta(days=day.weekday())
    return Span(monday, monday + timedelta(days=6))


UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
UNIT_SLACK = {"day": 1, "week": 3, "month": 10, "year": 60}  # "a week ago": within 3 days of it


def around(day: date, count: int, unit: str) -> Span:
    """`count` units from `day` (negative: before it), give or take UNIT_SLACK of the unit."""
    centre = day + timedelta(days=count * UNIT_DAYS[unit])
    slack = timedelta(days=UNIT_SLACK[unit])
    return Span(centre - slack, centre + slack)


def _ago(count: int, unit: str, today: date) -> Span:
    """`count units ago`, give or take a little (a week ago: within three days of it)."""
    return around(today, -count, unit)


def _relative(which: str, unit: str, today: date) -> Span:
    """`last week`, `this month`, `past year` and the like."""
    if which == "past":
        days = {"week": 7, "month": 31, "year": 366}[unit]
        return Span(today - timedelta(days=days), today)
    if unit == "week":
        return _week_of(today - timedelta(days=7) if which == "last" else today)
    if unit == "month":
        first = today.replace(day=1)
        start = (first - timedelta(days=1)).replace(day=1) if which == "last" else first
        return _month_span(start.year, start.month)
    year = today.year - 1 if which == "last" else today.year
    return Span(date(year, 1, 1), date(year, 12, 31))


def _span(name: str, match: re.Match[str], today: date) -> Span | None:
    """The span one matched expression means; None when it names no real day."""
    groups = {k: (v or "").lower() for k, v in match.groupdict().items()}
    try:
        if name == "iso":
            day = date.fromisoformat(groups["iso"])
            return Span(day, day)
        if name == "ago":
            return _ago(NUMBERS.get(groups["n"]) or int(groups["n"]), groups["unit"], today)
        if name == "relative":
            return _relative(groups["which"], groups["unit"], today)
        if name == "named_day":
            back = 1 if groups["word"] == "yesterday" else 0
            back += 1 if match.group(0).lower().startswith("the day before") else 0
            day = today - timedelta(days=back)
            return Span(day, day)
        if name == "year":
            year = int(groups["year"])
            return Span(date(year, 1, 1), date(year, 12, 31))
        month = _MONTH_INDEX[groups["month"].rstrip(".")]
        strict = groups.get("which") == "last"
        year = int(groups["year"]) if groups.get("year") else _recent_month(month, today, strict)
        if name in ("month_day", "day_month"):
            day = date(year, month, int(groups["day"]))
            return Span(day, day)
        return _month_span(year, month)
    except (ValueError, KeyError):
        return None


def _is_month_verb(name: str, match: re.Match[str]) -> bool:
    """`may` and `march` alone in lower case are a verb more often than a month."""
    if name != "month" or match.group("which") or match.group("year"):
        return False
    word = match.group("month")
    return word.lower() in ("may", "march") and word.islower()


@dataclass(frozen=True)
class Anchor:
    """The entry an event-relative expression was resolved against, and the day taken from it
    (`source`: "text" for a date in its text, "session" for its topic's day, or "created")."""

    event: str
    entry_id: str
    at: str  # path:line
    title: str
    day: date
    source: str


@dataclass(frozen=True)
class When:
    """A question's date expression: the span it means, its text, and the question without it;
    `anchor`: the entry an event-relative expression ("two weeks before the launch") took its day
    from (events.py)."""

    span: Span
    phrase: str
    rest: str
    anchor: Anchor | None = None


def parse_when(query: str, today: date) -> When | None:
    """The first date expression of a question (in pattern order), or None."""
    for name, pattern in _PATTERNS:
        for match in pattern.finditer(query):
            if _is_month_verb(name, match):
                continue
            span = _span(name, match, today)
            if span is None:
                continue
            rest = f"{query[:match.start()]} {query[match.end():]}"
            return When(span, match.group(0).strip(), rest)
    return None
