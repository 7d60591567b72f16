"""The open parts of a store (git repository, catalog, search index) kept between calls in a
long-lived process, the warm server: each call's fresh Store borrows them and gives them back.

What is kept is only what a fresh Store would open again; every call still brings the catalog
up to HEAD, absorbs hand edits and checks the index as a new process does. Parts are dropped
when the store's folder, repository or catalog file is no longer the one they were opened on
(the store deleted and made again). Off unless `enable()` is called.

Calls run at the same time on threads of their own: a part is lent to one call at a time (each
call that finds none kept opens its own), and up to MAX_SPARE sets per store are kept, so eight
calls at once all find warm parts. The stores a call opened are its own (a context variable),
given back when that call settles.
"""

from __future__ import annotations

import contextlib
import os
import threading
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem.store import aftercall

if TYPE_CHECKING:
    from gitmem.store.base import StoreBase

MAX_SPARE = 8  # sets of parts kept per store (one per call running at the same time)
_kept: dict[Path, list[Parts]] | None = None
# The stores of the call under way on this thread, given back by settle().
_adopted: ContextVar[list[StoreBase] | None] = ContextVar("gitmem_adopted", default=None)
_guard = threading.Lock()


@dataclass
class Parts:
    """What one store had open, and the identity of the files they were opened on."""

    git: Any
    catalog: Any
    index: Any
    identity: tuple[int, ...]


def enable() -> None:
    """Keep open parts, parsed files (store/parsecache.py), values read from the whole store
    (store/kept.py) and git's answers about code repositories (git/probecache.py) between calls,
    and decode the index's biggest posting lists ahead of need (search/cache.py)."""
    global _kept
    from gitmem.git import probecache
    from gitmem.search import cache as segment_cache
    from gitmem.store import kept as values
    from gitmem.store import parsecache

    parsecache.enable()
    probecache.enable()
    values.enable()
    segment_cache.decode_ahead(True)
    with _guard:
        if _kept is None:
            _kept = {}


def disable() -> None:
    """Forget (and close) every kept part; stop keeping anything."""
    global _kept
    from gitmem.git import probecache
    from gitmem.search import cache as segment_cache
    from gitmem.store import kept as values
    from gitmem.store import parsecache

    parsecache.disable()
    probecache.disable()
    values.disable()
    segment_cache.decode_ahead(False)
    with _guard:
        kept, _kept = _kept, None
    for spares in (kept or {}).values():
        for parts in spares:
            _close(parts)


def enabled() -> bool:
    """Whether this process keeps parts between calls (the warm server)."""
    return _kept is not None


def _identity(root: Path) -> tuple[int, ...]:
    """Device and inode of the folder, its .git and its catalog: a store made again differs."""
    found: list[int] = []
    for path in (root, root / ".git", root / "state" / "catalog.sqlite"):
        try:
            info = os.stat(path)
        except OSError:
            found += [0, 0]
        else:
            found += [info.st_dev, info.st_ino]
    return tuple(found)


def adopt(store: StoreBase) -> None:
    """A store opened for the call under way: it borrows the kept parts, and settle() gives
    back what it has open when the call ends."""
    if _kept is None:
        return
    stores = _adopted.get()
    if stores is None:
        stores = []
        _adopted.set(stores)
    stores.append(store)
    lend(store)


def settle() -> None:
    """The call is over: keep the open parts of the stores it opened."""
    stores = _adopted.get()
    while stores:
        give_back(stores.pop(0))


def lend(store: StoreBase) -> None:
    """Give a freshly opened store the parts kept for its folder (if still the same store)."""
    if _kept is None or store.read_only:
        return
    aftercall.wait_for_parts(store.root, lambda: bool(_kept and _kept.get(store.root)))
    with _guard:
        spares = _kept.get(store.root)
        parts = spares.pop() if spares else None
    if parts is None:
        return
    if parts.identity != _identity(store.root):
        _close(parts)
        return
    store._git, store._catalog, store._search_index = parts.git, parts.catalog, parts.index
    if parts.git is not None:  # the repository's hooks call back into the store that holds it
        parts.git.before_write = store._before_git_write
    if parts.index is not None:
        parts.index._note = store.notes.append


def give_back(store: StoreBase) -> None:
    """Keep what the store opened for the next call (instead of closing it)."""
    from gitmem.store.catalog import MemoryCatalog

    if _kept is None or store.read_only or isinstance(store._catalog, MemoryCatalog):
        store.close()
        return
    parts = Parts(store._git, store._catalog, store._search_index, _identity(store.root))
    store._git = store._catalog = store._search_index = None
    if parts.git is not None:
        parts.git.before_write = None
        if parts.git.status_keeper is None:  # kept between calls: so is git status (statuswatch.py)
            from gitmem.store.statuswatch import StatusWatch

            parts.git.status_keeper = StatusWatch(store.root)
    if parts.index is not None:
        parts.index._note = lambda _message: None
    with _guard:
        spares = _kept.setdefault(store.root, [])
        spares.append(parts)
        extra = spares.pop(0) if len(spares) > MAX_SPARE else None
    aftercall.notify()
    if extra is not None:
        _close(extra)


def _close(parts: Parts) -> None:
    for part in (parts.catalog, parts.index):
        if part is not None:
            with contextlib.suppress(Exception):
                part.close()
