"""Editing one entry's title and body in place, refused when it changed since it was read."""

from __future__ import annotations

from gitmem.errors import ConflictError, InvalidInputError
from gitmem.format.entry import Entry, text_hash
from gitmem.secrets.scan import refuse_secrets
from gitmem.store.store import Store
from gitmem.verbs.base import WriteResult, check_text, heading_for, safe_body
from gitmem.verbs.blocks import open_held, save_held


def entry_version(entry: Entry) -> str:
    """A stamp of what a reader saw of an entry: title, body and fields."""
    fields = "\n".join(f"{k}: {v}" for k, v in entry.ordered_fields())
    return text_hash(f"{entry.title}\n{entry.body}\n{fields}")[:16]


def edit_entry(store: Store, entry_id: str, *, title: str, body: str,
               expected: str | None = None) -> WriteResult:
    """Replace an entry's title and body, keeping its Id and fields; one commit.

    `expected` is the `entry_version` the editor started from: when the entry changed since, the
    edit is refused (ConflictError) and nothing is written, so no one's change is written over."""
    text = safe_body(check_text(body, "body"))
    refuse_secrets(title, "title", overridable=False)
    heading = heading_for(text, title.strip() or None)
    if expected is not None:  # refuse before the write starts, so a refusal commits nothing
        _refuse_changed(entry_id, store.locate(entry_id).entry, expected)
    with store.writing("edit") as txn:
        found = store.locate(entry_id)
        edit = open_held(store, found.path)
        if edit is None:
            raise InvalidInputError(f"{found.path} is gone; nothing was written")
        index = edit.document.find(entry_id)
        if index is None:
            raise InvalidInputError(f"{entry_id} is no longer in {found.path}; nothing was written")
        current = edit.document.entries[index]
        edit.refuse_if_held(current, "edit")
        if expected is not None:
            _refuse_changed(entry_id, current, expected)
        updated = current.with_body(text, heading)
        if (updated.title, updated.body) == (current.title, current.body):
            txn.message = ""
            return WriteResult(entry_id, found.path, False, "already so; nothing changed")
        edit.document.entries[index] = updated
        save_held(store, txn, edit)
        txn.message = f"edit: {entry_id}"
        return WriteResult(entry_id, found.path, True)


def _refuse_changed(entry_id: str, current: Entry, expected: str) -> None:
    if entry_version(current) != expected:
        raise ConflictError(
            f"{entry_id} changed since it was opened for editing; nothing was written:"
            " reload it and apply your change again"
        )
