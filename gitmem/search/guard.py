"""The search index as the store uses it: a fault in the index folder never fails a search.

`index/` is derived data: whatever is wrong inside it (a folder where manifest.json or
write.lock belongs, a link, files vanishing mid-search) is removed and rebuilt. `index` itself
being a file or a symbolic link is not ours to remove, and a read-only index that is out of date
cannot be brought up to date: search then answers from a private index in the user's cache
folder (or a temporary folder), and says so in one line.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from gitmem import caller
from gitmem.errors import SearchFault, StoreStateError
from gitmem.redaction import redact
from gitmem.search.index import INDEX_DIR, SearchHit, SearchIndex

INNER_FILES = ("manifest.json", "write.lock")


class GuardedIndex(SearchIndex):
    """A SearchIndex whose search survives a damaged, vanished or unusable index folder."""

    def __init__(self, root: Path, *, note: Callable[[str], None] | None = None) -> None:
        super().__init__(root)
        if note is not None:
            self._note = note
        self._fallback: SearchIndex | None = None  # where searches go when index/ cannot serve

    def search(self, query: str, **options: Any) -> list[SearchHit]:
        """Ranked entries (SearchIndex.search's options); a damaged index is repaired or rebuilt,
        one that cannot be used is replaced by a private index, with a one-line note."""
        def run(index: SearchIndex) -> list[SearchHit]:
            return SearchIndex.search(index, query, **options)

        problem = None if self._fallback else location_problem(self.dir)
        for attempt in (1, 2):
            if self._fallback is not None or problem is not None:
                break
            try:
                return run(self)
            except SearchFault:
                raise  # the index was rebuilt already: another rebuild would fail the same way
            except Exception as exc:  # noqa: BLE001 - vanished or damaged underneath us
                if self._manifest is not None and not self._manifest.files:
                    return []  # an index of no files (the reader cannot open an empty index)
                self._forget()
                self._clear_inside()
                problem = describe_failure(exc) if attempt == 2 else None
        if self._fallback is None:
            self._fallback = SearchIndex(self.root, watch=False, folder=private_folder(self.root))
            self._note(f"the search index in {INDEX_DIR}/ could not be used ({problem}); "
                       f"searched a private index in {self._fallback.dir} instead")
        return run(self._fallback)

    def update_paths(self, relpaths: Iterable[str]) -> None:
        """Re-index these files; a damaged folder is repaired and the update tried once more.
        An index folder that is not ours to write (a file, a link) is left alone."""
        if location_problem(self.dir) is not None:
            return
        paths = list(relpaths)
        try:
            super().update_paths(paths)
        except Exception:  # noqa: BLE001 - a second failure goes to the caller
            self._forget()
            self._clear_inside()
            super().update_paths(paths)

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> int:
        problem = location_problem(self.dir)
        if problem is not None:
            raise StoreStateError(f"{problem}: move it away, then run `gitmem reindex`")
        self._clear_inside()
        return super().rebuild(progress)

    def _clear_inside(self) -> None:
        for relpath in repair_inside(self.dir):
            self._note(f"removed {relpath} (a folder or link where the index keeps a file)")

    def _forget(self) -> None:
        """Drop the open reader and every cached fact about the index folder."""
        self.close()
        self._manifest = self._loaded = None
        self._manifest_key = None
        self._checked_key = None
        self._watching = False

    def close(self) -> None:
        super().close()
        if self._fallback is not None:
            self._fallback.close()


def location_problem(folder: Path) -> str | None:
    """Why `folder` cannot hold the index (a link, a file), or None."""
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{folder.name} cannot be read ({exc.strerror})"
    if stat.S_ISLNK(mode):
        return f"{folder.name} is a symbolic link (gitmem does not write through links)"
    if not stat.S_ISDIR(mode):
        return f"{folder.name} is a file, not a folder"
    return None


def repair_inside(folder: Path) -> list[str]:
    """Remove what stands where the index's own files belong (folders, links); returns them."""
    removed = []
    for name in INNER_FILES:
        path = folder / name
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            shutil.rmtree(path, ignore_errors=True)
        elif not stat.S_ISREG(mode):
            path.unlink(missing_ok=True)
        else:
            continue
        removed.append(f"{folder.name}/{name}")
    return removed


def private_folder(root: Path) -> Path:
    """A folder of this user's own for an index of `root` that cannot live in root/index."""
    key = hashlib.sha256(str(root.absolute()).encode("utf-8")).hexdigest()[:16]
    cache = Path(caller.env("XDG_CACHE_HOME") or Path(caller.home()) / ".cache") / "gitmem" / "indexes"
    try:
        cache.mkdir(parents=True, exist_ok=True, mode=0o700)
        info = os.lstat(cache)
        if stat.S_ISDIR(info.st_mode) and (not hasattr(os, "getuid") or info.st_uid == os.getuid()):
            target = cache / key
            target.mkdir(exist_ok=True, mode=0o700)
            if not os.path.islink(target) and os.access(target, os.W_OK):
                return target
    except OSError:
        pass
    folder = tempfile.mkdtemp(prefix=f"gitmem-index-{key}-")
    atexit.register(shutil.rmtree, folder, True)
    return Path(folder)


def describe_failure(exc: Exception) -> str:
    """A short reason for a note (an OSError without its path, which the note names)."""
    if isinstance(exc, PermissionError):
        return "it is read-only for this user and out of date"
    text = (exc.strerror or str(exc)) if isinstance(exc, OSError) else str(exc)
    return redact(f"{type(exc).__name__}: {text}")[:120]  # redacted, then cut
