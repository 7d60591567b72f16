"""Work tree and index updates made alongside commits: a merge's files, and git's index lock."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from gitmem.fsio import remove_empty_folders, write_bytes_atomic
from gitmem.git.locks import INDEX_OWNER, process_start


@contextlib.contextmanager
def index_writing(git_dir: Path) -> Iterator[None]:
    """The span in which this process may hold .git/index.lock: recorded in INDEX_OWNER
    (pid and start time) before the lock can be taken, removed once it cannot be any more."""
    owner = git_dir / INDEX_OWNER
    write_bytes_atomic(owner, f"{os.getpid()} {process_start(os.getpid())}\n".encode(), durable=False)
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(owner)


def is_lock_error(exc: BaseException) -> bool:
    """A lock file another git process took after we looked (libgit2's "locked" error, or the
    O_EXCL create of .git/index.lock in index_held): worth waiting for and trying again."""
    return "locked" in str(exc) or ".lock" in str(exc)


@contextlib.contextmanager
def index_held(git_dir: Path) -> Iterator[None]:
    """Hold git's index lock (.git/index.lock) while the index is read and changed in memory,
    as git itself does: a `git add` running meanwhile fails and is retried instead of being
    overwritten. The lock is let go just before libgit2 takes it again to write the index;
    a `FileExistsError` here means another git process holds it (the caller retries). The
    caller is inside index_writing, so a kill at any point leaves a lock known to be stale."""
    lock = git_dir / "index.lock"
    fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        yield
    finally:
        os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)


@contextlib.contextmanager
def current_index(repo: pygit2.Repository) -> Iterator[pygit2.Index]:
    """The repository's index as the file holds it now, for a block that changes and writes it.

    libgit2 loads the file again only when its stamp or trailing checksum changed, so a store
    with 200,000 entries does not parse a megabyte per write. Changes the block made in memory
    but did not write are dropped when it fails: the next read must not mistake them for the
    file's content."""
    index = repo.index
    index.read(force=False)
    try:
        yield index
    except BaseException:
        with contextlib.suppress(pygit2.GitError, OSError):
            index.read(force=True)
        raise


@contextlib.contextmanager
def changing_index(repo: pygit2.Repository, *, write: bool = True) -> Iterator[pygit2.Index]:
    """The index as the file holds it, for a block that changes it while git's index lock is
    held (only for that), then written: a plain `git add` running at the same moment is neither
    overwritten nor kept waiting long (git does not wait for the lock). `write=False` leaves
    the change in memory (the caller writes it: git/indexlater.py)."""
    git_dir = Path(repo.path)
    with index_writing(git_dir), current_index(repo) as index:
        with index_held(git_dir):
            index.read(force=False)  # what another git process wrote while the lock was free
            yield index
        if write:
            index.write()


def stage(repo: pygit2.Repository, root: Path, paths: list[str], *, write: bool = True) -> pygit2.Index:
    """Stage exactly these paths as they are in the work tree (a missing file is unstaged).

    Their contents go into the object store first, then the index is changed (changing_index;
    it stays what is staged, also when no commit follows)."""
    present = [rel for rel in dict.fromkeys(paths)
               if (root / rel).is_file() or (root / rel).is_symlink()]
    for rel in present:
        repo.create_blob_fromworkdir(rel)
    with changing_index(repo, write=write) as index:
        for rel in dict.fromkeys(paths):
            if rel in present:
                index.add(rel)
            elif rel in index:
                index.remove(rel)
    return index


def index_as_committed(repo: pygit2.Repository, root: Path, paths: list[str], tree: pygit2.Tree,
                       *, tries: int = 1) -> None:
    """Write the index with each of `paths` as `tree` has it: from the work tree (with its stat
    data) where the file still holds that blob, else the blob alone (a later change shows as
    unstaged, as it is). What another git process wrote meanwhile is read first and kept; a
    git process holding index.lock is waited for, `tries` times, as a commit waits."""
    for attempt in range(tries):
        try:
            _index_as_committed(repo, root, paths, tree)
            return
        except FileExistsError:
            if attempt == tries - 1:
                raise
            time.sleep(0.01 * (attempt + 1))


def _index_as_committed(repo: pygit2.Repository, root: Path, paths: list[str], tree: pygit2.Tree) -> None:
    with changing_index(repo) as index:
        for rel in paths:
            try:
                entry = tree[rel]
            except KeyError:
                if rel in index:
                    index.remove(rel)
                continue
            if rel in index and index[rel].id == entry.id and index[rel].mode == entry.filemode:
                continue  # staged in memory as committed (the usual case)
            full = root / rel
            try:
                same = full.is_file() and not full.is_symlink() and pygit2.hashfile(str(full)) == entry.id
            except OSError:
                same = False
            if same:
                index.add(rel)
            else:
                index.add(pygit2.IndexEntry(rel, entry.id, entry.filemode))
    _flush(Path(repo.path) / "index")


def _flush(path: Path) -> None:
    """Put a file just written on disk now, while no caller waits: left to the kernel, the
    next write's own fsync would pay for it (a journal commit flushes what is pending)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def tree_with(repo: pygit2.Repository, base: pygit2.Tree | None, index: pygit2.Index,
              paths: list[str]) -> pygit2.Oid:
    """The tree of `base` with `paths` as `index` has them (absent there: removed). Only the
    trees on the way to those paths are rewritten, whatever the size of the store."""
    changes: dict[str, tuple[pygit2.Oid, int] | None] = {}
    for rel in dict.fromkeys(paths):
        changes[rel] = (index[rel].id, index[rel].mode) if rel in index else None
    return _rebuilt(repo, base, changes)


def _rebuilt(repo: pygit2.Repository, tree: pygit2.Tree | None,
             changes: dict[str, tuple[pygit2.Oid, int] | None]) -> pygit2.Oid:
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    below: dict[str, dict[str, tuple[pygit2.Oid, int] | None]] = {}
    for rel, value in changes.items():
        name, _, rest = rel.partition("/")
        if rest:
            below.setdefault(name, {})[rest] = value
        elif value is not None:
            builder.insert(name, value[0], value[1])
        elif builder.get(name) is not None:
            builder.remove(name)
    for name, inner in below.items():
        current = tree[name] if tree is not None and name in tree else None
        subtree = current if isinstance(current, pygit2.Tree) else None
        oid = _rebuilt(repo, subtree, inner)
        if len(repo[oid].peel(pygit2.Tree)):
            builder.insert(name, oid, FileMode.TREE)
        elif builder.get(name) is not None:
            builder.remove(name)
    return builder.write()


def sync_work_tree(repo: pygit2.Repository, root: Path, tree: pygit2.Tree, paths: list[str]) -> None:
    """Make the work tree and index match `tree` at `paths`, keeping other index entries."""
    with changing_index(repo) as index:
        for path in paths:
            try:
                obj = tree[path]
            except KeyError:
                obj = None
            if isinstance(obj, pygit2.Blob):
                executable = tree[path].filemode == FileMode.BLOB_EXECUTABLE
                write_bytes_atomic(root / path, obj.data, mode=0o755 if executable else None)
                index.add(path)
            else:
                remove_file(root, path)
                if path in index:
                    index.remove(path)


def remove_file(root: Path, rel: str) -> None:
    """Delete a work tree file and any directories it leaves empty."""
    full = root / rel
    full.unlink(missing_ok=True)
    remove_empty_folders(root, full.parent)
