"""The store's files on disk: scopes, topic files, memory files (walks the scope folders)."""

from __future__ import annotations

import os
from pathlib import Path

from gitmem.format import layers as L
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


def conflicted_files(root: Path) -> list[str]:
    """Memory files that still hold conflict markers."""
    found = []
    for relpath in all_memory_files(root):
        path = root / relpath
        if path.is_file() and conflict_marker_lines(path.read_text(encoding="utf-8", errors="replace")):
            found.append(relpath)
    return found

