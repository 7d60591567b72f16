"""Keeping a scope's shelf whole when its files were changed by hand (an editor, plain git).

- `documents/index.json` that does not parse: every document write is refused before anything
  is written or committed (`path:line: reason`); reads (`doc list`, `doc show`, the card) use
  the newest version committed in git that parses, and say so with a note.
- A managed copy deleted by hand while index.json still lists it is put back from git before
  the next document write (so the deletion is never committed as a loss); a copy renamed or
  moved by hand inside `active/` or `archived/` (its front matter still names its id) is moved
  back, text and all. Retiring a document is `gitmem doc archive`, not deleting its copy.
- `load_index_problems(root)`: what is wrong with each scope's index.json, for store-wide
  checks (`gitmem check`, the commit gate).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from gitmem.documents.model import STATUSES, DocIndex, DocRecord, index_problem, load_index
from gitmem.documents.shelf import copy_path, documents_dir, index_path, read_index
from gitmem.errors import InvalidInputError, ParseError
from gitmem.format import layers as L
from gitmem.format.document import split_copy
from gitmem.format.normalize import Problem
from gitmem.fsio import write_bytes_atomic
from gitmem.store.lastgood import revisions
from gitmem.store.tree import read_memory_text

if TYPE_CHECKING:
    from gitmem.store.store import Store



# -- index.json ---------------------------------------------------------------------------------
def load_index_problems(root: Path) -> list[Problem]:
    """One Problem per documents/index.json of the store that gitmem cannot read (none when
    every index parses; a missing index is no problem)."""
    found: list[Problem] = []
    for relpath in _index_paths(root):
        try:
            text = read_memory_text(root, relpath)
        except FileNotFoundError:
            continue
        except ParseError as exc:
            found.append(Problem(exc.path, exc.line, exc.reason))
            continue
        problem = index_problem(text, relpath)
        if problem is not None:
            found.append(Problem(problem.path, problem.line, problem.reason))
    return found


def _index_paths(root: Path) -> list[str]:
    paths = [index_path(L.GLOBAL)]
    try:
        keys = sorted(item.name for item in os.scandir(root / "workspaces")
                      if item.is_dir(follow_symlinks=False) and L.is_workspace_key(item.name))
    except OSError:
        keys = []
    return paths + [index_path(key) for key in keys]


def writable_index(store: Store, scope: str) -> DocIndex:
    """The scope's index for a write; refused (one line, nothing changed) when it does not parse."""
    try:
        return read_index(store, scope)
    except ParseError as exc:
        raise InvalidInputError(f"{exc}; no document was changed") from None


def readable_index(store: Store, scope: str) -> DocIndex:
    """The scope's index for a read: the file, or (when it does not parse) the newest version
    committed in git that does, with a note (store/lastgood.py)."""
    relpath = index_path(scope)
    return store.read_json(relpath, lambda text: load_index(text, relpath), DocIndex)


# -- managed copies -----------------------------------------------------------------------------
def last_committed_copy(store: Store, relpath: str) -> bytes | None:
    """The newest bytes git holds for `relpath` (HEAD's, else from before it was deleted)."""
    for rev in revisions(store.git, relpath):
        data = store.git.read_file_at(rev, relpath)
        if data is not None:
            return data
    return None


def restore_copies(store: Store, scope: str, index: DocIndex) -> list[str]:
    """Put back every copy the index lists that is missing from disk: a copy moved by hand
    within the shelf goes back to its place (its text kept); a deleted one comes back from git.
    Returns notes saying what was put back."""
    missing = [r for r in index.documents if not os.path.lexists(store.path(copy_path(scope, r)))]
    if not missing:
        return []
    moved = _moved_copies(store, scope, index)
    notes: list[str] = []
    for record in missing:
        target = copy_path(scope, record)
        source = moved.get(record.id)
        if source is not None:
            os.replace(store.path(source), store.path(target))
            notes.append(f"{record.id}: its copy was moved by hand to {source}; put back at {target}"
                         " (its text is kept)")
            continue
        data = last_committed_copy(store, target)
        if data is None:
            notes.append(f"{target} is missing and git holds no copy of it: {record.id} has no text")
            continue
        write_bytes_atomic(store.path(target), data)
        notes.append(f"{target} was deleted by hand; restored it from git (to retire "
                     f"{record.id}, use `gitmem doc archive {record.id}`)")
    return notes


def _moved_copies(store: Store, scope: str, index: DocIndex) -> dict[str, str]:
    """{document id: path} of Markdown files in the shelf's status folders that no record names
    but whose generated front matter names a document of this index."""
    named = {copy_path(scope, r) for r in index.documents}
    ids = {r.id for r in index.documents}
    found: dict[str, str] = {}
    for status in STATUSES:
        folder = f"{documents_dir(scope)}/{status}"
        try:
            names = sorted(os.listdir(store.path(folder)))
        except OSError:
            continue
        for name in names:
            relpath = f"{folder}/{name}"
            if not name.endswith(".md") or relpath in named:
                continue
            doc_id = _front_matter_id(store, relpath)
            if doc_id in ids and doc_id not in found:
                found[doc_id] = relpath
    return found


def _front_matter_id(store: Store, relpath: str) -> str | None:
    try:
        values = split_copy(read_memory_text(store.root, relpath))[0]
    except (OSError, ParseError):
        return None
    value = values.get("id")
    return value if isinstance(value, str) else None


def committed_body(store: Store, scope: str, record: DocRecord) -> tuple[str, int] | None:
    """(body, first line) of the copy as git last held it, for reading a copy missing on disk."""
    data = last_committed_copy(store, copy_path(scope, record))
    if data is None:
        return None
    _values, body, line = split_copy(data.decode("utf-8", errors="replace"))
    return body, line
