"""Kernel change notifications for the memory folders of a store (Linux inotify, via ctypes).

A long-lived SearchIndex asks the watcher which memory files may have changed since the last
check instead of stat-ing every file before each search. The watcher only ever narrows the
check: whenever it cannot vouch for what happened (queue overflow, a folder created, moved or
removed, a watch it could not add, a fork) it answers None and the caller scans everything.
On other systems `ChangeWatcher.create` returns None and every refresh is a full stat scan.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys
import weakref
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from gitmem.format.layers import LAYERS

Folders = Callable[[Path], list[str]]  # the repo-relative folders to watch ('' = root)
Structural = Callable[[str, str], bool]  # (parent, name) of a folder made or removed: rescan?

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC

WATCH_MASK = (
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE
    | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
)
# Any of these means the folder layout itself changed: the caller must rescan and re-arm.
STRUCTURAL = IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF
_EVENT = struct.Struct("iIII")
_LAYER_DIRS = frozenset(name for name, spec in LAYERS.items() if spec.shape == "topics")
_DOCUMENT_DIRS = ("active", "archived")


@lru_cache(maxsize=1)
def _libc() -> Any:
    """The C library with the inotify calls, or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    except (OSError, AttributeError):
        return None
    return libc


def _watched_folders(root: Path) -> list[str]:
    """Repo-relative folders whose entries can be memory files, plus their parents ('' = root)."""
    folders = ["", "global", "workspaces"]
    scopes = ["global"]
    try:
        with os.scandir(root / "workspaces") as listing:
            scopes += [f"workspaces/{item.name}" for item in listing if item.is_dir()]
    except OSError:
        pass
    for scope in scopes:
        if scope != "global":
            folders.append(scope)
        try:
            with os.scandir(root / scope) as listing:
                folders += [f"{scope}/{item.name}" for item in listing
                            if item.name in _LAYER_DIRS and item.is_dir()]
        except OSError:
            continue
        documents = f"{scope}/documents"
        if (root / documents).is_dir():  # project documents: documents/active|archived/*.md
            folders.append(documents)
            folders += [f"{documents}/{status}" for status in _DOCUMENT_DIRS
                        if (root / documents / status).is_dir()]
    return folders


class ChangeWatcher:
    """Which memory files may have changed since the last poll, from inotify events."""

    def __init__(self, root: Path, libc: Any, fd: int, folders: Folders | None = None,
                 structural: Structural | None = None) -> None:
        self.root = root
        self._libc = libc
        self._fd = fd
        self._list_folders = folders or _watched_folders
        self._structural = structural or _is_memory_folder
        self._pid = os.getpid()
        self._folders: dict[int, str] = {}
        self._armed = False
        self._finalizer = weakref.finalize(self, os.close, fd)

    @classmethod
    def create(cls, root: Path, folders: Folders | None = None,
               structural: Structural | None = None) -> ChangeWatcher | None:
        """A watcher for root, or None when the system offers no inotify. By default it watches
        the memory folders; `folders` lists others, and `structural` says which folder made or
        removed in one of them calls for a full scan (and arm() again)."""
        libc = _libc()
        if libc is None:
            return None
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            return None
        return cls(root, libc, fd, folders, structural)

    def close(self) -> None:
        """Release the inotify descriptor."""
        self._armed = False
        self._finalizer()

    def arm(self) -> bool:
        """(Re)watch every memory folder; call before a full scan. False when it cannot."""
        if not self._finalizer.alive or os.getpid() != self._pid:
            return False
        self._drain()
        self._folders = {}
        for folder in self._list_folders(self.root):
            path = os.fsencode(self.root / folder) if folder else os.fsencode(self.root)
            wd = self._libc.inotify_add_watch(self._fd, path, WATCH_MASK)
            if wd < 0:
                if ctypes.get_errno() == errno.ENOENT:
                    continue  # gone meanwhile: the scan that follows sees that too
                self._armed = False
                return False
            self._folders[wd] = folder
        self._armed = True
        return True

    def _drain(self) -> bytes:
        chunks = []
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        return b"".join(chunks)

    def poll(self) -> set[str] | None:
        """Repo-relative paths touched since the last poll; None when a full scan is needed."""
        if not self._armed or not self._finalizer.alive or os.getpid() != self._pid:
            return None
        data = self._drain()
        touched: set[str] = set()
        offset = 0
        while offset + _EVENT.size <= len(data):
            wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
            name = os.fsdecode(data[offset + _EVENT.size : offset + _EVENT.size + length].rstrip(b"\0"))
            offset += _EVENT.size + length
            folder = self._folders.get(wd)
            if mask & STRUCTURAL or folder is None:
                self._armed = False  # events were lost or a watched folder went away
                return None
            if mask & IN_ISDIR:
                if self._structural(folder, name):
                    self._armed = False  # a scope or layer folder appeared or vanished
                    return None
                continue
            touched.add(f"{folder}/{name}" if folder else name)
        return touched


def _is_memory_folder(parent: str, name: str) -> bool:
    """True when `parent/name` is (or would be) one of the watched folders."""
    if parent == "":
        return name in ("global", "workspaces")
    if parent == "workspaces":
        return True
    is_scope = parent == "global" or parent.count("/") == 1
    if parent.endswith("/documents"):
        return name in _DOCUMENT_DIRS
    return is_scope and (name in _LAYER_DIRS or name == "documents")
