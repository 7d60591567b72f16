"""Every cache learns what changed from one source (store/changes.py): a hand edit that keeps the
file's size and puts its modification time back is seen by search, show, list and the card, in a
one-shot process and in the warm server (its in-process caches on, each call a fresh Store
borrowing the kept parts). See docs/decisions/0028-one-repository-reader.md."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from gitmem.store import parsecache, warm
from gitmem.store.store import Store, open_store
from gitmem.verbs.context import build_card
from gitmem.verbs.entries import remember
from gitmem.verbs.reads import list_entries, show
from gitmem.verbs.search import search

T = TypeVar("T")
OLD, NEW = "gateway listens on 5433", "gateway listens on 7777"
TITLE_OLD, TITLE_NEW = "Port of the gateway", "Port of the tunnel!"


@pytest.fixture(params=["one-shot", "warm"])
def mode(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "warm":
        parsecache.enable()
        warm.enable()
    try:
        yield request.param
    finally:
        warm.disable()
        parsecache.disable()


def _call(root: Path, mode: str, work: Callable[[Store], T]) -> T:
    """One call as the CLI makes it (a store opened and closed) or as the warm server does."""
    store = open_store(root, cwd=root.parent)
    if mode == "warm":
        warm.adopt(store)
    try:
        return work(store)
    finally:
        if mode == "warm":
            warm.settle()
        else:
            store.close()


def _everything(store: Store, entry_id: str) -> dict[str, object]:
    return {
        "search": [h["id"] for h in search(store, "7777")],
        "search old": [h["id"] for h in search(store, "5433")],
        "show": show(store, entry_id)["body"],
        "list": [r["title"] for r in list_entries(store, layer="semantic")],
        "card": [t for t in (TITLE_OLD, TITLE_NEW) if t in build_card(store, workspace=None).text],
    }


def _age(path: Path) -> os.stat_result:
    then = time.time() - 3600
    os.utime(path, (then, then))
    return path.stat()


@pytest.mark.parametrize("committed", [True, False], ids=["committed", "already-edited"])
def test_a_same_size_edit_with_the_old_mtime_is_seen_by_every_reader(store: Store, mode: str,
                                                                      committed: bool) -> None:
    entry = remember(store, f"The {OLD}", "semantic", topic="ports", title=TITLE_OLD,
                     importance="high")
    path = store.root / "global" / "semantic" / "ports.md"
    if not committed:  # a hand edit not committed yet, then a second one of the same size
        path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    before = _age(path)
    seen = _call(store.root, mode, lambda s: _everything(s, entry.id))
    assert seen["search old"] == [entry.id] and seen["card"] == [TITLE_OLD]
    text = path.read_text(encoding="utf-8")
    edited = text.replace(OLD, NEW).replace(TITLE_OLD, TITLE_NEW)
    assert len(edited) == len(text) and edited != text
    path.write_text(edited, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    seen = _call(store.root, mode, lambda s: _everything(s, entry.id))
    assert seen == {"search": [entry.id], "search old": [], "show": f"The {NEW}",
                    "list": [TITLE_NEW], "card": [TITLE_NEW]}


def test_the_catch_up_names_each_change_once_and_then_trusts_the_settled_stamp(store: Store) -> None:
    remember(store, f"The {OLD}", "semantic", topic="ports", title=TITLE_OLD)
    relpath = "global/semantic/ports.md"
    path = store.root / relpath
    text = path.read_text(encoding="utf-8")
    path.write_text(text + "\n", encoding="utf-8")  # not settled yet: read again on every look
    store.catch_up_catalog()
    store.catch_up_catalog()
    assert store.changes is not None and store.changes.dirty == {relpath}
    assert store.changes.changed == (relpath,)
    before = _age(path)
    store.catch_up_catalog()  # the settled stamp is recorded
    store.catch_up_catalog()
    assert store.changes.changed == ()  # settled and unchanged: not read again
    path.write_text(text.replace(OLD, NEW) + "\n", encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    store.catch_up_catalog()
    assert store.changes.changed == (relpath,)
    path.write_text(text, encoding="utf-8")  # undone by hand: no longer differs from HEAD
    store.catch_up_catalog()
    assert store.changes.dirty == frozenset() and store.changes.changed == (relpath,)
