"""Freshness windows and grades (pure: "now" is always an argument)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from gitmem.format.entry import Entry

DEFAULT_WINDOWS: dict[str, int] = {"stable": 365, "normal": 90, "volatile": 3}
WORKING_WINDOW_HOURS = 24
GRADES: tuple[str, ...] = ("fresh", "aging", "stale", "expired", "unverified")
GRADE_PENALTY: dict[str, float] = {
    "fresh": 1.0, "aging": 0.9, "unverified": 0.8, "stale": 0.6, "expired": 0.3,
}

# Wording that says a fact will not stay true for long (ports, versions in flight, "this week").
_VOLATILE_HINTS = re.compile(
    r"\b(today|tonight|tomorrow|yesterday|this (week|sprint|morning|afternoon)|right now|"
    r"currently|for now|temporar(y|ily)|until|in flight|port \d+|deadline|eta)\b"
    r"|今天|明天|本周|目前|暂时",
    re.IGNORECASE,
)
_STABLE_HINTS = re.compile(
    r"\b(always|never|license|convention|policy|language|prefers?|principle)\b|总是|从不",
    re.IGNORECASE,
)


def parse_day(text: str) -> date | None:
    """A YYYY-MM-DD date (a longer ISO timestamp is cut to its day); None if absent or bad."""
    text = text.strip()[:10]
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def guess_volatility(text: str) -> str:
    """A volatility for an entry that has none, from time-bound wording; else normal."""
    if _VOLATILE_HINTS.search(text):
        return "volatile"
    if _STABLE_HINTS.search(text):
        return "stable"
    return "normal"


@dataclass(frozen=True)
class Freshness:
    """How much to trust an entry today."""

    grade: str
    age_days: int | None
    window_days: int

    def label(self) -> str:
        """The mark shown next to an entry: '' when fresh, else e.g. '[STALE 40d]'."""
        if self.grade in ("fresh", "aging"):
            return ""
        if self.grade == "unverified":
            return "[UNVERIFIED]"
        if self.grade == "expired":
            return "[EXPIRED]"
        return f"[STALE {self.age_days}d]"


def entry_volatility(entry: Entry) -> str:
    value = entry.get("Volatility").strip().lower()
    if value in DEFAULT_WINDOWS:
        return value
    return guess_volatility(f"{entry.title}\n{entry.body}")


def grade(
    fields: dict[str, str],
    volatility: str,
    now: date,
    windows: dict[str, int] | None = None,
) -> Freshness:
    """Grade from Verified (else Created), the volatility window and Valid-until."""
    window = (windows or DEFAULT_WINDOWS).get(volatility, DEFAULT_WINDOWS["normal"])
    until = parse_day(fields.get("Valid-until", ""))
    basis = parse_day(fields.get("Verified", "")) or parse_day(fields.get("Created", ""))
    age = (now - basis).days if basis else None
    return classify(age, until is not None and until < now, window)


def classify(age: int | None, expired: bool, window: int) -> Freshness:
    """The grade for an age in days (None: no date), an expiry flag and a window."""
    if expired:
        return Freshness("expired", age, window)
    if age is None:
        return Freshness("unverified", None, window)
    if age > window:
        return Freshness("stale", age, window)
    if age > window / 2:
        return Freshness("aging", age, window)
    return Freshness("fresh", age, window)


def grade_entry(entry: Entry, now: date, windows: dict[str, int] | None = None) -> Freshness:
    return grade(entry.fields, entry_volatility(entry), now, windows)


@dataclass(frozen=True)
class WorkingFreshness:
    grade: str  # fresh | aging | stale | not started
    age_hours: float | None


def grade_working(updated: datetime | None, now: datetime) -> WorkingFreshness:
    """Working memory decays in hours, not days."""
    if updated is None:
        return WorkingFreshness("not started", None)
    hours = max((now - updated) / timedelta(hours=1), 0.0)
    if hours > WORKING_WINDOW_HOURS:
        return WorkingFreshness("stale", hours)
    if hours > WORKING_WINDOW_HOURS / 2:
        return WorkingFreshness("aging", hours)
    return WorkingFreshness("fresh", hours)
