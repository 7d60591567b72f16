"""The card's entry lists come from stat-checked summaries: the same lines as a full re-read,
hand edits seen at once, cache hits only for files whose stamp has not changed."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from gitmem.format.entry import IMPORTANCE_RANK
from gitmem.store.store import Store
from gitmem.verbs.context import build_card, conflict_section, ranked_lines
from gitmem.verbs.entries import forget, remember
from gitmem.verbs.reads import list_entries

SCOPES = ["global"]


def _reference(store: Store, layers: list[str], limit: int, importance: list[str] | None = None) -> list[str]:
    """The card lines computed the slow way: every file parsed, records ranked in Python."""
    records: list[dict[str, Any]] = []
    for layer in layers:
        records += [r for r in list_entries(store, layer=layer, scopes=SCOPES)
                    if r["status"] == "live"
                    and (importance is None or r["fields"].get("Importance") in importance)]
    records.sort(key=lambda r: (-IMPORTANCE_RANK.get(r["fields"].get("Importance", "normal"), 1),
                                r["age_days"] if r["age_days"] is not None else 10**6, r["id"] or ""))
    lines = []
    for r in records[:limit]:
        label = f" {r['label']}" if r["label"] else ""
        where = r.get("ref") or f"{r['path']}:{r['line']}, no Id yet"
        lines.append(f"- {r['title']}{label} ({where})")
    return lines


def _age_files(root: Path, seconds: float = 3600) -> None:
    """Set every memory file's mtime into the past, as if written a while ago."""
    then = time.time() - seconds
    for path in (root / "global").rglob("*.md"):
        os.utime(path, (then, then))


def _fill(store: Store) -> None:
    for n, importance in enumerate(["low", "normal", "high", "critical", "normal", "high"]):
        remember(store, f"Decision {n}: use tool {n} for the pipeline", "decisions",
                 topic=f"topic-{n % 2}", importance=importance)
        remember(store, f"Fact {n} about the deploy gateway", "semantic", topic=f"facts-{n % 3}",
                 importance=importance)
    remember(store, "Expired fact about the staging port", "semantic", topic="facts-0",
             importance="critical", until="2020-01-01")
    old = remember(store, "Superseded fact about the cache", "semantic", topic="facts-1",
                   importance="high")
    remember(store, "The cache fact as it is now", "semantic", topic="facts-1", importance="high",
             supersedes=old.id)
    gone = remember(store, "Forgotten critical fact", "semantic", topic="facts-2", importance="critical")
    forget(store, gone.id)


def _lists(store: Store) -> list[list[str]]:
    return [ranked_lines(store, SCOPES, ["decisions"], 15),
            ranked_lines(store, SCOPES, ["semantic", "procedural", "episodic"], 20,
                         importance=["critical", "high"])]


def _references(store: Store) -> list[list[str]]:
    return [_reference(store, ["decisions"], 15),
            _reference(store, ["semantic", "procedural", "episodic"], 20, ["critical", "high"])]


def test_lists_equal_a_full_reread_fresh_and_cached(store: Store) -> None:
    _fill(store)
    expected = _references(store)
    assert expected[1] and expected[0]
    assert _lists(store) == expected  # files just written: read again (racy window)
    _age_files(store.root)
    assert _lists(store) == expected  # fills the cache
    stamps = dict(store.summaries.db.execute("SELECT path, stamp FROM summary_files"))
    assert stamps and all(stamps.values()), "aged files must be cached by their stamp"
    assert _lists(store) == expected  # served from the cache
    assert dict(store.summaries.db.execute("SELECT path, stamp FROM summary_files")) == stamps


def test_hand_edit_is_seen_at_once_then_cached(store: Store) -> None:
    _fill(store)
    _age_files(store.root)
    _lists(store)
    path = store.root / "global/semantic/facts-0.md"
    text = path.read_text()
    assert "**Importance:** low" in text
    path.write_text(text.replace("**Importance:** low", "**Importance:** critical"))
    now = _lists(store)
    assert any("Fact 0 about" in line for line in now[1])
    assert now == _references(store)
    _age_files(store.root)
    assert _lists(store) == _references(store)
    # an uncommitted hand-written entry without an Id is listed with where it is
    with path.open("a") as handle:
        handle.write("\n## Hand note about the gateway\nWritten in an editor.\n\n**Importance:** critical\n")
    lines = _lists(store)[1]
    assert any("Hand note about the gateway" in line and "facts-0.md:" in line and "no Id yet" in line
               for line in lines), lines


def test_unreadable_and_conflicted_files(store: Store) -> None:
    _fill(store)
    _age_files(store.root)
    (store.root / "global/semantic/facts-2.md").write_bytes(b"\xff\xfe not utf-8\n")
    lines = _lists(store)
    assert lines == _references(store)  # the broken file is left out by both
    assert conflict_section(store, None, SCOPES) is None
    path = store.root / "global/decisions/topic-0.md"
    path.write_text(path.read_text() + "\n<<<<<<< ours\n## A\nx\n=======\n## B\ny\n>>>>>>> theirs\n")
    section = conflict_section(store, None, SCOPES)
    assert section is not None and any("topic-0.md" in line for line in section.lines)
    _age_files(store.root)
    assert conflict_section(store, None, SCOPES) is not None  # still there, from the cache
    text = path.read_text()
    path.write_text(text[:text.index("\n<<<<<<<")] + "\n")
    assert conflict_section(store, None, SCOPES) is None


def test_card_survives_deleted_summaries(store: Store) -> None:
    _fill(store)
    first = build_card(store, workspace=None).text
    store.summaries.db.execute("DELETE FROM summary_files")
    store.summaries.db.execute("DELETE FROM summary_entries")
    assert build_card(store, workspace=None).text == first
    assert "Critical facts" in first and "Decisions in force" in first


def test_limit_cuts_where_a_full_sort_would(store: Store) -> None:
    """More entries than the card shows, verified on different days: the first 15 and 20 are
    those a full sort picks (the cut happens in the query)."""
    import random
    from datetime import datetime, timedelta

    rng = random.Random(7)
    for n in range(70):
        day = datetime(2026, 12, 2) - timedelta(days=rng.randrange(0, 400))
        writer = Store(store.root, cwd=store.root.parent, clock=lambda day=day: day)
        importance = rng.choice(["low", "normal", "normal", "high", "critical"])
        layer = rng.choice(["decisions", "semantic", "episodic"])
        remember(writer, f"Item {n} on the {layer} of the release train", layer,
                 topic=f"t{n % 4}", importance=importance)
        writer.close()
    today = Store(store.root, cwd=store.root.parent, clock=lambda: datetime(2026, 12, 2, 12))
    expected = _references(today)
    assert len(expected[0]) == 15 and len(expected[1]) >= 10
    assert _lists(today) == expected
    _age_files(store.root)
    assert _lists(today) == expected
    today.close()


def test_a_batch_looks_at_each_file_once(store: Store) -> None:
    _fill(store)
    files = store.catalog.files("global", "semantic")
    with store.summaries.batch():
        first = store.summaries.current(files)
        (store.root / files[0]).unlink()
        assert store.summaries.current(files) == first  # the card's sections agree with each other
    assert files[0] not in store.summaries.current(files)  # outside a batch: looked at again


def _graded_slowly(store: Store) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for record in list_entries(store):
        per = counts.setdefault(record["layer"], {})
        per[record["freshness"]] = per.get(record["freshness"], 0) + 1
    return counts


def test_freshness_counts_grade_as_every_entry_is_graded(store: Store) -> None:
    """The overview's counts from the database equal the grades `gitmem list` gives each entry:
    every volatility, a verified date and none, a future date, expiry, forgotten entries, a
    custom window, and a hand edit seen at once."""
    from datetime import timedelta

    from gitmem.verbs.reads import freshness_counts

    today = store.today()
    ages = (("stable", 200), ("stable", 400), ("normal", 10), ("normal", 50), ("normal", 91),
            ("volatile", 1), ("volatile", 2), ("volatile", 30), ("normal", -5))
    for n, (volatility, _days) in enumerate(ages):
        remember(store, f"Fact number {n} about the build farm", "semantic", topic=f"t{n % 3}",
                 volatility=volatility)
    remember(store, "Expired fact about the proxy", "procedural", until=(today - timedelta(days=1)).isoformat())
    remember(store, "Still valid fact about the proxy", "procedural", until=(today + timedelta(days=9)).isoformat())
    gone = remember(store, "Forgotten fact about the cache", "learnings")
    forget(store, gone.id or "")
    for path in (store.root / "global" / "semantic").glob("*.md"):  # dates by hand, n days ago
        text = path.read_text(encoding="utf-8")
        for n, (_volatility, days) in enumerate(ages):
            marker = f"Fact number {n} about"
            if marker in text:
                head, tail = text.split(marker, 1)
                day = (today - timedelta(days=days)).isoformat()
                tail = tail.replace(f"**Verified:** {today.isoformat()}", f"**Verified:** {day}", 1)
                text = head + marker + tail
        path.write_text(text, encoding="utf-8")
    expected = _graded_slowly(store)
    assert set(expected["semantic"]) >= {"fresh", "aging", "stale"}
    assert freshness_counts(store) == expected
    import json  # a custom window (memory.json) changes both the same way

    config = store.root / "memory.json"
    data = json.loads(config.read_text(encoding="utf-8"))
    data.setdefault("settings", {}).setdefault("freshness", {})["normal"] = 40
    config.write_text(json.dumps(data), encoding="utf-8")
    narrower = _graded_slowly(store)
    assert narrower != expected and freshness_counts(store) == narrower
