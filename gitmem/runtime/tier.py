"""One scope's runtime files in the store: reading them, writing them inside a write transaction,
and noticing hand edits of the projections.

A projection that differs from the records' rendering is either behind its records (rendered
again) or edited by hand (its changes imported); base.py tells which from the committed history
of memories.json and the projection, so every machine, a fresh clone too, tells it alike.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gitmem import caller
from gitmem.errors import InvalidInputError, ParseError
from gitmem.format import layers as L
from gitmem.format.normalize import Problem
from gitmem.runtime.base import HISTORY_DEPTH, Pair, edit_base, projection_changes
from gitmem.runtime.budget import Limits
from gitmem.runtime.edits import Change, apply_changes
from gitmem.runtime.model import (
    PROJECTIONS,
    RECORDS_FILE,
    RuntimeFile,
    dump_records,
    load_records,
    normalize_content,
    parse_projection,
    render_projection,
    timestamp,
)
from gitmem.store.tree import read_memory_text

if TYPE_CHECKING:
    from gitmem.store.store import Store, WriteTxn

ARCHIVE_FILE = "global/runtime/USER.archive.md"


# -- paths ------------------------------------------------------------------------------------
def runtime_dir(scope: str) -> str:
    return f"{L.scope_dir(scope)}/runtime"


def records_path(scope: str) -> str:
    return f"{runtime_dir(scope)}/{RECORDS_FILE}"


def projection_path(scope: str, target: str) -> str:
    return f"{runtime_dir(scope)}/{PROJECTIONS[target]}"


def targets_of(scope: str) -> tuple[str, ...]:
    """The user profile lives in the global scope only."""
    return ("user", "memory") if scope == L.GLOBAL else ("memory",)


def limits_of(store: Store) -> Limits:
    return Limits.from_settings(store.registry.setting("runtime"))


# -- reading ----------------------------------------------------------------------------------
def read_records(store: Store, scope: str) -> RuntimeFile:
    """The scope's records (none when it has no memories.json yet)."""
    relpath = records_path(scope)
    try:  # a folder, link, FIFO or binary file in its place is a ParseError naming it
        text = read_memory_text(store.root, relpath)
    except FileNotFoundError:
        return RuntimeFile()
    return load_records(text, relpath)


def readable_records(store: Store, scope: str) -> RuntimeFile:
    """The scope's records for a read: the file, or (when it does not parse) git's last good
    version, with a note (store/lastgood.py); writes use read_records and are refused."""
    relpath = records_path(scope)
    return store.read_json(relpath, lambda text: load_records(text, relpath), RuntimeFile)


@dataclass
class HandEdit:
    """Changes a person made to one projection, and the lines that break the rules."""

    path: str
    target: str
    changes: list[Change] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)
    when: str = ""


def hand_edits(store: Store, scope: str, records: RuntimeFile, limits: Limits) -> list[HandEdit]:
    """Hand edits of the scope's projections not yet in its records."""
    found = []
    for target in targets_of(scope):
        relpath = projection_path(scope, target)
        try:
            disk = read_memory_text(store.root, relpath)
        except FileNotFoundError:
            continue  # a missing projection is rendered again
        except ParseError as exc:  # reported like a line that breaks the rules: never imported
            found.append(HandEdit(relpath, target, problems=[(exc.line, exc.reason)]))
            continue
        rendered = render_projection([item.content for item in records.of(target)])
        if disk == rendered:
            continue
        head, history = committed_pairs(store, scope, target)
        base = edit_base(head, history, target)
        if base == disk:
            continue  # rendered from other records: behind them, not edited
        changes, problems = projection_changes(base, rendered, disk, limits.item)
        if changes or problems:
            mtime = os.stat(store.path(relpath)).st_mtime
            when = timestamp(caller.local_time(mtime))
            found.append(HandEdit(relpath, target, changes, problems, when))
    return found


def committed_pairs(store: Store, scope: str, target: str) -> tuple[Pair, Iterator[Pair]]:
    """(memories.json, projection) at HEAD, and at each commit that changed either, newest first
    (read lazily). A commit that changed only memories.json can be the one that made the
    projection a rendering again (a write that imported a hand edit the commit before it held)."""
    json_path, relpath = records_path(scope), projection_path(scope, target)
    if not store.git.head_oid():
        return (None, None), iter(())

    def at(rev: str, path: str) -> str | None:
        data = store.git.read_file_at(rev, path)
        return None if data is None else data.decode("utf-8", errors="replace")

    def older() -> Iterator[Pair]:
        for info in store.git.log(limit=HISTORY_DEPTH, path=(json_path, relpath)):
            yield at(info.oid, json_path), at(info.oid, relpath)

    return (at("HEAD", json_path), at("HEAD", relpath)), older()


def projection_problems(store: Store, limits: Limits) -> list[Problem]:
    """Lines of USER.md / MEMORY.md files that break the rules (a `§` inside an item, an item
    over its limit): errors for `gitmem check`; a write refuses to import them (refuse_problems)."""
    found = []
    for scope in store.scope_keys():
        for target in targets_of(scope):
            relpath = projection_path(scope, target)
            try:
                text = read_memory_text(store.root, relpath)
            except (FileNotFoundError, ParseError):
                continue  # absent: rendered again; unreadable: the normalization rules report it
            _items, bad = parse_projection(text, limits.item)
            if bad:  # an item gitmem wrote before a limit was lowered is not a broken hand edit
                written = {normalize_content(i.content) for i in readable_records(store, scope).items}
                lines = text.lstrip("\ufeff").splitlines()
                bad = [(n, why) for n, why in bad if normalize_content(lines[n - 1]) not in written]
            found += [Problem(relpath, line, f"{reason} (runtime memory: one item per line, no §)")
                      for line, reason in bad]
    return found


def refuse_problems(edits: list[HandEdit]) -> None:
    """A hand edit with lines that break the rules stops the write; the file stays as it is."""
    problems = [f"{edit.path}:{line}: {reason}" for edit in edits for line, reason in edit.problems]
    if problems:
        raise InvalidInputError(
            "; ".join(problems) + " — a hand edit breaks the runtime memory rules; the file is left "
            "as it is: fix the line (one item per line, no §) and retry"
        )


def with_hand_edits(records: RuntimeFile, edits: list[HandEdit]) -> tuple[RuntimeFile, list[str]]:
    """The records with the edits' changes applied, and a line per applied change."""
    done: list[str] = []
    for edit in edits:
        records, applied = apply_changes(records, edit.target, edit.changes, edit.when)
        done += [f"{edit.path}: {line}" for line in applied]
    return records, done


def effective_records(store: Store, scope: str, limits: Limits) -> tuple[RuntimeFile, list[str]]:
    """What a reader sees: the records plus hand edits not imported yet; notes on rule-breaking
    lines (a read never writes)."""
    records = readable_records(store, scope)
    edits = hand_edits(store, scope, records, limits)
    notes = [f"{edit.path}:{line}: {reason} (not imported)" for edit in edits
             for line, reason in edit.problems]
    if not edits:
        return records, notes
    before = {item.id: item.content for item in records.items}
    records, _ = with_hand_edits(records, edits)
    for item in records.items:  # a new line's id is made from its text: the import gives it the same
        if before.get(item.id) != item.content:
            item.extra = {**item.extra, "pending": "hand edit, imported by the next runtime write"}
    return records, notes


# -- writing ----------------------------------------------------------------------------------
def write_scope(store: Store, txn: WriteTxn, scope: str, records: RuntimeFile) -> list[str]:
    """Write memories.json and the projections of a scope; returns the paths that changed."""
    changed = []
    if store.write_file(txn, records_path(scope), dump_records(records)):
        changed.append(records_path(scope))
    for target in targets_of(scope):
        relpath = projection_path(scope, target)
        items = records.of(target)
        if not items and not store.path(relpath).exists():
            continue
        if store.write_file(txn, relpath, render_projection([item.content for item in items])):
            changed.append(relpath)
    return changed


def import_hand_edits(store: Store, txn: WriteTxn, scope: str, limits: Limits) -> list[str]:
    """Inside a write: bring hand edits of the scope's projections into its records and render
    the projections again; returns a line per imported change."""
    records = read_records(store, scope)
    edits = hand_edits(store, scope, records, limits)
    refuse_problems(edits)
    records, done = with_hand_edits(records, edits)
    if store.path(records_path(scope)).exists() or records.items:
        write_scope(store, txn, scope, records)
    return done


def scopes_with_runtime(store: Store) -> list[str]:
    """Scopes that have a runtime folder."""
    return [scope for scope in store.scope_keys() if store.path(runtime_dir(scope)).is_dir()]
