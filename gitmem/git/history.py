"""Reading history over pygit2: commits, trees, files at a revision, the log of a path."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

import pygit2
from pygit2.enums import SortMode

from gitmem.errors import InvalidInputError, NotFoundError
from gitmem.git.machine import split_machine

_GIT_ERRORS = (pygit2.GitError, KeyError, ValueError, OSError)
# Commits made within one second share a timestamp; TOPOLOGICAL keeps children before parents.
_LOG_ORDER = SortMode.TOPOLOGICAL | SortMode.TIME


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

def log(repo: pygit2.Repository, limit: int = 20, path: str | None = None) -> list[CommitInfo]:
    """Newest-first commits reachable from HEAD, optionally only those that changed `path`."""
    if repo.head_is_unborn or limit <= 0:
        return []
    target = None if path is None else clean_path(path)
    out: list[CommitInfo] = []
    for commit in repo.walk(resolve_commit(repo, "HEAD").id, _LOG_ORDER):
        if target is not None:
            mine = entry_id(commit.tree, target)
            # Like git log PATH: keep a commit only if it differs from every parent there.
            if commit.parents:
                if any(entry_id(p.tree, target) == mine for p in commit.parents):
                    continue
            elif mine is None:
                continue
        out.append(commit_info(commit))
        if len(out) >= limit:
            break
    return out
