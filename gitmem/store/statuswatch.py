"""git status kept between the calls of a long-lived process (the warm server), as git's own
file-system monitor does: a status taken while inotify watched every folder of the work tree
holds as long as no event came from any of them and HEAD, the index and info/exclude are the
ones it was taken against.

- Every folder of the work tree is watched except `.git` and the root folders git ignores
  (index/, state/, logs/, digests/: gitmem's own caches, written by every call). A file made,
  changed, moved or removed in a watched folder, a folder made or removed, or lost events
  (queue overflow) drop the kept status: the next call runs git status and arms again.
- A commit the process makes itself keeps it: when the status was current just before the
  commit, the paths it committed and every path an event named since are asked again one by
  one (git status of one file), so a hand edit made while the write ran is still seen.
- Without inotify (not Linux), or when a watch cannot be added, nothing is kept.

What it does not see: a change to the user's global excludes file, and a work tree changed
from another machine over a network file system; both are seen once anything else changes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from gitmem.git.status import StatusKey
from gitmem.search.watch import ChangeWatcher


def tree_folders(root: Path, ignored: Callable[[str], bool]) -> list[str]:
    """Every folder of the work tree ('' = root) but .git and the root folders git ignores."""
    found = [""]
    pending = [""]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(root / folder if folder else root) as listing:
                names = [item.name for item in listing if item.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for name in names:
            relpath = f"{folder}/{name}" if folder else name
            if not folder and (name == ".git" or ignored(f"{name}/")):
                continue
            found.append(relpath)
            pending.append(relpath)
    return found


class StatusWatch:
    """One repository's git status, kept while nothing it depends on changed (git's StatusKeeper)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._ignored: Callable[[str], bool] = lambda _path: False
        self._watcher = ChangeWatcher.create(root, folders=self._folders, structural=lambda _p, _n: True)
        self._key: StatusKey | None = None
        self._status: dict[str, int] | None = None

    def _folders(self, root: Path) -> list[str]:
        return tree_folders(root, self._ignored)

    def known(self, key: StatusKey) -> dict[str, int] | None:
        """The status kept for `key` when no event came since (a copy), else None."""
        if self._status is None or key != self._key or self._watcher is None:
            return None
        if self._watcher.poll() != set():
            self._drop()
            return None
        return dict(self._status)

    def arm(self, ignored: Callable[[str], bool]) -> bool:
        """Watch every folder again, just before a full git status."""
        self._drop()
        self._ignored = ignored
        return self._watcher is not None and self._watcher.arm()

    def took(self, key: StatusKey, status: dict[str, int]) -> None:
        """A full git status taken right after arm()."""
        self._key, self._status = key, dict(status)

    def committed(self, before: StatusKey, after: StatusKey, paths: list[str],
                  status_of: Callable[[str], int | None]) -> None:
        """This process committed `paths`; the status taken under `before` still holds for every
        other path no event named (each of those is asked again), now under `after`."""
        if self._status is None or before != self._key or self._watcher is None:
            self._drop()
            return
        touched = self._watcher.poll()
        if touched is None:
            self._drop()
            return
        status = dict(self._status)
        for path in {*paths, *touched}:
            flags = status_of(path)
            if flags is None:
                status.pop(path, None)
            else:
                status[path] = flags
        self._key, self._status = after, status

    def _drop(self) -> None:
        self._key = self._status = None

    def close(self) -> None:
        self._drop()
        if self._watcher is not None:
            self._watcher.close()
