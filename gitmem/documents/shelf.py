"""One scope's documents in the store: the index, the managed copies, the active cap.

- A managed copy whose text differs from the index's sha256 was edited by hand (an editor, plain
  git): before a write touches that document, the edit becomes its next revision, dated by the
  file's modification time. Nothing is overwritten.
- The active cap counts the managed copies' bytes, front matter included. A write that would pass
  it moves the least recently accessed active documents (last access on this machine, else
  `updatedAt`, then id) to archived/ until the rest fits; they stay in git and readable by id.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from gitmem import caller
from gitmem.documents.access import load_access
from gitmem.documents.model import (
    DocIndex,
    DocRecord,
    body_digest,
    dump_index,
    load_index,
    parse_moment,
    render_copy,
    timestamp,
)
from gitmem.errors import InvalidInputError, ParseError
from gitmem.format import layers as L
from gitmem.format.document import split_copy
from gitmem.store.tree import read_memory_text

if TYPE_CHECKING:
    from gitmem.store.store import Store, WriteTxn

BODY_LIMIT = 2 * 1024 * 1024
ACTIVE_LIMIT = 10 * 1024 * 1024


@dataclass(frozen=True)
class DocLimits:
    """Caps in bytes (memory.json `settings.documents` may change them)."""

    body: int = BODY_LIMIT
    active: int = ACTIVE_LIMIT

    @classmethod
    def from_settings(cls, settings: Any) -> DocLimits:
        values = settings if isinstance(settings, dict) else {}

        def pick(name: str, default: int) -> int:
            value = values.get(name, default)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1024:
                raise InvalidInputError(f"memory.json settings.documents.{name} must be a whole number of bytes >= 1024")
            return value

        return cls(pick("bodyLimitBytes", BODY_LIMIT), pick("activeLimitBytes", ACTIVE_LIMIT))


def limits_of(store: Store) -> DocLimits:
    return DocLimits.from_settings(store.registry.setting("documents"))


def documents_dir(scope: str) -> str:
    return f"{L.scope_dir(scope)}/documents"


def index_path(scope: str) -> str:
    return f"{documents_dir(scope)}/index.json"


def copy_path(scope: str, record: DocRecord) -> str:
    return f"{documents_dir(scope)}/{record.status}/{record.filename}"


def read_index(store: Store, scope: str) -> DocIndex:
    relpath = index_path(scope)
    try:  # a folder, link, FIFO or binary file in its place is a ParseError naming it
        return load_index(read_memory_text(store.root, relpath), relpath)
    except FileNotFoundError:
        return DocIndex()


def write_index(store: Store, txn: WriteTxn, scope: str, index: DocIndex) -> None:
    store.write_file(txn, index_path(scope), dump_index(index))


def read_body(store: Store, scope: str, record: DocRecord) -> tuple[str, int] | None:
    """(body, line where it starts) of a managed copy; None when the copy is missing."""
    try:  # ParseError (naming the copy) when it is not a regular UTF-8 file
        text = read_memory_text(store.root, copy_path(scope, record))
    except FileNotFoundError:
        return None
    _values, body, line = split_copy(text)
    return body, line


def with_hand_edit(store: Store, scope: str, record: DocRecord) -> tuple[DocRecord, str | None]:
    """The record with a hand edit of its copy taken in as the next revision, and its body."""
    found = read_body(store, scope, record)
    if found is None:
        return record, None
    body = found[0]
    digest, size = body_digest(body)
    if digest == record.sha256:
        return record, body
    moment = os.stat(store.path(copy_path(scope, record))).st_mtime
    edited = replace(record, revision=record.revision + 1, sha256=digest, size=size,
                     updated_at=timestamp(caller.local_time(moment)))
    return edited, body


def place(store: Store, txn: WriteTxn, scope: str, old: DocRecord | None, new: DocRecord,
          body: str) -> None:
    """Write `new`'s managed copy; a copy under another status folder is removed (a move)."""
    target = copy_path(scope, new)
    if old is not None and copy_path(scope, old) != target:
        previous = copy_path(scope, old)
        txn.note(previous)  # journaled with the next write, so a crash leaves both, never none
        store.write_file(txn, target, render_copy(new, body))
        if store.path(previous).exists():
            os.remove(store.path(previous))
        return
    store.write_file(txn, target, render_copy(new, body))


def copy_size(record: DocRecord, body: str | None = None) -> int:
    """Bytes of the managed copy `record` would have (the body's size when not given)."""
    header = len(render_copy(record, "").encode("utf-8"))
    return header + (len(body.encode("utf-8")) if body is not None else record.size)


def make_room(store: Store, txn: WriteTxn, scope: str, index: DocIndex, incoming: int,
              limits: DocLimits, keep: str | None, moment: str) -> list[DocRecord]:
    """Archive least recently accessed active documents until `incoming` more bytes fit the
    active cap (`keep` never moves); returns the archived records, `index` updated."""
    if incoming > limits.active:
        raise InvalidInputError(f"refused: the document would take {incoming} bytes, more than the "
                                f"whole active cap of {limits.active}; nothing changed")
    active = [d for d in index.active() if d.id != keep]
    sizes = {d.id: _size_on_disk(store, scope, d) for d in active}
    total = sum(sizes.values()) + incoming
    if total <= limits.active:
        return []
    seen = load_access(store.root)

    def recency(record: DocRecord) -> tuple[datetime, datetime, str]:
        updated = parse_moment(record.updated_at)
        last = seen.get(record.id)
        return (parse_moment(last) if last else updated), updated, record.id

    order = sorted(active, key=recency)
    moved: list[DocRecord] = []
    for record in order:
        if total <= limits.active:
            break
        try:
            current, body = with_hand_edit(store, scope, record)
        except ParseError as exc:  # one unreadable copy must not stop the shelf
            store.notes.append(f"{exc}: not archived, left where it is")
            continue
        archived = replace(current, status="archived")
        place(store, txn, scope, record, archived, body if body is not None else "")
        index.documents = [archived if d.id == record.id else d for d in index.documents]
        total -= sizes[record.id]
        moved.append(archived)
    return moved


def _size_on_disk(store: Store, scope: str, record: DocRecord) -> int:
    try:
        return os.stat(store.path(copy_path(scope, record))).st_size
    except FileNotFoundError:
        return 0


def doc_scopes(store: Store) -> list[str]:
    """Scopes with a documents index."""
    return [scope for scope in store.scope_keys() if store.path(index_path(scope)).is_file()]
