"""What the warm server keeps between calls never makes a read stale or a write wrong."""

from __future__ import annotations

import os
from pathlib import Path

from gitmem.format.markdown import parse_topic_file
from gitmem.store import warm
from gitmem.store.store import Store, open_store
from gitmem.store.tree import conflicted_files, read_topic
from gitmem.verbs.entries import remember
from gitmem.verbs.search import search

TEXT = "---\ntopic: t\n---\n# t\n\n## First fact\nAlpha..\n\n**Id:** global-sem-0001\n"


def test_a_caller_changing_its_copy_changes_nothing_for_the_next(tmp_path: Path, caching: None) -> None:
    (tmp_path / "t.md").write_text(TEXT, encoding="utf-8")
    first = read_topic(tmp_path, "t.md")
    assert first is not None
    first.entries.clear()
    first.meta["topic"] = "changed"
    second = read_topic(tmp_path, "t.md")
    assert second is not None and [e.title for e in second.entries] == ["First fact"]
    assert second.meta["topic"] == "t"
    assert second.entries == parse_topic_file(TEXT, "t.md").entries


def test_an_edit_of_the_same_size_in_the_same_instant_is_seen(tmp_path: Path, caching: None) -> None:
    path = tmp_path / "global" / "semantic" / "t.md"
    path.parent.mkdir(parents=True)
    path.write_text(TEXT, encoding="utf-8")
    before = os.stat(path)
    assert conflicted_files(tmp_path) == []
    marked = TEXT.replace("Alpha..\n", "=======\n")  # same length, a conflict marker now
    assert len(marked) == len(TEXT)
    path.write_text(marked, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # the same modification time
    assert conflicted_files(tmp_path) == ["global/semantic/t.md"]
    topic = read_topic(tmp_path, "global/semantic/t.md")
    assert topic is not None and "=======" in topic.entries[0].body


def test_stores_borrow_the_kept_parts_and_see_every_change(store: Store, caching: None) -> None:
    first = open_store(store.root)
    warm.adopt(first)
    remember(first, "The cache is warm", "semantic", topic="cache")
    assert search(first, "warm")
    index, catalog = first._search_index, first._catalog
    warm.settle()
    second = open_store(store.root)
    warm.adopt(second)
    assert second._search_index is index and second._catalog is catalog
    assert second.git.before_write is not None
    path = store.root / "global" / "semantic" / "cache.md"
    path.write_text(path.read_text(encoding="utf-8").replace("warm", "tepid"), encoding="utf-8")
    assert [h["title"] for h in search(second, "tepid")] == ["The cache is tepid"]
    assert search(second, "warm") == []
    warm.settle()


def test_parts_of_a_store_made_again_are_dropped(store: Store, tmp_path: Path, caching: None) -> None:
    first = open_store(store.root)
    warm.adopt(first)
    remember(first, "Before the store was made again", "semantic")
    warm.settle()
    os.rename(store.root, tmp_path / "old-store")
    Store(store.root).init()
    again = open_store(store.root)
    warm.adopt(again)
    assert again._catalog is None and again._git is None  # nothing borrowed from the old store
    assert search(again, "Before") == []
    warm.settle()


def test_listed_records_follow_the_text_and_the_day(store: Store, caching: None) -> None:
    from datetime import datetime

    from gitmem.verbs.reads import list_entries

    remember(store, "Records age with the calendar", "semantic", topic="age")
    today = open_store(store.root, clock=lambda: datetime(2026, 12, 2, 12))
    later = open_store(store.root, clock=lambda: datetime(2027, 12, 2, 12))
    first = list_entries(today, layer="semantic")
    first[0]["fields"] = {}  # a caller changing its record changes nobody else's
    assert list_entries(today, layer="semantic")[0]["fields"]["Id"] == "global-sem-0001"
    assert list_entries(later, layer="semantic")[0]["age_days"] > list_entries(today, layer="semantic")[0]["age_days"]
    path = store.root / "global" / "semantic" / "age.md"
    path.write_text(path.read_text(encoding="utf-8").replace("calendar", "seasons"), encoding="utf-8")
    assert list_entries(today, layer="semantic")[0]["title"] == "Records age with the seasons"
