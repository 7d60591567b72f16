"""Values read from the whole store (counts, the check's errors), kept in a long-lived process
(the warm server) with a signature of everything they were read from, and given again while the
signature holds.

The signature: HEAD and the branch, every path git status reports as differing from HEAD with
its stamp (gitmem/stamps.py), the stamps of the other files the value reads (state/ files, which
git ignores; .git/config), and the day. A file that git reports unchanged holds HEAD's bytes, so
the same signature means the same files: a hand edit, a `git pull`, a CLI write, a new day each
change it. A file changed too recently to be judged by its stamp (not settled) makes no
signature at all: the value is read again on every call until it settles.

Off unless `enable()` is called (store/warm.py does): a one-shot CLI process would only fill it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

from gitmem.stamps import file_stamp, settled

if TYPE_CHECKING:
    from gitmem.store.base import StoreBase

T = TypeVar("T")
Signature = tuple[object, ...]
_kept: dict[tuple[str, str], tuple[Signature, object]] = {}
_guard = threading.Lock()
_on = False


def enable() -> None:
    """Keep values from now on (warm.enable)."""
    global _on
    _on = True


def signature(store: StoreBase, files: Iterable[str] = (), *, settled_only: bool = True) -> Signature | None:
    """What a value read from every memory file and from `files` (paths in the store) depends
    on; None when one of those files changed too recently for its stamp to prove anything
    (unless not `settled_only`: a value that only says when it was read, the check's errors)."""
    git = store.git
    stamps: list[tuple[str, object]] = []
    for relpath in [*git.dirty_paths(), *files, ".git/config", ".git/MERGE_HEAD"]:
        stamp = file_stamp(store.path(relpath))
        if settled_only and stamp is not None and not settled(stamp):
            return None
        stamps.append((relpath, stamp))
    return (git.head_oid(), git.branch(), tuple(stamps), store.today().isoformat())


def kept(store: StoreBase, name: str, sign: Signature | None, build: Callable[[], T]) -> T:
    """build(), or what it returned for this store and `name` under an equal signature (only
    while warm parts are kept: otherwise, and for no signature, build() every time)."""
    if sign is None or not _on:
        return build()
    key = (str(store.root), name)
    known = _kept.get(key)
    if known is not None and known[0] == sign:
        return known[1]  # type: ignore[return-value]
    value = build()
    with _guard:
        _kept[key] = (sign, value)
    return value


def disable() -> None:
    """Drop every kept value; keep none (warm.disable)."""
    global _on
    _on = False
    with _guard:
        _kept.clear()
