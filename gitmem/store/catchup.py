"""Bringing the catalog up to a commit, then to the working tree: re-read only the files that
changed since it last looked.

The catalog describes the files as they are on disk, committed or not: a topic file renamed or
an entry moved by hand is found where it is now, and the path it left holds nothing (no
"duplicate Id" about a file that no longer exists, no `show` that misses a moved entry)."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from gitmem.format import layers as L
from gitmem.fsio import read_regular_file
from gitmem.store.catalog import Catalog, FileReader

# HEAD, and the topic files that differ from it in the working tree
Look = tuple[str | None, frozenset[str]]


class Reader(Protocol):
    """What one_look needs of a store (gitmem.store.store.Store)."""

    _look: object

    @property
    def catalog(self) -> Catalog: ...
    @property
    def git(self) -> Any: ...
    def reading(self) -> contextlib.AbstractContextManager[None]: ...
    def catch_up_catalog(self) -> list[str]: ...

# changed_between(old, new): the paths that differ (old None: every file of new); raises when
# `old` is unknown, e.g. after history was rewritten.
ChangedBetween = Callable[[str | None, str], list[str]]


def catch_up(catalog: Catalog, head: str | None, changed_between: ChangedBetween,
             all_topic_files: Callable[[], list[str]], read: FileReader) -> list[str]:
    """Bring the catalog to `head`; returns the topic files that changed underneath it
    (pulls, plain-git commits), so a write can regenerate their layer indexes too."""
    seen = catalog.get_meta("head")
    changed: list[str] = []
    if catalog.is_empty() or (head is None and seen is not None):
        changed = all_topic_files()
        catalog.rebuild(changed, read)
    elif head is not None and seen != head:
        try:
            changed = changed_between(seen, head)
        except Exception:  # noqa: BLE001 - an unknown old head: history was rewritten
            changed = all_topic_files()
            catalog.rebuild(changed, read)
        else:
            catalog.refresh(changed, read)
    catalog.set_meta("head", head)
    return [p for p in changed if L.classify_path(p).kind == "topic"]


def _stamp(root: Path, relpath: str) -> str:
    """A digest of a file's bytes ('' when it cannot be read): did it change since? (Size and
    mtime are not enough: two writes of one size within a clock tick look alike.)"""
    try:
        return hashlib.sha1(read_regular_file(root / relpath)).hexdigest()
    except OSError:
        return ""


def reconcile(catalog: Catalog, root: Path, dirty: list[str], read: FileReader) -> None:
    """Bring the catalog from HEAD to the working tree: `dirty` are the paths that differ from
    HEAD now. They are read as they are (a deleted one is dropped), and so are the files that
    differed last time and no longer do (an edit undone, a rename moved back)."""
    try:
        before: dict[str, str] = json.loads(catalog.get_meta("worktree") or "{}")
    except ValueError:
        before = {}
    now = {p: _stamp(root, p) for p in dirty if L.classify_path(p).kind == "topic"}
    stale = [p for p in sorted(set(before) | set(now)) if before.get(p) != now.get(p)]
    if stale:
        catalog.refresh(stale, read)
    if stale or set(before) != set(now):
        catalog.set_meta("worktree", json.dumps(now) if now else None)


def worktree_state(catalog: Catalog) -> Look | None:
    """The commit the catalog was last brought to and the topic files that differed from it in
    the working tree then (None when unknown). Read it right after catching up, under the
    store lock: between the two steps of another catch-up the pair does not agree."""
    try:
        dirty = json.loads(catalog.get_meta("worktree") or "{}")
    except ValueError:
        return None
    return (catalog.get_meta("head"), frozenset(dirty)) if isinstance(dirty, dict) else None


@contextlib.contextmanager
def one_look(store: Reader) -> Iterator[Look | None]:
    """For a read made of several parts (the context card): the catalog is caught up once, at
    the start, and the parts see that state (git status runs once, not once per part). Yields
    what that catch-up found (None when unknown, e.g. HEAD moved meanwhile); a write inside
    ends it: the write, and every read after it, catch up for themselves."""
    with store.reading():
        store.catch_up_catalog()
        look = worktree_state(store.catalog)
    if look is not None and look[0] != store.git.head_oid():
        look = None
    store._look = True
    try:
        yield look
    finally:
        store._look = None
