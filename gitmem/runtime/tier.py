"""One scope's runtime files in the store: reading them, writing them inside a write transaction,
and noticing hand edits of the projections.

A projection differs from the records' rendering for one of two reasons: gitmem rendered it from
older records (a pull, a merge, a hand edit of memories.json), or a person edited it. The
difference is told by the projection gitmem last wrote on this machine, kept with its hash in
`state/runtime.json` (machine-local, never committed): an unchanged file is stale and rendered
again; a changed one is a hand edit, whose changes against that base are imported (edits.py).
Without a recorded base (a fresh clone) the committed copy at HEAD serves as the base.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem.errors import InvalidInputError, ParseError
from gitmem.format import layers as L
from gitmem.fsio import load_json_object, write_json_atomic
from gitmem.runtime.budget import Limits
from gitmem.runtime.edits import Change, apply_changes, diff_lines
from gitmem.runtime.model import (
    PROJECTIONS,
    RECORDS_FILE,
    RuntimeFile,
    dump_records,
    load_records,
    parse_projection,
    render_projection,
    timestamp,
)
from gitmem.store.tree import read_memory_text

if TYPE_CHECKING:
    from gitmem.store.store import Store, WriteTxn

STATE_FILE = "state/runtime.json"
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


# -- the base each projection was last written from (machine-local) --------------------------
def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_state(root: Path) -> dict[str, Any]:
    return load_json_object(root / STATE_FILE)


def remember_projections(root: Path, texts: dict[str, str]) -> None:
    """Record these projection texts as the ones on disk (called after writing them)."""
    state = load_state(root)
    known = state.setdefault("projections", {})
    if not isinstance(known, dict):
        known = state["projections"] = {}
    changed = False
    for relpath, text in texts.items():
        entry = {"sha256": _digest(text), "text": text}
        if known.get(relpath) != entry:
            known[relpath] = entry
            changed = True
    if changed:
        write_json_atomic(root / STATE_FILE, state, durable=False)


def recorded_base(root: Path, relpath: str) -> str | None:
    entry = (load_state(root).get("projections") or {}).get(relpath)
    if isinstance(entry, dict) and isinstance(entry.get("text"), str):
        text: str = entry["text"]
        if entry.get("sha256") == _digest(text):
            return text
    return None


# -- reading ----------------------------------------------------------------------------------
def read_records(store: Store, scope: str) -> RuntimeFile:
    """The scope's records (none when it has no memories.json yet)."""
    relpath = records_path(scope)
    try:  # a folder, link, FIFO or binary file in its place is a ParseError naming it
        text = read_memory_text(store.root, relpath)
    except FileNotFoundError:
        return RuntimeFile()
    return load_records(text, relpath)


@dataclass
class HandEdit:
    """Changes a person made to one projection, and the lines that break the rules."""

    path: str
    target: str
    changes: list[Change] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)
    when: str = ""


BaseAtHead = Callable[[str], str | None]


def hand_edits(store: Store, scope: str, records: RuntimeFile, limits: Limits,
               at_head: BaseAtHead | None = None) -> list[HandEdit]:
    """Hand edits of the scope's projections not yet in its records."""
    found = []
    for target in targets_of(scope):
        relpath = projection_path(scope, target)
        path = store.path(relpath)
        try:
            disk = read_memory_text(store.root, relpath)
        except FileNotFoundError:
            continue  # a missing projection is rendered again
        except ParseError as exc:  # reported like a line that breaks the rules: never imported
            found.append(HandEdit(relpath, target, problems=[(exc.line, exc.reason)]))
            continue
        rendered = render_projection([item.content for item in records.of(target)])
        base = recorded_base(store.root, relpath)
        if disk == rendered:
            if base != disk:  # rendered elsewhere (a merge, a pull): the base from now on
                remember_projections(store.root, {relpath: disk})
            continue
        if base is None:
            base = (at_head or _head_blob(store))(relpath)
        if base is None or base == disk:
            continue  # rendered from other records: stale, not edited
        old, _ = parse_projection(base, limits.item)
        new, problems = parse_projection(disk, limits.item)
        changes = diff_lines([line.content for line in old], [(p.line, p.content) for p in new])
        if changes or problems:
            when = timestamp(datetime.fromtimestamp(os.stat(path).st_mtime).astimezone())
            found.append(HandEdit(relpath, target, changes, problems, when))
    return found


def _head_blob(store: Store) -> BaseAtHead:
    def read(relpath: str) -> str | None:
        data = store.git.read_file_at("HEAD", relpath) if store.git.head_oid() else None
        return None if data is None else data.decode("utf-8", errors="replace")

    return read


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
    records = read_records(store, scope)
    edits = hand_edits(store, scope, records, limits)
    notes = [f"{edit.path}:{line}: {reason} (not imported)" for edit in edits
             for line, reason in edit.problems]
    if not edits:
        return records, notes
    before = {item.id: item.content for item in records.items}
    records, _ = with_hand_edits(records, edits)
    for item in records.items:
        if before.get(item.id) != item.content:
            item.extra = {**item.extra, "pending": "hand edit, imported by the next runtime write"}
            if item.id not in before:
                item.id = "(new)"  # its id is given when the edit is imported
    return records, notes


# -- writing ----------------------------------------------------------------------------------
def write_scope(store: Store, txn: WriteTxn, scope: str, records: RuntimeFile) -> list[str]:
    """Write memories.json and the projections of a scope; returns the paths that changed."""
    changed = []
    texts: dict[str, str] = {}
    if store.write_file(txn, records_path(scope), dump_records(records)):
        changed.append(records_path(scope))
    for target in targets_of(scope):
        relpath = projection_path(scope, target)
        items = records.of(target)
        if not items and not store.path(relpath).exists():
            continue
        texts[relpath] = render_projection([item.content for item in items])
        if store.write_file(txn, relpath, texts[relpath]):
            changed.append(relpath)
    remember_projections(store.root, texts)
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
