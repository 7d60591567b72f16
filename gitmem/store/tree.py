"""The store's files on disk: scopes, topic files, memory files (walks the scope folders)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from gitmem.format import layers as L
from gitmem.format.document import split_copy
from gitmem.format.markdown import conflict_marker_lines


def scope_keys(root: Path) -> list[str]:
    """`global`, then every folder under workspaces/ (sorted)."""
    keys = [L.GLOBAL]
    folder = root / "workspaces"
    if folder.is_dir():
        keys.extend(sorted(item.name for item in os.scandir(folder) if item.is_dir()))
    return keys


def all_topic_files(root: Path) -> list[str]:
    """Every topic file on disk."""
    found: list[str] = []
    for scope in scope_keys(root):
        for layer in L.TOPIC_LAYERS:
            folder = root / L.topic_dir(scope, layer)
            if folder.is_dir():
                found.extend(
                    f"{L.topic_dir(scope, layer)}/{item.name}"
                    for item in os.scandir(folder)
                    if item.name.endswith(".md") and item.is_file()
                )
    return sorted(found)


def all_memory_files(root: Path) -> list[str]:
    """Every topic file and single-file layer (state, working, junk) on disk."""
    files = all_topic_files(root)
    for scope in scope_keys(root):
        for layer, spec in L.LAYERS.items():
            relpath = L.single_file_path(scope, layer)
            if spec.shape == "single" and (root / relpath).is_file():
                files.append(relpath)
    return sorted(files)


def record_files(root: Path) -> list[str]:
    """The runtime records and document indexes on disk (JSON files merged record by record)."""
    found = []
    for scope in scope_keys(root):
        for name in ("runtime/memories.json", "documents/index.json"):
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
                          if item.name.endswith(".md") and item.is_file()]
    return sorted(found)


def document_conflicted(root: Path, relpath: str, text: str) -> bool:
    """A document copy holding conflict markers that are not part of its recorded text (a
    runbook about git may quote markers; a merge that collided changes the text's sha256)."""
    if not conflict_marker_lines(text):
        return False
    folder, _, name = relpath.rpartition("/")
    index = root / folder.rpartition("/")[0] / "index.json"
    try:
        documents = json.loads(index.read_text(encoding="utf-8")).get("documents", [])
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


def conflicted_files(root: Path) -> list[str]:
    """Memory files and document copies that still hold conflict markers, and record files
    holding a record in conflict."""
    found = []
    for relpath in all_memory_files(root):
        path = root / relpath
        if path.is_file() and conflict_marker_lines(path.read_text(encoding="utf-8", errors="replace")):
            found.append(relpath)
    for relpath in document_copies(root):
        data = (root / relpath).read_bytes()  # documents are long: look for a whole block first
        if b"<<<<<<<" in data and b">>>>>>>" in data and \
                document_conflicted(root, relpath, data.decode("utf-8", errors="replace")):
            found.append(relpath)
    for relpath in record_files(root):
        if has_record_conflict((root / relpath).read_text(encoding="utf-8", errors="replace")):
            found.append(relpath)
    return sorted(found)
