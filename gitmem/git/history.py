"""The store's history over pygit2 (revwalk, trees, files at a revision, the log of a path), read
through GitRepo, the one opener of the store's repository."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pygit2
from pygit2.enums import DeltaStatus, SortMode

from gitmem.errors import InvalidInputError, NotFoundError
from gitmem.git.machine import split_machine

_GIT_ERRORS = (pygit2.GitError, KeyError, ValueError, OSError)
# Commits made within one second share a timestamp; TOPOLOGICAL keeps children before parents.
LOG_ORDER = SortMode.TOPOLOGICAL | SortMode.TIME


@dataclass
class CommitInfo:
    """One commit as other modules see it."""

    oid: str
    message: str  # without the Gitmem-Machine trailer
    author: str
    time: int
    parents: list[str]
    machine: str | None = None  # the machine gitmem made it on (None: not made by gitmem)


def clean_path(path: str) -> str:
    """Validate a repo-relative posix path; refuse absolute paths, '..' and .git."""
    pure = PurePosixPath(path)
    if not pure.parts or pure.is_absolute() or ".." in pure.parts or pure.parts[0] == ".git":
        raise InvalidInputError(f"not a safe repository path: {path!r}")
    return pure.as_posix()


def walk_tree(tree: pygit2.Tree, prefix: str) -> Iterator[str]:
    """Yield every blob path below `tree`."""
    for entry in tree:
        path = f"{prefix}/{entry.name}" if prefix else str(entry.name)
        if isinstance(entry, pygit2.Tree):
            yield from walk_tree(entry, path)
        elif isinstance(entry, pygit2.Blob):
            yield path


def entry_id(tree: pygit2.Tree, path: str) -> str | None:
    """Oid of the object at `path` in `tree`, or None when absent."""
    try:
        return str(tree[path].id)
    except KeyError:
        return None


def commit_info(commit: pygit2.Commit) -> CommitInfo:
    """Convert a pygit2 commit to a CommitInfo."""
    message, machine = split_machine(commit.message)
    return CommitInfo(
        oid=str(commit.id),
        message=message,
        machine=machine,
        author=f"{commit.author.name} <{commit.author.email}>",
        time=commit.commit_time,
        parents=[str(p) for p in commit.parent_ids],
    )


def resolve_commit(repo: pygit2.Repository, rev: str) -> pygit2.Commit:
    """Resolve a revision (oid, ref, expression) to a commit."""
    try:
        return repo.revparse_single(rev).peel(pygit2.Commit)
    except _GIT_ERRORS as exc:
        raise NotFoundError(f"unknown revision {rev!r} in {repo.workdir}") from exc


def tree_of(repo: pygit2.Repository, rev: str | None) -> pygit2.Tree:
    """Tree of a revision, or the empty tree for None."""
    if rev is None:
        return repo[repo.TreeBuilder().write()].peel(pygit2.Tree)
    return resolve_commit(repo, rev).tree


def changed_between(repo: pygit2.Repository, old: str | None, new: str | None) -> list[str]:
    """Sorted paths that differ between two commits (None stands for the empty tree)."""
    diff = tree_of(repo, old).diff_to_tree(tree_of(repo, new))
    paths = {d.old_file.path for d in diff.deltas} | {d.new_file.path for d in diff.deltas}
    return sorted(paths)

def read_file_at(repo: pygit2.Repository, rev: str, path: str) -> bytes | None:
    """Content of `path` at `rev`, or None when the path is absent there."""
    try:
        obj = resolve_commit(repo, rev).tree[clean_path(path)]
    except KeyError:
        return None
    return obj.data if isinstance(obj, pygit2.Blob) else None

def list_files_at(repo: pygit2.Repository, rev: str, under: str = "") -> list[str]:
    """Sorted blob paths at `rev`, optionally only below the directory `under`."""
    tree = resolve_commit(repo, rev).tree
    prefix = under.strip("/")
    if prefix:
        try:
            sub = tree[clean_path(prefix)]
        except KeyError:
            return []
        if isinstance(sub, pygit2.Blob):
            return [prefix]
        tree = sub
    return sorted(walk_tree(tree, prefix))

def log(repo: pygit2.Repository, limit: int = 20, path: str | tuple[str, ...] | None = None) -> list[CommitInfo]:
    """Newest-first commits reachable from HEAD, optionally only those that changed `path` (or
    any of several paths, as `git log A B` lists them)."""
    if repo.head_is_unborn or limit <= 0:
        return []
    targets = None if path is None else tuple(clean_path(p) for p in ((path,) if isinstance(path, str) else path))
    out: list[CommitInfo] = []
    for commit in repo.walk(resolve_commit(repo, "HEAD").id, LOG_ORDER):
        if targets is not None:
            mine = tuple(entry_id(commit.tree, t) for t in targets)
            # Like git log PATH...: keep a commit only if it differs from every parent there.
            if commit.parents:
                if any(tuple(entry_id(p.tree, t) for t in targets) == mine for p in commit.parents):
                    continue
            elif all(oid is None for oid in mine):
                continue
        out.append(commit_info(commit))
        if len(out) >= limit:
            break
    return out


def walk(repo: pygit2.Repository, rev: str = "HEAD", hide: str | None = None) -> Iterator[CommitInfo]:
    """Every commit reachable from `rev` (and not from `hide`), newest first (children before
    parents): the one revwalk of the store's history."""
    if repo.head_is_unborn:
        return
    for commit in commits(repo, rev, hide):
        yield commit_info(commit)


def commits(repo: pygit2.Repository, rev: str, hide: str | None = None) -> Iterator[pygit2.Commit]:
    """The commits `walk` gives, as pygit2 objects (for readers that need only their ids)."""
    walker = repo.walk(resolve_commit(repo, rev).id, LOG_ORDER)
    if hide is not None:
        walker.hide(resolve_commit(repo, hide).id)
    yield from walker


def commit_before(repo: pygit2.Repository, rev: str, when: int) -> CommitInfo | None:
    """The newest commit on `rev`'s first-parent line committed at or before `when` (epoch)."""
    if repo.head_is_unborn:
        return None
    commit: pygit2.Commit | None = resolve_commit(repo, rev)
    while commit is not None:
        if commit.commit_time <= when:
            return commit_info(commit)
        commit = commit.parents[0] if commit.parents else None
    return None


class NeedleFinder:
    """Finds the blobs holding a byte string in the trees of many commits, cheaply.

    The first commit asked about is scanned (memoized per subtree and blob id). A commit asked
    about next to one already known (`near`: its child or parent) is derived from that one
    through the diff of their trees, so walking a long history costs the files each commit
    changed, and each distinct blob is searched once.
    """

    def __init__(self, repo: pygit2.Repository, needle: bytes, *, under: tuple[str, ...] = (),
                 suffix: str = ".md") -> None:
        self._repo = repo
        self._needle = needle
        self._under = under
        self._suffix = suffix
        self._trees: dict[str, list[tuple[str, str]]] = {}
        self._blobs: dict[str, bool] = {}
        self._commits: dict[str, list[tuple[str, str]]] = {}

    def at(self, rev: str, near: str | None = None) -> list[tuple[str, str]]:
        """(path, blob id) of every file holding the needle in the tree of `rev`, sorted."""
        commit = resolve_commit(self._repo, rev)
        key = str(commit.id)
        found = self._commits.get(key)
        if found is None:
            known = self._commits.get(near) if near else None
            if known is not None and near is not None:
                found = self._derive(resolve_commit(self._repo, near).tree, commit.tree, known)
            else:
                found = sorted(self._full(commit.tree))
            self._commits[key] = found
        return found

    def _derive(self, old: pygit2.Tree, new: pygit2.Tree,
                known: list[tuple[str, str]]) -> list[tuple[str, str]]:
        found = dict(known)
        for delta in old.diff_to_tree(new).deltas:
            found.pop(delta.old_file.path, None)
            path = delta.new_file.path
            found.pop(path, None)
            if delta.status == DeltaStatus.DELETED or not self._wanted(path):
                continue
            oid = str(delta.new_file.id)
            if self._holds(oid):
                found[path] = oid
        return sorted(found.items())

    def _wanted(self, path: str) -> bool:
        return path.endswith(self._suffix) and (
            not self._under or any(path.startswith(f"{top}/") for top in self._under))

    def _holds(self, oid: str) -> bool:
        hit = self._blobs.get(oid)
        if hit is None:
            hit = self._blobs[oid] = self._needle in self._repo[oid].peel(pygit2.Blob).data
        return hit

    def _full(self, tree: pygit2.Tree) -> list[tuple[str, str]]:
        if not self._under:
            return self._scan(tree)
        found: list[tuple[str, str]] = []
        for top in self._under:
            try:
                sub = tree[top]
            except KeyError:
                continue
            if isinstance(sub, pygit2.Tree):
                found += [(f"{top}/{path}", oid) for path, oid in self._scan(sub)]
        return found

    def _scan(self, tree: pygit2.Tree) -> list[tuple[str, str]]:
        key = str(tree.id)
        cached = self._trees.get(key)
        if cached is not None:
            return cached
        found: list[tuple[str, str]] = []
        for item in tree:
            if isinstance(item, pygit2.Tree):
                found += [(f"{item.name}/{path}", oid) for path, oid in self._scan(item)]
            elif isinstance(item, pygit2.Blob) and str(item.name).endswith(self._suffix):
                oid = str(item.id)
                if self._holds(oid):
                    found.append((str(item.name), oid))
        self._trees[key] = found
        return found


def read_blob(repo: pygit2.Repository, oid: str) -> bytes:
    """The content of a blob."""
    return repo[oid].peel(pygit2.Blob).data


def export_tree(repo: pygit2.Repository, rev: str, dest: Path, *, under: tuple[str, ...],
                suffix: str = ".md") -> int:
    """Write the files of `rev` below the folders `under` (ending in `suffix`) into `dest`."""
    tree = resolve_commit(repo, rev).tree
    count = 0
    for top in under:
        try:
            sub = tree[top]
        except KeyError:
            continue
        if not isinstance(sub, pygit2.Tree):
            continue
        for path in walk_tree(sub, top):
            if not path.endswith(suffix):
                continue
            target = dest / clean_path(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(tree[path].peel(pygit2.Blob).data)
            count += 1
    return count

