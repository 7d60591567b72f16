"""git status of the work tree, mixed into GitRepo: once per read (one_status), and in a
long-lived process kept between calls by a StatusKeeper (gitmem/store/statuswatch.py) while
nothing it depends on changed."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pygit2
from pygit2.enums import FileStatus

from gitmem.git import indexlater
from gitmem.git.credentials import map_local_error
from gitmem.stamps import Stamp, file_stamp

_GIT_ERRORS = (pygit2.GitError, KeyError, ValueError, OSError)

StatusKey = tuple[str | None, Stamp | None, Stamp | None]  # HEAD, the index's and info/exclude's stamps


class StatusKeeper(Protocol):
    """git status kept between calls (gitmem/store/statuswatch.py): given back while the key
    is the same and nothing changed in the work tree since it was taken."""

    def known(self, key: StatusKey) -> dict[str, int] | None: ...
    def arm(self, ignored: Callable[[str], bool]) -> bool: ...
    def took(self, key: StatusKey, status: dict[str, int]) -> None: ...
    def committed(self, before: StatusKey, after: StatusKey, paths: list[str],
                  status_of: Callable[[str], int | None]) -> None: ...


def _is_under(path: str, prefixes: list[str] | None) -> bool:
    """True when `path` is one of the prefixes or lies inside one (component-wise)."""
    if prefixes is None:
        return True
    return any(not p or path == p or path.startswith(p + "/") for p in prefixes)



class StatusOps:
    """git status, mixed into GitRepo (which provides `_repo`, `git_dir` and `head_oid`)."""

    _repo: pygit2.Repository
    _status_scope: int
    _status_seen: dict[str, int] | None
    status_keeper: StatusKeeper | None

    if TYPE_CHECKING:  # GitRepo's own; declared here for the type checker only
        @property
        def git_dir(self) -> Path: ...
        def head_oid(self) -> str | None: ...

    @contextlib.contextmanager
    def one_status(self) -> Iterator[None]:
        """Within it, git status runs once for every part of one read (until a write)."""
        self._status_scope += 1
        try:
            yield
        finally:
            self._status_scope -= 1
            if not self._status_scope:
                self._status_seen = None

    def status_key(self) -> StatusKey:
        """What git status depends on besides the work tree: HEAD, the index, info/exclude."""
        git_dir = self.git_dir
        return (self.head_oid(), file_stamp(git_dir / "index"), file_stamp(git_dir / "info" / "exclude"))

    def status_of(self, path: str) -> int | None:
        """git status of one path (None: neither in the work tree nor the index, or ignored)."""
        indexlater.settle_for(str(self.git_dir), self._repo)
        if self._as_committed(path):
            return None
        try:
            flags = int(self._repo.status_file(path))
        except _GIT_ERRORS:
            return None
        return None if flags == FileStatus.CURRENT or flags & FileStatus.IGNORED else flags

    def _as_committed(self, path: str) -> bool:
        """Whether HEAD, git's index and the regular file in the work tree hold one blob, with
        the file's executable bit as the index has it: what a write has just committed, whose
        status is then clean, found without libgit2's status of one path (which compares the
        whole index: ~2 ms at 200,000 entries). Any doubt (a link, a filter, an error) says no."""
        workdir = self._repo.workdir
        try:
            head = self._repo.head.peel(pygit2.Tree)[path]
            index = self._repo.index
            index.read(force=False)
            staged = index[path]
            on_disk = os.lstat(os.path.join(workdir, path))
        except _GIT_ERRORS:
            return False
        if not stat.S_ISREG(on_disk.st_mode) or head.id != staged.id or head.filemode != staged.mode:
            return False
        executable = bool(on_disk.st_mode & stat.S_IXUSR)
        if executable != (staged.mode == pygit2.GIT_FILEMODE_BLOB_EXECUTABLE):
            return False
        try:
            return pygit2.hashfile(os.path.join(workdir, path)) == staged.id
        except _GIT_ERRORS:
            return False

    def _status(self) -> dict[str, int]:
        indexlater.settle_for(str(self.git_dir), self._repo)
        if self._status_seen is None:
            keeper = self.status_keeper
            key = self.status_key() if keeper is not None else None
            kept = keeper.known(key) if keeper is not None and key is not None else None
            try:
                if kept is not None:
                    status = kept
                else:
                    armed = keeper is not None and keeper.arm(self.path_is_ignored)
                    status = self._repo.status(untracked_files="all", ignored=False)
                    if keeper is not None and key is not None and armed:
                        keeper.took(key, status)
            except _GIT_ERRORS as exc:
                raise map_local_error(exc, "git status") from exc
            if not self._status_scope:
                return status
            self._status_seen = status
        return self._status_seen

    def path_is_ignored(self, path: str) -> bool:
        try:
            return bool(self._repo.path_is_ignored(path))
        except _GIT_ERRORS:
            return False

    def dirty_paths(self, under: Iterable[str] | None = None) -> list[str]:
        """Sorted paths differing between work tree/index and HEAD, gitignored ones excluded."""
        prefixes = None if under is None else [p.strip("/") for p in under]
        return sorted(path for path, flags in self._status().items() if flags != FileStatus.CURRENT
                      and not flags & FileStatus.IGNORED and _is_under(path, prefixes))

    def is_clean(self) -> bool:
        """True when nothing (outside .gitignore) differs from HEAD."""
        return not self.dirty_paths()

