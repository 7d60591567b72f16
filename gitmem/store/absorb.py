"""Absorbing hand edits: what someone changed in the working tree is committed (normalized)
before gitmem's own write, except what cannot be committed, which is left out of every commit
until it is fixed (see integrity.py)."""

from __future__ import annotations

from typing import Any, Protocol

from gitmem.format import layers as L
from gitmem.format.entry import TopicFile
from gitmem.format.normalize import Outcome, Problem
from gitmem.fsio import is_temp_name, refuse_link, write_bytes_atomic
from gitmem.secrets.scan import refuse_hand_edit_secrets
from gitmem.store import integrity
from gitmem.store.catalog import Catalog
from gitmem.store.registry import Registry
from gitmem.store.txn import WriteTxn, commit_message


class Store(Protocol):
    """What absorbing needs of a store (gitmem.store.store.Store)."""

    root: Any
    held: dict[str, Problem]
    notes: list[str]
    _seen_clean: bool

    @property
    def git(self) -> Any: ...
    @property
    def catalog(self) -> Catalog: ...
    @property
    def registry(self) -> Registry: ...
    def normalize_paths(self, relpaths: list[str], *, fix: bool, gate: bool = False) -> list[Outcome]: ...
    def _read_lenient(self, relpath: str) -> TopicFile | None: ...
    def write_file(self, txn: WriteTxn, relpath: str, text: str) -> bool: ...
    def register_workspace(self, txn: WriteTxn, key: str) -> None: ...
    def keep_marks(self, txn: WriteTxn) -> None: ...
    def regenerate_layer_indexes(self, relpaths: list[str]) -> list[str]: ...
    def _clear_journal(self) -> None: ...
    def update_search_index(self, relpaths: list[str]) -> None: ...
    def record_write(self, verb: str, oid: str | None, paths: list[str], message: str) -> None: ...


def absorb_hand_edits(store: Store) -> list[str]:
    """Commit changes someone made by hand (normalized) before our own write; returns the
    committed paths."""
    found = store.git.dirty_paths()
    store._seen_clean = not found
    dirty = [p for p in found if not is_temp_name(p)]
    put_back = restore_deleted_copies(store, dirty)
    dirty = [p for p in dirty if p not in put_back]
    if not dirty:
        return []
    for relpath in dirty:  # a link made by hand is neither followed nor committed
        refuse_link(store.root, relpath)
    refuse_hand_edit_secrets(store.root, dirty, lambda path: store.git.read_file_at("HEAD", path))
    outcomes = store.normalize_paths(dirty, fix=True, gate=True)
    held = hold_back(store, dirty, outcomes)
    store.catalog.refresh([p for p in dirty if p in held], store._read_lenient)
    dirty = [p for p in dirty if p not in held]
    outcomes = [o for o in outcomes if o.path not in held]
    if not dirty:
        return []
    txn = WriteTxn("hand edit")
    for outcome in outcomes:
        if outcome.changed:
            store.write_file(txn, outcome.path, outcome.text)
    _register_hand_made_workspaces(store, txn, dirty)
    normalized = {o.path: o.topic for o in outcomes if o.topic is not None}
    store.catalog.refresh(dirty, lambda p: normalized.get(p) or store._read_lenient(p))
    store.keep_marks(txn)
    paths = sorted(set(dirty) | set(store.regenerate_layer_indexes(dirty)) | set(txn.touched))
    listing = "\n".join(f"- {p}" for p in paths)
    oid = store.git.commit_paths(paths, commit_message(f"hand edit: {len(paths)} file(s)\n\n{listing}\n"))
    store.catalog.set_meta("head", store.git.head_oid())
    store._clear_journal()
    store.update_search_index(paths)
    store.record_write("hand edit", oid, paths, f"hand edit: {len(paths)} file(s)")
    return paths


def restore_deleted_copies(store: Store, relpaths: list[str]) -> list[str]:
    """Document copies deleted by hand while their index lists them (integrity.py), put back as
    HEAD holds them: the deletion would lose the text on every machine once pushed, and left
    uncommitted it would stop the next sync that brings a change of that document."""
    restored = []
    for relpath in relpaths:
        if integrity.listed_copy_deleted(store.root, relpath) is None:
            continue
        data = store.git.read_file_at("HEAD", relpath)
        if data is None:
            continue
        write_bytes_atomic(store.root / relpath, data)
        restored.append(relpath)
        store.notes.append(f"{relpath} was deleted by hand while its document is listed; put it "
                           "back from git (`gitmem doc archive ID` retires a document)")
    return restored


def hold_back(store: Store, relpaths: list[str], outcomes: list[Outcome] | None = None) -> dict[str, Problem]:
    """The uncommitted files among these that no commit may take (integrity.held_back): they
    are left as they are (never staged by gitmem), named in one note; writes into them are
    refused (StoreBase.refuse_held) and every other write goes on. Any kind of error leaves
    its file out the same way, so one file never blocks the rest."""
    if outcomes is None:
        outcomes = store.normalize_paths(relpaths, fix=False, gate=True)
    held = integrity.held_back(store.root, relpaths, outcomes)
    new = {p: problem for p, problem in held.items() if p not in store.held}
    store.held.update(held)
    if new:
        store.notes.append(integrity.held_note(store.held))
    return held


def _register_hand_made_workspaces(store: Store, txn: WriteTxn, relpaths: list[str]) -> None:
    """A workspace folder someone created by hand joins memory.json like any other."""
    for key in sorted({role.scope for role in map(L.classify_path, relpaths)} - {"", L.GLOBAL}):
        if key not in store.registry.workspaces:
            store.register_workspace(txn, key)
