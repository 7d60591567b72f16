"""The store's files on disk: scopes, topic files, memory files, and reading them one by one.

Every memory file is read on its own: a file that cannot be read (not a regular file, binary,
not UTF-8, unreadable frontmatter) is reported with `path:line` and never stops another file
from being read. Only regular files are opened, without following links and without blocking
(a FIFO named `x.md` is refused, not waited on).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from gitmem.errors import ParseError
from gitmem.format import layers as L
from gitmem.format.document import split_copy
from gitmem.format.entry import TopicFile
from gitmem.format.markdown import conflict_marker_lines, decode_memory_bytes, parse_topic_file
from gitmem.format.normalize import Outcome, Problem
from gitmem.fsio import NotRegularFileError, read_regular_file
from gitmem.store import parsecache


def _workspace_folders(root: Path) -> tuple[str, ...]:
    """The folders under workspaces/ (a warm server lists it again only when it changed)."""
    return parsecache.by_stat(str(root), "workspaces", partial(_list_folders, root))


def _list_folders(root: Path) -> tuple[str, ...]:
    try:
        with os.scandir(root / "workspaces") as listing:
            return tuple(sorted(item.name for item in listing if item.is_dir(follow_symlinks=False)))
    except OSError:
        return ()


def scope_keys(root: Path) -> list[str]:
    """`global`, then every workspace folder whose name is a valid key (sorted)."""
    return [L.GLOBAL, *(key for key in _workspace_folders(root) if L.is_workspace_key(key))]


def invalid_scope_folders(root: Path) -> list[Problem]:
    """Folders under workspaces/ whose name cannot be a workspace key: their files are not read."""
    problems = []
    for name in _workspace_folders(root):
        reason = L.workspace_key_problem(name)
        if reason is not None:
            wanted = L.canonical_slug(name).replace("_", "-")
            suggestion = f" (e.g. workspaces/{wanted})" if L.is_workspace_key(wanted) else ""
            problems.append(Problem(f"workspaces/{name}", 1, f"not a valid workspace key: {reason}; "
                                    f"its files are not read: rename the folder{suggestion}"))
    return problems


def _md_files(root: Path, folder: str) -> tuple[str, ...]:
    """The `*.md` entries of a folder as store paths (any kind of entry: reading decides),
    hidden ones out.

    A warm server lists a folder again only when lstat shows it changed (parsecache.by_stat):
    adding, removing or renaming an entry changes a folder's modification time, and a folder
    changed within the last 2 s is always listed again. (Only the names are kept: an edit of a
    file's content does not touch its folder, and nothing here depends on content.)"""
    return parsecache.by_stat(str(root), folder, partial(_list_md, root, folder))


def _list_md(root: Path, folder: str) -> tuple[str, ...]:
    try:
        with os.scandir(root / folder) as listing:
            return tuple(f"{folder}/{item.name}" for item in listing
                         if item.name.endswith(".md") and not item.name.startswith("."))
    except OSError:
        return ()


def all_topic_files(root: Path) -> list[str]:
    """Every topic file on disk (whatever kind of file it is)."""
    found: list[str] = []
    for scope in scope_keys(root):
        for layer in L.TOPIC_LAYERS:
            if not L.LAYERS[layer].global_ok and scope == L.GLOBAL:
                continue
            found.extend(_md_files(root, L.topic_dir(scope, layer)))
    return sorted(found)


def all_memory_files(root: Path) -> list[str]:
    """Every topic file and single-file layer (state, working, junk) on disk."""
    return sorted(all_topic_files(root) + single_layer_files(root))


def single_layer_files(root: Path) -> list[str]:
    """The single-file layers (state, working, junk) on disk."""
    files = []
    for scope in scope_keys(root):
        for layer, spec in L.LAYERS.items():
            relpath = L.single_file_path(scope, layer)
            if spec.shape == "single" and os.path.lexists(root / relpath):
                files.append(relpath)
    return files


def read_memory_text(root: Path, relpath: str) -> str:
    """The text of a memory file; ParseError (`path:line: reason`) when it cannot be read.

    FileNotFoundError when it does not exist."""
    return read_memory_bytes(root, relpath)[1]


def read_memory_bytes(root: Path, relpath: str) -> tuple[bytes, str]:
    """The bytes of a memory file and its text, as read_memory_text reads it."""
    try:
        data = read_regular_file(root / relpath)
    except NotRegularFileError as exc:
        raise ParseError(relpath, 1, f"not a regular file ({exc.kind}): gitmem reads only "
                                     "regular files") from None
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ParseError(relpath, 1, f"cannot be read: {exc.strerror or exc}") from None
    return data, decode_memory_bytes(data, relpath)


def read_topic(root: Path, relpath: str) -> TopicFile | None:
    """Parse a memory file; None when it does not exist, ParseError when it cannot be read."""
    try:
        text = read_memory_text(root, relpath)
    except FileNotFoundError:
        return None
    return parsecache.parse(str(root), relpath, text, parse_topic_file)


def read_lenient(root: Path, relpath: str) -> TopicFile | None:
    """What can be read of a memory file, for the catalog; never raises (None: no such file).

    An unreadable file comes back with `problem` set and whatever entries could still be read
    (bad bytes replaced, broken frontmatter skipped), so that their Id numbers stay taken."""
    try:
        return read_topic(root, relpath)
    except FileNotFoundError:
        return None
    except ParseError as exc:
        problem = (exc.line, exc.reason)
    try:
        data = read_regular_file(root / relpath)
    except OSError:
        return TopicFile(problem=problem)
    if b"\x00" in data:
        return TopicFile(problem=problem)
    topic = parse_topic_file(data.decode("utf-8", errors="replace"), relpath, lenient=True)
    topic.problem = problem
    return topic


RUNTIME_RECORDS = "runtime/memories.json"  # in each scope's folder
DOCUMENT_INDEX = "documents/index.json"


def record_files(root: Path) -> list[str]:
    """The runtime records and document indexes on disk (JSON files merged record by record)."""
    found = []
    for scope in scope_keys(root):
        for name in (RUNTIME_RECORDS, DOCUMENT_INDEX):
            relpath = f"{L.scope_dir(scope)}/{name}"
            if (root / relpath).is_file():
                found.append(relpath)
    return found


def document_copies(root: Path) -> list[str]:
    """The managed Markdown copies of project documents (active and archived)."""
    found = []
    for scope in scope_keys(root):
        for status in ("active", "archived"):
            folder = f"{L.scope_dir(scope)}/documents/{status}"
            if (root / folder).is_dir():
                found += [f"{folder}/{item.name}" for item in os.scandir(root / folder)
                          if item.name.endswith(".md") and item.is_file(follow_symlinks=False)]
    return sorted(found)


def document_conflicted(root: Path, relpath: str, text: str) -> bool:
    """A document copy holding conflict markers that are not part of its recorded text (a
    runbook about git may quote markers; a merge that collided changes the text's sha256)."""
    if not conflict_marker_lines(text):
        return False
    folder, _, name = relpath.rpartition("/")
    index = root / folder.rpartition("/")[0] / "index.json"
    try:
        documents = json.loads(read_regular_file(index)).get("documents", [])
    except (OSError, ValueError, AttributeError):
        return True
    recorded = {d.get("filename"): d.get("sha256") for d in documents if isinstance(d, dict)}
    _values, body, _line = split_copy(text)
    return hashlib.sha256(body.encode("utf-8")).hexdigest() != recorded.get(name)


def has_record_conflict(text: str) -> bool:
    """A record file in which a merge left a record in conflict (see merge/records.py)."""
    if '"conflict"' not in text:
        return False
    try:
        data = json.loads(text)
    except ValueError:
        return False
    lists = [v for v in data.values() if isinstance(v, list)] if isinstance(data, dict) else []
    return any(isinstance(item, dict) and isinstance(item.get("conflict"), dict)
               for items in lists for item in items)


@dataclass
class TreeScan:
    """What reading every memory file found: files left with conflict markers (document copies
    and record files in conflict included), and memory files that cannot be read."""

    conflicted: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def scan_tree(root: Path) -> TreeScan:
    """Read every memory file once (bytes only, no parsing): conflicts and unreadable files."""
    found = TreeScan(problems=invalid_scope_folders(root))
    _scan_memory_files(root, all_memory_files(root), found)
    _scan_copies_and_records(root, found)
    found.problems += layer_index_folders(root)
    found.conflicted.sort()
    return found


def _scan_memory_files(root: Path, relpaths: list[str], found: TreeScan) -> None:
    for relpath in relpaths:
        outcome = parsecache.by_stat(str(root), relpath, partial(_scan_file, root, relpath))
        if isinstance(outcome, Problem):
            found.problems.append(outcome)
        elif outcome:
            found.conflicted.append(relpath)


def _scan_copies_and_records(root: Path, found: TreeScan) -> None:
    for relpath in document_copies(root):
        try:
            data = read_regular_file(root / relpath)  # documents are long: a whole block first
        except OSError:
            continue
        if b"<<<<<<<" in data and b">>>>>>>" in data and \
                document_conflicted(root, relpath, data.decode("utf-8", errors="replace")):
            found.conflicted.append(relpath)
    for relpath in record_files(root):
        try:  # a FIFO in a record's place is never opened (the read would wait forever)
            data = read_regular_file(root / relpath)
        except OSError as exc:
            if not isinstance(exc, FileNotFoundError):
                found.problems.append(Problem(relpath, 1, f"cannot be read: {exc}"))
            continue
        if has_record_conflict(data.decode("utf-8", errors="replace")):
            found.conflicted.append(relpath)


def _scan_file(root: Path, relpath: str) -> Problem | bool:
    """Whether a memory file holds conflict markers, or why it cannot be read (gone: False)."""
    try:
        text = read_memory_text(root, relpath)
    except FileNotFoundError:
        return False
    except ParseError as exc:
        return Problem(relpath, exc.line, exc.reason)
    return bool(conflict_marker_lines(text))


def layer_index_folders(root: Path) -> list[Problem]:
    """Folders named like a layer's generated index: the index cannot be written there."""
    return [Problem(relpath, 1, "a folder where the layer index belongs: move it away")
            for scope in scope_keys(root) for layer in L.TOPIC_LAYERS
            if (root / (relpath := L.layer_index_path(scope, layer))).is_dir()
            and not (root / relpath).is_symlink()]


# Answers, for topic files, which of them hold conflict markers (a stat-checked cache).
TopicConflicts = Callable[[list[str]], list[str]]


def conflicted_files(root: Path, topic_conflicts: TopicConflicts | None = None) -> list[str]:
    """Memory files and document copies that still hold conflict markers, and record files
    holding a record in conflict. `topic_conflicts`, when given, answers for the topic files."""
    if topic_conflicts is None:
        return scan_tree(root).conflicted
    found = TreeScan(conflicted=list(topic_conflicts(all_topic_files(root))))
    _scan_memory_files(root, single_layer_files(root), found)
    _scan_copies_and_records(root, found)
    return sorted(found.conflicted)


def read_texts(root: Path, relpaths: list[str]) -> tuple[dict[str, str], list[Outcome]]:
    """The texts of these memory files, and an outcome holding the error of each one that cannot
    be read (files that do not exist are left out)."""
    texts: dict[str, str] = {}
    unreadable: list[Outcome] = []
    for relpath in relpaths:
        try:
            texts[relpath] = read_memory_text(root, relpath)
        except FileNotFoundError:
            continue
        except ParseError as exc:
            unreadable.append(Outcome(relpath, "", problems=[Problem(relpath, exc.line, exc.reason)]))
    return texts, unreadable
