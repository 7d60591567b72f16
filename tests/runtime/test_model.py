"""Runtime memory as pure values: content rules, projections, matching, hand-edit diffs, budgets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gitmem.errors import InvalidInputError
from gitmem.runtime.budget import Limits, leaving_order, plan_overflow, size_of
from gitmem.runtime.edits import Change, apply_changes, diff_lines, find_one
from gitmem.runtime.model import (
    Item,
    RuntimeFile,
    age_label,
    body_bytes,
    check_branches,
    check_content,
    dump_records,
    load_records,
    metadata_line,
    normalize_content,
    parse_projection,
    render_projection,
    without_duplicates,
)

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def item(content: str, ident: str = "", importance: str = "normal", updated: str = "2026-11-01T00:00:00Z",
         target: str = "memory") -> Item:
    return Item(ident or f"rt-{abs(hash(content)) % 10**8:08x}", content, target, importance,
                "2026-10-01T00:00:00Z", updated)


# -- content and projections --------------------------------------------------------------------
def test_content_is_one_normalized_line() -> None:
    assert normalize_content("  uses\n\tuv   for\r\nenvs ") == "uses uv for envs"
    assert normalize_content("cafe\u0301") == "caf\u00e9"  # NFC


@pytest.mark.parametrize(("text", "reason"), [
    ("", "empty"), ("   \n ", "empty"), ("a § b", "§"), ("x" * 9000, "9000 bytes"),
])
def test_content_rules_refuse(text: str, reason: str) -> None:
    with pytest.raises(InvalidInputError, match=reason):
        check_content(text, 8192)


def test_item_limit_counts_utf8_bytes() -> None:
    check_content("é" * 4096, 8192)  # 8192 bytes exactly
    with pytest.raises(InvalidInputError, match="8194 bytes"):
        check_content("é" * 4097, 8192)


def test_projection_is_deterministic_and_parses_back() -> None:
    contents = ["Prefers short answers", "Uses fish shell"]
    text = render_projection(contents)
    assert text == "Prefers short answers\n§\nUses fish shell\n"
    assert render_projection([]) == ""
    parsed, problems = parse_projection(text, 8192)
    assert [p.content for p in parsed] == contents and [p.line for p in parsed] == [1, 3]
    assert problems == []
    assert body_bytes(["é", "b"]) == len("é\n§\nb".encode())


def test_hand_typed_projection_lines_without_separators_are_items() -> None:
    parsed, problems = parse_projection("\ufeffone\ntwo\n\n§\n  three  \nbad § line\n" + "y" * 70 + "\n", 64)
    assert [p.content for p in parsed] == ["one", "two", "three"]
    assert problems == [(6, "contains §, which separates items in USER.md and MEMORY.md"),
                        (7, "is 70 bytes; one item holds at most 64 bytes")]


def test_records_round_trip_and_keep_unknown_keys() -> None:
    text = ('{"schemaVersion": 1, "note": "kept", "items": [{"id": "rt-1", "target": "memory", '
            '"content": "a", "importance": "critical", "created_at": "x", "updated_at": "y", '
            '"branches": ["main"], "origin": "laptop"}]}')
    records = load_records(text)
    assert records.items[0].branches == ("main",) and records.items[0].extra == {"origin": "laptop"}
    again = load_records(dump_records(records))
    assert again == records and again.extra["note"] == "kept"


def test_broken_records_name_the_line() -> None:
    with pytest.raises(InvalidInputError, match=r"memories.json:2: not valid JSON"):
        load_records('{"items": [\n oops', "memories.json")


def test_duplicates_keep_the_first() -> None:
    records = RuntimeFile([item("a", "rt-1"), item("b", "rt-2"), item("a ", "rt-3")])
    kept, dropped = without_duplicates(records)
    assert [i.id for i in kept.items] == ["rt-1", "rt-2"] and [i.id for i in dropped] == ["rt-3"]


def test_branches_only_for_memory_items() -> None:
    assert check_branches(["main", "main", "feat/x"], "memory") == ("main", "feat/x")
    with pytest.raises(InvalidInputError, match="target memory only"):
        check_branches(["main"], "user")
    with pytest.raises(InvalidInputError, match="invalid branch"):
        check_branches(["a b"], "memory")


# -- the metadata line ------------------------------------------------------------------------
def test_metadata_line_counts_whole_days() -> None:
    stamp = lambda delta: (NOW - delta).strftime("%Y-%m-%dT%H:%M:%SZ")  # noqa: E731
    record = Item("rt-1", "x", "memory", "critical", stamp(timedelta(days=14, hours=3)),
                  stamp(timedelta(days=2)))
    assert metadata_line(record, NOW) == "[importance=critical; created=14d; updated=2d]"
    assert age_label(stamp(timedelta(hours=23)), NOW) == "0d"
    assert age_label(stamp(-timedelta(hours=1)), NOW) == "future"
    assert age_label("", NOW) == "unknown" and age_label("yesterday", NOW) == "unknown"


# -- matching -----------------------------------------------------------------------------------
def test_match_by_id_exact_text_then_unique_substring() -> None:
    items = [item("Deploy with make ship", "rt-1"), item("make", "rt-2"), item("Lint with ruff", "rt-3")]
    assert find_one(items, "rt-3", "memory").id == "rt-3"
    assert find_one(items, "  make ", "memory").id == "rt-2"  # exact wins over a substring elsewhere
    assert find_one(items, "ruff", "memory").id == "rt-3"


def test_ambiguous_or_missing_match_lists_candidates() -> None:
    items = [item("Deploy staging first", "rt-1"), item("Deploy prod on Fridays never", "rt-2")]
    with pytest.raises(InvalidInputError) as ambiguous:
        find_one(items, "Deploy", "memory")
    message = str(ambiguous.value)
    assert "in 2 memory items" in message and "[rt-1]" in message and "[rt-2]" in message
    assert "nothing changed" in message
    with pytest.raises(InvalidInputError, match=r"no memory item matches \"zzz\".*\[rt-1\]"):
        find_one(items, "zzz", "memory")
    with pytest.raises(InvalidInputError, match="2 memory items are exactly"):
        find_one([item("same", "rt-1"), item("same", "rt-2")], "same", "memory")


# -- hand edits ---------------------------------------------------------------------------------
def test_diff_lines_reads_adds_removes_and_changes() -> None:
    changes = diff_lines(["a", "b", "c"], [(1, "a"), (3, "b2"), (5, "c"), (7, "d")])
    assert changes == [Change("replace", "b", "b2", 3), Change("add", "", "d", 7)]
    assert diff_lines(["a", "b"], [(1, "b")]) == [Change("remove", "a")]
    assert diff_lines(["a", "b", "c"], [(1, "c"), (3, "a"), (5, "b")]) == []  # only moved


def test_changed_lines_pair_with_the_lines_they_resemble() -> None:
    base = ["Tests run with pytest", "Lesson: migrate first", "Release freezes Thursdays",
            "Frontend builds with pnpm; never commit dist"]
    edited = [(1, "Tests run with pytest"), (3, "Frontend builds with pnpm, never commit dist")]
    assert diff_lines(base, edited) == [
        Change("replace", "Frontend builds with pnpm; never commit dist",
               "Frontend builds with pnpm, never commit dist", 3),
        Change("remove", "Lesson: migrate first"), Change("remove", "Release freezes Thursdays")]
    # One line deleted and an unrelated one typed in its place: a removal and an addition.
    assert diff_lines(["old words"], [(1, "entirely different")]) == [
        Change("add", "", "entirely different", 1), Change("remove", "old words")]
    assert diff_lines(["Deploys need the VPN"], [(1, "Deploys need the VPN up")]) == [
        Change("replace", "Deploys need the VPN", "Deploys need the VPN up", 1)]


def test_applying_changes_is_idempotent() -> None:
    records = RuntimeFile([item("a", "rt-1"), item("b", "rt-2")])
    changes = [Change("add", "", "a"), Change("remove", "zzz"), Change("replace", "b", "b2"),
               Change("replace", "gone", "new")]
    result, done = apply_changes(records, "memory", changes, "2026-12-02T00:00:00Z")
    assert [i.content for i in result.items] == ["a", "b2", "new"]
    assert result.items[1].id == "rt-2" and result.items[1].updated_at == "2026-12-02T00:00:00Z"
    assert result.items[1].created_at == "2026-10-01T00:00:00Z"
    duplicate = 'not added: "a" is already rt-1; the duplicate line was dropped'  # reported, not silent
    assert done[0] == duplicate and len(done) == 3
    again, done_again = apply_changes(result, "memory", changes, "2026-12-03T00:00:00Z")
    assert [i.content for i in again.items] == ["a", "b2", "new"] and done_again == [duplicate]


# -- budgets ------------------------------------------------------------------------------------
def test_lowest_importance_then_least_recently_updated_leave_first() -> None:
    items = [item("n-old", importance="normal", updated="2026-01-01T00:00:00Z"),
             item("l-new", importance="low", updated="2026-11-01T00:00:00Z"),
             item("c", importance="critical", updated="2020-01-01T00:00:00Z"),
             item("l-old", importance="low", updated="2026-02-01T00:00:00Z")]
    assert [i.content for i in leaving_order(items)] == ["l-old", "l-new", "n-old"]


def test_overflow_plan_moves_only_what_is_needed() -> None:
    items = [item("a" * 40, importance="low"), item("b" * 40), item("c" * 40, importance="critical")]
    new = item("d" * 40)
    limit = size_of([*items, new]) - 10
    assert [i.content for i in plan_overflow(items, new, limit, "MEMORY.md")] == ["a" * 40]
    assert plan_overflow(items, new, 10_000, "MEMORY.md") == []


def test_critical_items_alone_over_budget_refuse_with_the_numbers() -> None:
    items = [item("c" * 100, importance="critical"), item("n" * 10)]
    with pytest.raises(InvalidInputError) as refused:
        plan_overflow(items, item("x" * 30), 120, "global MEMORY.md")
    assert "holds at most 120 bytes" in str(refused.value)
    assert "critical items alone use 100 bytes" in str(refused.value)
    assert "needs 30 more" in str(refused.value)


def test_limits_come_from_settings() -> None:
    assert Limits.from_settings(None) == Limits(4096, 10240, 8192)
    assert Limits.from_settings({"memoryLimitBytes": 500}).of("memory") == 500
    with pytest.raises(InvalidInputError, match="memoryLimitBytes"):
        Limits.from_settings({"memoryLimitBytes": "big"})


# -- the base of a hand edit --------------------------------------------------------------------
def _records(*contents: str) -> str:
    from gitmem.runtime.model import Item, RuntimeFile, dump_records

    return dump_records(RuntimeFile([Item(f"rt-{n:08x}", c, "memory") for n, c in enumerate(contents)]))


def test_the_base_is_the_last_rendering_of_committed_records() -> None:
    from gitmem.runtime.base import edit_base, projection_changes

    rendered = "One\n§\nTwo\n"
    # HEAD is a rendering: it is the base.
    assert edit_base((_records("One", "Two"), rendered), iter(()), "memory") == rendered
    # HEAD holds a hand edit committed as it was: the newest rendering before it.
    edited = "One\n§\nTwo\nThree\n"
    history = [(_records("One", "Two"), edited), (_records("One", "Two"), rendered)]
    base = edit_base(history[0], iter(history), "memory")
    assert base == rendered
    changes, problems = projection_changes(base, rendered, edited, 8192)
    assert [(c.kind, c.new) for c in changes] == [("add", "Three")] and not problems
    # HEAD's projection is an older rendering (records edited since): behind, not edited.
    behind = [(_records("One", "Two", "Four"), rendered), (_records("One", "Two"), rendered)]
    assert edit_base(behind[0], iter(behind), "memory") == rendered
    # No rendering anywhere: only additions, nothing removed on a guess.
    assert edit_base(("[[", "Other\n"), iter([("[[", "Other\n")]), "memory") is None
    changes, _ = projection_changes(None, rendered, "Two\n§\nFive\n", 8192)
    assert [(c.kind, c.new) for c in changes] == [("add", "Five")]
