"""The frame of every runtime write (add, replace, remove, archive, resolve, a maintenance
proposal accepted): the scope's runtime files are checked under the lock before anything is
committed, pending hand edits are brought in, and the scope is written in the same commit."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from gitmem.errors import InvalidInputError
from gitmem.format import layers as L
from gitmem.runtime.budget import Limits
from gitmem.runtime.model import RuntimeFile, timestamp, without_duplicates
from gitmem.runtime.tier import (
    hand_edits,
    read_records,
    refuse_problems,
    scopes_with_runtime,
    with_hand_edits,
    write_scope,
)

if TYPE_CHECKING:
    from gitmem.store.store import Store, WriteTxn


@contextlib.contextmanager
def runtime_writing(store: Store, verb: str, limits: Limits, scopes: Callable[[], list[str]],
                    *, allow_secret: bool | None = None) -> Iterator[WriteTxn]:
    """One runtime write: the runtime files of `scopes()` are checked under the lock before the
    store commits anything (see the module text)."""
    with store.writing(verb, absorb=False, allow_secret=allow_secret) as txn:
        keys = scopes()
        for key in keys:
            load_scope(store, key, limits)  # raises before anything changed
        held = unwritable_elsewhere(store, limits, keys)
        if held is None:
            store.absorb_hand_edits()
        else:  # committing pending hand edits would commit that file: they wait for a later write
            store.notes.append(f"{held}; left as it is, so pending hand edits of other files were not "
                               "committed with this runtime write")
        yield txn


def unwritable_elsewhere(store: Store, limits: Limits, keys: list[str]) -> str | None:
    """Why an uncommitted runtime file of another scope must not be committed (an unreadable
    memories.json, a rule-breaking line), or None."""
    dirty = {path.split("/runtime/", 1)[0] for path in store.git.dirty_paths() if "/runtime/" in path}
    for key in scopes_with_runtime(store):
        if key in keys or L.scope_dir(key) not in dirty:
            continue
        try:
            load_scope(store, key, limits)
        except InvalidInputError as exc:
            return str(exc)
    return None


def load_scope(store: Store, key: str, limits: Limits) -> tuple[RuntimeFile, list[str]]:
    """The scope's records with hand edits imported and duplicates dropped (in memory)."""
    records = read_records(store, key)
    edits = hand_edits(store, key, records, limits)
    refuse_problems(edits)
    records, imported = with_hand_edits(records, edits)
    records, dropped = without_duplicates(records)
    imported += [f"dropped {item.id}, a duplicate of an earlier item" for item in dropped]
    return records, imported


def commit_scope(store: Store, txn: WriteTxn, key: str, records: RuntimeFile, message: str,
                 imported: list[str]) -> None:
    """Write the scope's files in `txn` (registering a workspace scope) and set the commit message."""
    if key != L.GLOBAL:
        store.register_workspace(txn, key)
    write_scope(store, txn, key, records)
    details = "".join(f"- imported {line}\n" for line in imported)
    txn.message = message + (f"\n\n{details}" if details else "")


def now_stamp(store: Store) -> str:
    """The store's clock as a record timestamp."""
    return timestamp(store.now())
