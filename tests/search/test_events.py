"""Dates relative to an event: the parser, the windows, the anchor's day and real indexes."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from gitmem.search.dates import Anchor, Span
from gitmem.search.events import Event, anchor_day, parse_event, pick_anchor
from gitmem.search.index import SearchIndex
from gitmem.search.query import DEFAULT_LEVERS, EVENT_WORD_WEIGHT, Levers, anchored, understand

TODAY = date(2026, 12, 2)
LAUNCH = date(2026, 6, 15)


@pytest.mark.parametrize(("question", "relation", "count", "unit", "event"), [
    ("what did we ship two weeks before the launch?", "before", 2, "week", "the launch"),
    ("what broke the day after the migration", "after", 1, "day", "the migration"),
    ("a month after we moved to Postgres, what broke?", "after", 1, "month",
     "we moved to Postgres"),
    ("notes from before the offsite", "before", None, None, "the offsite"),
    ("what changed since the outage?", "since", None, None, "the outage"),
    ("what was open until the freeze", "until", None, None, "the freeze"),
    ("the alerts 3 days after the Kafka upgrade", "after", 3, "day", "the Kafka upgrade"),
    ("a few days prior to the audit", "before", 3, "day", "the audit"),
    ("the week before our offsite", "before", 1, "week", "our offsite"),
    ("shortly after the cutover", "after", 0, None, "the cutover"),
    ("what did Ana say about the release two weeks before she moved to Lisbon?", "before", 2,
     "week", "she moved to Lisbon"),
    ("two days after Ana's talk about caching", "after", 2, "day", "Ana's talk"),
    ("the budget since Finance came back, and the plan", "since", None, None,
     "Finance came back"),
])
def test_event_relative_expressions_are_parsed(question: str, relation: str, count: int | None,
                                               unit: str | None, event: str) -> None:
    found = parse_event(question)
    assert found is not None
    assert (found.relation, found.count, found.unit, found.event) == (relation, count, unit, event)
    assert found.phrase in question and event not in found.rest
    assert "she" not in {g.raw for g in found.groups}  # pronouns are not the event's words


@pytest.mark.parametrize("question", [
    "review before release", "dns ttl before cutover", "lint after merge", "since then",
    "after that", "after all", "the day before yesterday", "since last week", "before May 14",
    "until 2026-03-01", "have we seen this before?", "before", "what happened after?",
    "two weeks before, we", "long before the", "what did we decide",
])
def test_nonsense_orders_of_steps_and_plain_dates_are_not_events(question: str) -> None:
    assert parse_event(question) is None


def _event(question: str) -> Event:
    found = parse_event(question)
    assert found is not None
    return found


@pytest.mark.parametrize(("question", "first", "last"), [
    ("two weeks before the launch", "2026-05-29", "2026-06-04"),
    ("a month after the launch", "2026-07-05", "2026-07-25"),
    ("the day before the launch", "2026-06-14", "2026-06-14"),
    ("the day after the launch", "2026-06-16", "2026-06-16"),
    ("the week after the launch", "2026-06-16", "2026-06-22"),
    ("before the launch", "2026-05-16", "2026-06-15"),
    ("after the launch", "2026-06-15", "2026-07-15"),
    ("until the launch", "2026-05-16", "2026-06-15"),
    ("since the launch", "2026-06-15", "2026-12-02"),
    ("shortly after the launch", "2026-06-15", "2026-06-22"),
])
def test_the_window_is_measured_from_the_events_day(question: str, first: str, last: str) -> None:
    window = _event(question).window(LAUNCH, TODAY)
    assert window == Span(date.fromisoformat(first), date.fromisoformat(last))


def test_since_an_event_still_to_come_or_past_the_calendar_is_no_window() -> None:
    assert _event("since the launch").window(date(2027, 1, 1), TODAY) is None
    assert _event("999 years before the launch").window(date(1, 1, 1), TODAY) is None
    assert _event("the day after the launch").window(date(9999, 12, 31), TODAY) is None


def test_an_anchor_with_several_dates_gives_the_one_next_to_the_event() -> None:
    event = _event("two weeks before the launch")
    fields = {"title": "Atlas timeline", "created": "2026-01-05", "topic": "atlas",
              "body": "Planning began 2026-03-01. After two delays the launch went out on "
                      "2026-06-15; the retro was on 2026-06-20."}
    assert anchor_day(fields, event) == (LAUNCH, "text")
    session = {"title": "Ana: the launch went fine", "body": "", "topic": "2026-06-15-ana-ben",
               "created": "2026-06-16"}
    assert anchor_day(session, event) == (LAUNCH, "session")
    created = {"title": "the launch went fine", "body": "", "topic": "atlas",
               "created": "2026-06-15T09:00:00Z"}
    assert anchor_day(created, event) == (LAUNCH, "created")
    assert anchor_day({"title": "the launch", "body": "", "topic": "atlas"}, event) is None
    undated = {"title": "the launch", "body": "", "topic": "x", "id": "a", "path": "p", "line": 1}
    chosen = pick_anchor(event, [undated, {**created, "id": "b", "path": "q", "line": 3}])
    assert chosen is not None and chosen.entry_id == "b" and chosen.at == "q:3"


def _topic(root: Path, name: str, turns: list[tuple[str, str, str]], extra: str = "") -> None:
    """A semantic topic file of (id, text, created) entries."""
    folder = root / "workspaces" / "atlas" / "semantic"
    folder.mkdir(parents=True, exist_ok=True)
    chunks = [f"---\ntopic: {name}\nlayer: semantic\n---\n# {name}\n"]
    for entry_id, text, created in turns:
        chunks.append(f"## {text[:40]}\n{text}\n\n**Id:** {entry_id}\n**Created:** {created}\n"
                      f"**Verified:** {created}\n{extra}")
    (folder / f"{name}.md").write_text("\n".join(chunks), "utf-8")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    _topic(tmp_path, "launch", [("atlas-sem-0001", "The Atlas launch went out to all customers.",
                                 "2026-06-15")])
    _topic(tmp_path, "budget", [
        ("atlas-sem-0002", "Finance froze the budget until the board meets.", "2026-06-01"),
        ("atlas-sem-0003", "Finance approved the budget for two hires.", "2026-07-15"),
        ("atlas-sem-0004", "Finance asked for a budget forecast.", "2026-03-02"),
    ])
    return tmp_path


def _ids(root: Path, question: str, levers: Levers = DEFAULT_LEVERS) -> list[str]:
    index = SearchIndex(root)
    try:
        return [str(h.id) for h in index.search(question, now=TODAY, levers=levers)]
    finally:
        index.close()


def test_entries_in_the_events_window_are_lifted(store: Path) -> None:
    before = _ids(store, "what did finance say about the budget two weeks before the launch?")
    after = _ids(store, "what did finance say about the budget a month after the launch?")
    flat = _ids(store, "what did finance say about the budget two weeks before the launch?",
                Levers(events=False))
    assert before[0] == "atlas-sem-0002" and after[0] == "atlas-sem-0003"
    assert flat[0] != "atlas-sem-0002"  # without the lever the date is not understood


def test_no_anchor_in_the_store_means_no_lift_and_every_word_kept(store: Path) -> None:
    question = "what did finance say about the budget two weeks before the offsite?"
    assert understand(question, TODAY).event is not None
    assert _ids(store, question) == _ids(store, question, Levers(events=False))
    index = SearchIndex(store)
    hits = index.search(question, now=TODAY, explain=True)
    index.close()
    assert hits and all("date" not in (hit.explain or {}) for hit in hits)


def test_a_hidden_entry_does_not_anchor_an_event(store: Path) -> None:
    _topic(store, "launch", [("atlas-sem-0001", "The Atlas launch went out to all customers.",
                              "2026-06-15")], extra="**Forgotten:** 2026-07-01\n")
    question = "what did finance say about the budget two weeks before the launch?"
    assert _ids(store, question) == _ids(store, question, Levers(events=False))


def test_anchoring_makes_a_span_and_keeps_the_events_words_at_a_lower_weight() -> None:
    question = "what did finance say about the budget two weeks before the launch?"
    asked = understand(question, TODAY)
    assert asked.event is not None and asked.when is None and asked.searchable()
    launch = Anchor("the launch", "atlas-sem-0001", "a.md:7", "Launch", LAUNCH, "created")
    found = anchored(asked, launch, question, TODAY)
    assert found.when is not None and found.when.anchor == launch and found.event is None
    assert found.when.span == Span(date(2026, 5, 29), date(2026, 6, 4))
    weights = {g.raw: g.weight for g in found.groups}
    assert weights["budget"] == 1.0 and weights["launch"] == EVENT_WORD_WEIGHT
    plain = understand(question, TODAY, Levers(events=False))
    assert anchored(asked, None, question, TODAY) == plain  # no anchor: every word, no date
