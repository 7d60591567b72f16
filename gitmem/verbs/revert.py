"""`gitmem revert ID [--to DATE|REV]`: bring an entry's text back as it was, in one commit."""

from __future__ import annotations

from gitmem.errors import InvalidInputError, NotFoundError
from gitmem.format import layers as L
from gitmem.format.entry import Entry
from gitmem.format.markdown import new_topic_file
from gitmem.provenance.asof import resolve_when
from gitmem.provenance.trace import EntryTrace, Version
from gitmem.store.store import Store
from gitmem.verbs.base import WriteResult
from gitmem.verbs.blocks import open_held


def _target(store: Store, entry_id: str, to: str | None) -> tuple[Version, str]:
    """The version to restore and the short name of the commit it comes from."""
    trace = EntryTrace(store.git, entry_id)
    if to is not None:
        commit = resolve_when(store, to)
        versions = trace.versions_at(commit.oid)
        if not versions:
            raise NotFoundError(f"{entry_id} did not exist at {to} (commit {commit.oid[:7]})")
        return versions[0], commit.oid[:7]
    changes = trace.iter_changes()  # read newest first, only as far as the version restored
    latest = next(changes, None)
    if latest is None:
        raise NotFoundError(f"no entry with Id {entry_id} in the history of this store")
    if latest.before is None:
        raise InvalidInputError(f"{entry_id} has a single version: there is nothing to go back to")
    parent = next((c for c in changes if c.after is not None and c.after.key == latest.before.key),
                  None)
    return latest.before, (parent.commit.oid[:7] if parent else "the previous version")


def revert(store: Store, entry_id: str, *, to: str | None = None) -> WriteResult:
    """Restore the entry's heading, body and fields from REV (default: its previous version).

    The entry stays in the file it lives in now; an entry removed since is put back into the
    file it had at REV.
    """
    target, label = _target(store, entry_id, to)
    restored = Entry(target.entry.title, target.entry.body, dict(target.entry.fields))
    with store.writing("revert") as txn:
        try:
            found = store.locate(entry_id)
        except NotFoundError:
            found = None
        relpath = found.path if found else target.path
        role = L.classify_path(relpath)
        if role.kind != "topic":
            raise InvalidInputError(f"{relpath} is not a topic file: restore {entry_id} by hand")
        edit = open_held(store, relpath)  # an entry left in conflict is settled first, not reverted
        index = edit.document.find(entry_id) if edit is not None else None
        if edit is not None and index is not None:
            edit.refuse_if_held(edit.document.entries[index], "revert")
        document = store.read_file(relpath)
        if document is None:
            document = new_topic_file({"topic": role.slug, "layer": role.layer, "scope": role.scope},
                                      role.slug)
        index = document.find(entry_id)
        if index is None:
            document.entries.append(restored)
        else:
            current = document.entries[index]
            if (current.title, current.body, current.fields) == (
                    restored.title, restored.body, restored.fields):
                return WriteResult(entry_id, relpath, False, f"already as at {label}; nothing changed")
            document.entries[index] = restored
        store.write_topic(txn, relpath, document)
        txn.message = f"revert: {entry_id} to {label}"
        return WriteResult(entry_id, relpath, True, f"restored as at {label}")
