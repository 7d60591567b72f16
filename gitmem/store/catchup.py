"""Bringing the catalog up to a commit, then to the working tree: re-read only the files that
changed since it last looked. The one source of a call's changed paths: git for the commits
and for what differs from HEAD (git status, once per call), the stamp helper (gitmem/stamps.py)
for which of those files moved since the last look; the call's other caches (the card's
summaries) read that answer instead of asking git again.

The catalog describes the files as they are on disk, committed or not: a topic file renamed or
an entry moved by hand is found where it is now, and the path it left holds nothing (no
"duplicate Id" about a file that no longer exists, no `show` that misses a moved entry)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from gitmem.format import layers as L
from gitmem.stamps import file_stamp, settled, stamp_text
from gitmem.store.catalog import Catalog, FileReader


class Look(NamedTuple):
    """What one catch-up learned: the commit it brought the catalog to, the topic files that
    differ from it in the working tree (git status), and the topic files read again because
    they changed since the last catch-up (commits that moved HEAD, stamps that moved)."""

    head: str | None
    dirty: frozenset[str]
    changed: tuple[str, ...] = ()


class Reader(Protocol):
    """What one_look needs of a store (gitmem.store.store.Store)."""

    _look: object
    changes: Look | None

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
    """The file's stamp (gitmem/stamps.py) as text: '' when it is gone or has not settled, and
    then it proves nothing (the file is read again on every catch-up until it settles)."""
    stamp = file_stamp(root / relpath)
    return stamp_text(stamp) if stamp is not None and settled(stamp) else ""


def reconcile(catalog: Catalog, root: Path, dirty: list[str], read: FileReader) -> list[str]:
    """Bring the catalog from HEAD to the working tree: `dirty` are the paths that differ from
    HEAD now. They are read as they are (a deleted one is dropped), and so are the files that
    differed last time and no longer do (an edit undone, a rename moved back). Returns the
    topic files read again."""
    try:
        before: dict[str, str] = json.loads(catalog.get_meta("worktree") or "{}")
    except ValueError:
        before = {}
    if not isinstance(before, dict):
        before = {}
    now = {p: _stamp(root, p) for p in dirty if L.classify_path(p).kind == "topic"}
    stale = [p for p in sorted(set(before) | set(now)) if before.get(p) != now.get(p) or now.get(p) == ""]
    if stale:
        catalog.refresh(stale, read)
    if stale or set(before) != set(now):
        catalog.set_meta("worktree", json.dumps(now) if now else None)
    return stale


@contextlib.contextmanager
def one_look(store: Reader) -> Iterator[Look | None]:
    """For a read made of several parts (the context card): the catalog is caught up once, at
    the start, and the parts see that state (git status runs once, not once per part). Yields
    what that catch-up found (None when unknown, e.g. HEAD moved meanwhile); a write inside
    ends it: the write, and every read after it, catch up for themselves."""
    with store.reading():
        store.catch_up_catalog()
        look = store.changes
    if look is not None and look.head != store.git.head_oid():
        look = None
    store._look = True
    try:
        yield look
    finally:
        store._look = None
