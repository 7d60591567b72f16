"""The files gitmem reads besides the topic files (its JSON files, the front matter of document
copies), and whether each one can be parsed.

One rule for the whole store: gitmem never commits a file it reads and cannot parse. A hand
edit that leaves such a file (or a memory file with an error) is held back: it stays in the
working tree, uncommitted and unstaged, while everything else is committed; `status` and
`check` name it, and a write into that very file is refused until it is fixed.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from gitmem.errors import InvalidInputError, ParseError, StoreStateError
from gitmem.format import layers as L
from gitmem.format.document import FRONT_MATTER_SCAN_LINES, split_copy
from gitmem.format.idmarks import MARKS_PATH
from gitmem.format.normalize import Outcome, Problem
from gitmem.format.records import invalid_record, load_record_list, record_line
from gitmem.format.reviewqueue import REVIEW_PATH, parse_queue
from gitmem.fsio import read_regular_file, read_text
from gitmem.store import tree

if TYPE_CHECKING:
    from gitmem.git.repo import GitRepo

REGISTRY_PATH = "memory.json"
# The record files and the key of the list each one holds (format/records.py).
_RECORD_KEYS = {"runtime/memories.json": "items", "documents/index.json": "documents"}


def json_kind(relpath: str) -> str | None:
    """What a JSON file gitmem reads is ('registry', 'marks', 'review', 'records', 'meta'), else None."""
    if relpath == REGISTRY_PATH:
        return "registry"
    if relpath == REVIEW_PATH:
        return "review"
    if relpath == MARKS_PATH:
        return "marks"
    scope_dir, _, rest = _split_scope(relpath)
    if scope_dir is None:
        return None
    if rest in _RECORD_KEYS:
        return "records"
    if rest == "meta.json" and scope_dir != L.GLOBAL:
        return "meta"
    return None


def is_document_copy(relpath: str) -> bool:
    """A managed copy of a project document: `<scope>/documents/{active,archived}/<name>.md`."""
    scope_dir, _, rest = _split_scope(relpath)
    parts = rest.split("/")
    return (scope_dir is not None and len(parts) == 3 and parts[0] == "documents"
            and parts[1] in ("active", "archived") and parts[2].endswith(".md"))


def _split_scope(relpath: str) -> tuple[str | None, str, str]:
    """(the scope folder, '/', the rest) of a path inside a scope; (None, '', '') elsewhere."""
    if relpath.startswith(L.GLOBAL + "/"):
        return L.GLOBAL, "/", relpath[len(L.GLOBAL) + 1:]
    parts = relpath.split("/", 2)
    if len(parts) == 3 and parts[0] == "workspaces" and L.is_workspace_key(parts[1]):
        return f"workspaces/{parts[1]}", "/", parts[2]
    return None, "", ""


def parse_problem(root: Path, relpath: str) -> Problem | None:
    """Why gitmem cannot parse this file it reads (None: it can, it is absent, or gitmem does
    not read it). Memory files are judged by the normalization rules, not here."""
    kind = json_kind(relpath)
    if kind is None and not is_document_copy(relpath):
        return None
    try:
        data = read_regular_file(root / relpath)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return Problem(relpath, 1, f"cannot be read: {exc.strerror or exc}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        return Problem(relpath, line, f"not UTF-8 text (byte 0x{data[exc.start]:02x})")
    if kind is None:
        return _copy_problem(root, relpath, text)
    return _json_problem(relpath, kind, text)


def check_text(relpath: str, text: str) -> None:
    """ParseError (`path:line: reason`) when this text of a JSON file gitmem reads does not
    parse as that file; the parse the last good version (lastgood.py) is judged by too."""
    kind = json_kind(relpath)
    problem = _json_problem(relpath, kind, text) if kind is not None else None
    if problem is not None:
        raise ParseError(problem.path, problem.line, problem.reason)


def _json_problem(relpath: str, kind: str, text: str) -> Problem | None:
    if kind == "review":
        try:
            parse_queue(text)
        except InvalidInputError as exc:
            return _problem_from_message(relpath, str(exc))
        return None
    if kind == "records":
        key = _RECORD_KEYS[_split_scope(relpath)[2]]
        try:
            records, _extra = load_record_list(text, relpath, key)
        except InvalidInputError as exc:
            return _problem_from_message(relpath, str(exc))
        for number, raw in enumerate(records, 1):  # each record as its reader reads it
            if (problem := invalid_record(key, number, raw)) is not None:
                return Problem(relpath, record_line(text, number), problem)
        return None
    if kind == "marks" and not text.strip():
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return Problem(relpath, exc.lineno, f"not valid JSON ({exc.msg}, column {exc.colno}); "
                       "fix it by hand or restore it with git")
    if not isinstance(value, dict):
        return Problem(relpath, 1, "must hold a JSON object; fix it by hand or restore it with git")
    if kind == "registry":  # its settings too: what the registry refuses is never committed
        from gitmem.store.registry import parse_registry

        try:
            parse_registry(text)
        except StoreStateError as exc:
            return Problem(relpath, 1, str(exc).removeprefix(f"{relpath}: "))
    return None


def _problem_from_message(relpath: str, message: str) -> Problem:
    """A Problem from a `path:line: reason` (or `path: reason`) error message."""
    rest = message.removeprefix(relpath).removeprefix(":")
    line, sep, reason = rest.partition(":")
    if sep and line.strip().isdigit():
        return Problem(relpath, int(line), reason.strip())
    return Problem(relpath, 1, rest.strip())


def _copy_problem(root: Path, relpath: str, text: str) -> Problem | None:
    """A document copy's front matter opened and never closed, or conflict markers in it."""
    if text.startswith("---"):
        lines = text.split("\n")
        if not any(line.rstrip("\r") == "---" for line in lines[1:FRONT_MATTER_SCAN_LINES]):
            return Problem(relpath, 1, "front matter opened by `---` is never closed")
    if tree.document_conflicted(root, relpath, text):
        return Problem(relpath, 1, CONFLICTED_COPY)
    return None


def _moved_within_shelf(root: Path, scope_dir: str, doc_id: str) -> bool:
    """Whether another copy on the scope's shelf names document `doc_id` in its front matter."""
    for path in sorted((root / scope_dir / "documents").glob("*/*.md")):
        try:
            values, _body, _start = split_copy(read_regular_file(path).decode("utf-8", "replace"))
        except OSError:
            continue
        if doc_id and str(values.get("id", "")) == doc_id:
            return True
    return False


def read_files(root: Path) -> list[str]:
    """Every file on disk that parse_problem judges: the JSON files and the document copies."""
    found = [p for p in (REGISTRY_PATH, MARKS_PATH, REVIEW_PATH) if (root / p).exists()]
    for scope in tree.scope_keys(root):
        base = L.scope_dir(scope)
        names = [*_RECORD_KEYS, *(["meta.json"] if scope != L.GLOBAL else [])]
        found += [f"{base}/{name}" for name in names if (root / base / name).exists()]
    return found + tree.document_copies(root)


def problems(root: Path) -> list[Problem]:
    """What parse_problem finds in every file it judges (memory.json is reported by
    recovery.leftovers, with the registry's own checks)."""
    return [problem for relpath in read_files(root) if relpath != REGISTRY_PATH
            and (problem := parse_problem(root, relpath)) is not None]


CONFLICTED_COPY = "conflict markers left in a document copy"


def refuse_unparseable(root: Path, relpaths: list[str],
                       committed: Callable[[str], str | None] = lambda _path: None) -> None:
    """The last look before a write commits: a file gitmem reads and cannot parse is never
    committed (InvalidInputError: the write is refused and undone). A document copy whose
    committed version (`committed`) already holds markers may keep the rest of them: settling
    one of its conflicts leaves the others to settle."""
    for relpath in relpaths:
        problem = parse_problem(root, relpath)
        if problem is not None and problem.reason == CONFLICTED_COPY:
            before = committed(relpath)
            if before is not None and tree.document_conflicted(root, relpath, before):
                continue
        if problem is not None:
            raise InvalidInputError(f"{problem} — gitmem commits no file it cannot parse, so "
                                    "nothing was written")


def with_stand_ins(git: GitRepo | None, found: list[Problem]) -> list[Problem]:
    """The problems, each JSON file that does not parse saying which committed version gitmem
    reads instead until it is fixed (store/lastgood.py)."""
    from gitmem.store.lastgood import last_good
    from gitmem.store.registry import parse_registry

    out = []
    for problem in found:
        kind = json_kind(problem.path)
        if kind is not None and git is not None and problem.is_error:
            parse: Callable[[str], object] = parse_registry if kind == "registry" else \
                functools.partial(check_text, problem.path)
            good = last_good(git, problem.path, parse)
            tail = (f"gitmem reads the version committed in {good[1]} until it is fixed" if good
                    else "git holds no readable version: it is read as empty until it is fixed")
            problem = dataclasses.replace(problem, reason=f"{problem.reason}; {tail}")
        out.append(problem)
    return out


def held_back(root: Path, relpaths: list[str], outcomes: list[Outcome]) -> dict[str, Problem]:
    """Of these uncommitted files, those a write must leave out of its commit: memory files
    with an error (their normalization outcome says which), and the files gitmem reads and
    cannot parse. Each comes with its first problem."""
    held = {o.path: o.blocking[0] for o in outcomes if o.blocking}
    for relpath in relpaths:
        if relpath in held:
            continue
        problem = parse_problem(root, relpath) or listed_copy_deleted(root, relpath)
        if problem is not None:
            held[relpath] = problem
    return held


def listed_copy_deleted(root: Path, relpath: str) -> Problem | None:
    """A document copy deleted by hand while its scope's index.json still lists it: the deletion
    is never committed (it would lose the text on every machine); the next write puts the copy
    back from git (absorb.restore_deleted_copies; a document write, documents/repair.py)."""
    if not is_document_copy(relpath) or os.path.lexists(root / relpath):
        return None
    scope_dir, _, rest = _split_scope(relpath)
    _, status, filename = rest.split("/")
    try:
        records, _extra = load_record_list(read_text(root / f"{scope_dir}/documents/index.json"),
                                           relpath, "documents")
    except (OSError, UnicodeDecodeError, InvalidInputError):
        return None
    listed = [r for r in records if isinstance(r, dict) and r.get("filename") == filename
              and r.get("status") == status]
    if not listed or _moved_within_shelf(root, str(scope_dir), str(listed[0].get("id", ""))):
        return None  # not gitmem's, or renamed by hand: the next document write moves it back
    return Problem(relpath, 1, "deleted by hand while documents/index.json lists it; the next "
                   "write puts it back from git (`gitmem doc archive ID` retires a document)")


def held_note(held: dict[str, Problem]) -> str:
    """The one line a write prints about the hand edits it left uncommitted."""
    listed = ", ".join(f"{p.path}:{p.line} ({p.reason.split('; ')[0]})"
                       for p in sorted(held.values(), key=lambda p: (p.path, p.line)))
    return (f"left uncommitted, as gitmem commits no file it cannot parse and no loss: {listed}; "
            "everything else was committed (`gitmem check` lists every problem)")
