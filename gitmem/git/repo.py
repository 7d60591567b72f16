"""The git layer: commits, status, history, remotes and sync plumbing over pygit2.

Only modules of gitmem/git/ import pygit2; everything else speaks in repo-relative posix paths and
hex oids. Network work goes through the git binary (transport.py).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path

import pygit2
from pygit2.enums import (
    CheckoutStrategy,
    FileMode,
    RepositoryOpenFlag,
)

from gitmem import caller
from gitmem.errors import GitLayerError, InvalidInputError, NotFoundError
from gitmem.git import graph, history, indexlater, transport, worktree
from gitmem.git.credentials import PushRejectedError, map_local_error, redact, strip_credentials
from gitmem.git.history import CommitInfo
from gitmem.git.history import clean_path as _clean_path
from gitmem.git.localconfig import ConfigOps
from gitmem.git.machine import with_machine
from gitmem.git.remotes import RemoteOps
from gitmem.git.status import StatusKeeper, StatusOps

__all__ = ["CommitInfo", "GitRepo", "PushRejectedError", "redact", "strip_credentials"]

FALLBACK_AUTHOR = ("gitmem", "gitmem@localhost")
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_GIT_ERRORS = (pygit2.GitError, KeyError, ValueError, OSError)
_LOCK_RETRIES = 20  # a lock file a plain git command took meanwhile: wait for it, this many times


def check_branch_name(name: str) -> str:
    """`name` when git accepts it as a branch name (git's ref-format rules), else a one-line
    InvalidInputError: an empty name, `..`, a leading `-`, spaces, `~^:?*[\\`, a `.lock` end."""
    if not name or name.startswith("-") or name == "HEAD" or \
            not pygit2.reference_is_valid_name(f"refs/heads/{name}"):
        raise InvalidInputError(f"not a valid branch name: {name!r} (git's ref-format rules: "
                                "no empty name, `..`, spaces, `~^:?*[\\`, leading `-` or `.lock` end)")
    return name


class GitRepo(RemoteOps, StatusOps, ConfigOps):
    """A non-bare git repository opened exactly at `root` (parent directories are never searched).

    Remote operations (fetch, push, upstream tracking) come from RemoteOps (remotes.py), git
    status from StatusOps (status.py), the repository's own settings from ConfigOps (localconfig.py).
    """

    def __init__(self, root: Path, *, token_file: Path | None = None) -> None:
        self._root = Path(root).absolute()
        self.token_file = token_file
        # Called before a write that moves HEAD (the store waits there for plain git and clears
        # stale locks); `before_write(True)`, just before HEAD moves, says whether it waited.
        self.before_write: Callable[[bool], bool] | None = None
        self.after_head_move: Callable[[], None] | None = None  # told right after HEAD moved
        # Takes a step to run once the caller has its answer; False: run nothing later (then a
        # commit writes git's index at once). The warm server's stores set it (indexlater.py).
        self.index_write_later: Callable[[Callable[[], None]], bool] | None = None
        self._status_scope = 0  # inside one_status(), git status runs once: _status_seen
        self._status_seen: dict[str, int] | None = None
        # A long-lived process keeps git status between calls while nothing changed (StatusKeeper).
        self.status_keeper: StatusKeeper | None = None
        try:
            self._repo = pygit2.Repository(str(self._root), RepositoryOpenFlag.NO_SEARCH)
        except _GIT_ERRORS as exc:
            raise NotFoundError(f"not a git repository: {self._root}") from exc

    @classmethod
    def init(cls, root: Path, branch: str = "main", *, token_file: Path | None = None) -> GitRepo:
        """Create a repository at `root` with HEAD on unborn `branch`, or adopt an existing one."""
        if cls.is_repo(root):
            return cls(root, token_file=token_file)
        try:
            Path(root).mkdir(parents=True, exist_ok=True)
            pygit2.init_repository(str(root), bare=False, initial_head=branch)
        except _GIT_ERRORS as exc:
            raise map_local_error(exc, f"git init {root}") from exc
        return cls(root, token_file=token_file)

    @staticmethod
    def is_repo(root: Path) -> bool:
        """True when `root` itself (not a parent) holds a git repository."""
        try:
            pygit2.Repository(str(root), RepositoryOpenFlag.NO_SEARCH)
        except _GIT_ERRORS:
            return False
        return True

    @property
    def root(self) -> Path:
        """The work tree root."""
        return self._root

    @property
    def git_dir(self) -> Path:
        """The repository folder (`.git`)."""
        return Path(self._repo.path)

    def _before_write(self, head_moves_next: bool) -> bool:
        self._status_seen = None  # what git status said no longer holds once we write
        indexlater.settle(str(self.git_dir))
        return self.before_write(head_moves_next) if self.before_write is not None else False

    def _head_moved(self) -> None:
        if self.after_head_move is not None:
            self.after_head_move()

    # -- local state -------------------------------------------------------------------------

    def head_oid(self) -> str | None:
        """Hex oid of HEAD, or None while the branch is unborn."""
        if self._repo.head_is_unborn:
            return None
        return str(self._repo.head.peel(pygit2.Commit).id)

    def branch(self) -> str:
        """Short name of the current branch ("HEAD" when detached); works when unborn."""
        target = self._repo.lookup_reference("HEAD").target
        if isinstance(target, str):
            return target.removeprefix("refs/heads/")
        return "HEAD"

    def switch_branch(self, name: str) -> None:
        """Put HEAD on branch `name` at the current commit (created when missing); files stay."""
        ref = f"refs/heads/{name}"
        if not pygit2.reference_is_valid_name(ref):
            raise InvalidInputError(f"not a valid branch name: {name!r}")
        self._before_write(False)
        head = self.head_oid()
        existing = self._repo.references.get(ref)
        if existing is not None and str(existing.peel(pygit2.Commit).id) != head:
            raise GitLayerError(f"branch {name} already exists at another commit in {self._root}")
        try:
            if existing is None and head is not None:
                self._repo.references.create(ref, pygit2.Oid(hex=head))
            self._repo.set_head(ref)
        except _GIT_ERRORS as exc:
            raise map_local_error(exc, f"switch to branch {name}") from exc

    def _branch_ref(self) -> str:
        """Full ref name of the current branch; refuse a detached HEAD."""
        name = self.branch()
        if name == "HEAD":
            raise GitLayerError(f"{self._root}: HEAD is detached; check out a branch first")
        return f"refs/heads/{name}"

    def _commit(self, rev: str) -> pygit2.Commit:
        """Resolve a revision (oid, ref, expression) to a commit."""
        return history.resolve_commit(self._repo, rev)

    def _tree(self, rev: str | None) -> pygit2.Tree:
        """Tree of a revision, or the empty tree for None."""
        return history.tree_of(self._repo, rev)

    def _signature(self, author: tuple[str, str] | None) -> pygit2.Signature:
        """Explicit author, else git config user.name/email, else the gitmem fallback."""
        if author is not None:
            return _in_callers_zone(pygit2.Signature(author[0], author[1]))
        try:
            return _in_callers_zone(self._repo.default_signature)
        except _GIT_ERRORS:
            return _in_callers_zone(pygit2.Signature(*FALLBACK_AUTHOR))

    def commit_paths(
        self,
        paths: Iterable[str],
        message: str,
        *,
        author: tuple[str, str] | None = None,
        allow_empty: bool = False,
    ) -> str | None:
        """Stage exactly `paths` and commit them (and only them) on HEAD; None when nothing changed."""
        paths = list(paths)
        before = self.status_key() if self.status_keeper is not None else None
        git_dir = str(self.git_dir)
        later = self.index_write_later is not None and self.index_write_later(
            lambda: indexlater.settle(git_dir))
        for attempt in range(_LOCK_RETRIES):
            self._before_write(False)
            index = None
            try:
                clean = [_clean_path(p) for p in paths]
                index = worktree.stage(self._repo, self._root, clean, write=not later)
                head = None if self._repo.head_is_unborn else self._commit("HEAD")
                # Only these paths: what a person staged for their own commit is not taken along.
                tree = worktree.tree_with(self._repo, head.tree if head else None, index, clean)
                head_tree = EMPTY_TREE if head is None else str(head.tree_id)
                if str(tree) == head_tree and not allow_empty:
                    self._write_staged(index, later)
                    return None
                if self._before_write(True):
                    continue  # a plain git command moved HEAD meanwhile: stage again on top of it
                parents = [] if head is None else [head.id]
                sig = self._signature(author)
                # "HEAD" follows the symbolic ref, so an unborn branch is created by this commit.
                oid = self._repo.create_commit("HEAD", sig, sig, with_machine(message), tree, parents)
                self._head_moved()
                if self.status_keeper is not None and before is not None:
                    self.status_keeper.committed(before, self.status_key(), clean, self.status_of)
                if later:
                    indexlater.leave(git_dir, self._repo, partial(self._write_index_as, clean, tree))
                return str(oid)
            except _GIT_ERRORS as exc:  # a lock file another git process took after we looked
                if not worktree.is_lock_error(exc) or attempt == _LOCK_RETRIES - 1:
                    if index is not None:
                        with contextlib.suppress(*_GIT_ERRORS):
                            self._write_staged(index, later)
                    raise map_local_error(exc, "commit") from exc
                time.sleep(0.01 * (attempt + 1))
        if index is not None:
            self._write_staged(index, later)
        return None

    def _write_staged(self, index: pygit2.Index, left: bool) -> None:
        """Write what was staged in memory and not committed (the index stays what is staged)."""
        if left:
            with worktree.index_writing(self.git_dir):
                index.write()

    def _write_index_as(self, paths: list[str], tree: pygit2.Oid) -> None:
        """The index write a commit left (indexlater.py): its paths as its tree has them, git's
        lock waited for as a commit waits; git status kept between calls follows."""
        before = self.status_key() if self.status_keeper is not None else None
        worktree.index_as_committed(self._repo, self._root, paths, self._repo[tree].peel(pygit2.Tree),
                                    tries=_LOCK_RETRIES)
        if self.status_keeper is not None and before is not None:
            self.status_keeper.committed(before, self.status_key(), paths, self.status_of)

    def stage_paths(self, paths: Iterable[str]) -> None:
        """Stage exactly `paths` as they are in the work tree (conflicts on them are settled in the
        index), without committing: a plain git merge in progress is finished by `git commit`.
        Staged as a commit stages, waiting as it does for a lock another git process holds."""
        clean = list(dict.fromkeys(_clean_path(p) for p in paths))
        for attempt in range(_LOCK_RETRIES):
            self._before_write(False)  # as a commit stages: announced commits, stale locks
            try:
                worktree.stage(self._repo, self._root, clean)
                return
            except _GIT_ERRORS as exc:
                if not worktree.is_lock_error(exc) or attempt == _LOCK_RETRIES - 1:
                    raise map_local_error(exc, "stage") from exc
                time.sleep(0.01 * (attempt + 1))

    def changed_between(self, old: str | None, new: str | None) -> list[str]:
        """Sorted paths that differ between two commits (None stands for the empty tree)."""
        return history.changed_between(self._repo, old, new)

    def read_file_at(self, rev: str, path: str) -> bytes | None:
        """Content of `path` at `rev`, or None when the path is absent there."""
        return history.read_file_at(self._repo, rev, path)

    def list_files_at(self, rev: str, under: str = "") -> list[str]:
        """Sorted blob paths at `rev`, optionally only below the directory `under`."""
        return history.list_files_at(self._repo, rev, under)

    def commit_info(self, rev: str) -> CommitInfo:
        """One commit: message, author, parents and the machine gitmem made it on."""
        return history.commit_info(self._commit(rev))

    def log(self, limit: int = 20, path: str | tuple[str, ...] | None = None) -> list[CommitInfo]:
        """Newest-first commits reachable from HEAD, optionally only those that changed `path`
        (or any of several)."""
        return history.log(self._repo, limit, path)

    def walk(self, rev: str = "HEAD") -> Iterator[CommitInfo]:
        """Every commit reachable from `rev`, newest first (children before parents)."""
        return history.walk(self._repo, rev)

    def commit_before(self, when: int, rev: str = "HEAD") -> CommitInfo | None:
        """The newest first-parent commit of `rev` made at or before `when` (epoch seconds)."""
        return history.commit_before(self._repo, rev, when)

    def needle_finder(self, needle: bytes, under: tuple[str, ...] = ()) -> history.NeedleFinder:
        """A finder of the Markdown files holding `needle`, memoized across commits."""
        return history.NeedleFinder(self._repo, needle, under=under)

    def commit_graph(self, under: tuple[str, ...]) -> graph.Graph:
        """The commit graph and each commit's changed Markdown files below `under`."""
        return graph.Graph(self._repo, under)

    def read_blob(self, oid: str) -> bytes:
        return history.read_blob(self._repo, oid)

    def export_tree(self, rev: str, dest: Path, under: tuple[str, ...]) -> int:
        """Write the Markdown files of `rev` below `under` into `dest`; returns how many."""
        return history.export_tree(self._repo, rev, dest, under=under)

    # -- history between two commits ---------------------------------------------------------

    def ahead_behind(self, local: str, upstream: str) -> tuple[int, int]:
        """(commits only in local, commits only in upstream)."""
        return self._repo.ahead_behind(self._commit(local).id, self._commit(upstream).id)

    def merge_base(self, a: str, b: str) -> str | None:
        """Best common ancestor of two commits, or None for unrelated histories."""
        base = self._repo.merge_base(self._commit(a).id, self._commit(b).id)
        return None if base is None else str(base)

    def fast_forward(self, target_oid: str) -> None:
        """Move the current branch, index and work tree forward to `target_oid`."""
        self._before_write(False)
        target = self._commit(target_oid)
        ref = self._branch_ref()
        head = self.head_oid()
        if head == str(target.id):
            return
        if head is not None and not self._repo.descendant_of(target.id, head):
            raise GitLayerError(f"cannot fast-forward {self.branch()} to {str(target.id)[:12]}")
        try:
            # SAFE leaves (and fails on) local edits instead of overwriting them.
            with worktree.index_writing(self.git_dir):
                self._repo.checkout_tree(target.tree, strategy=CheckoutStrategy.SAFE)
            self._repo.references.create(ref, target.id, force=True)
        except _GIT_ERRORS as exc:
            raise map_local_error(exc, "fast-forward") from exc
        self._head_moved()

    def commit_merge(self, files: dict[str, bytes | None], message: str, parents: list[str]) -> str:
        """Commit first parent's tree with `files` replaced (None deletes); sync work tree+index."""
        if not parents:
            raise InvalidInputError("commit_merge needs at least one parent")
        self._before_write(False)
        commits = [self._commit(p) for p in parents]
        wanted = {_clean_path(p): data for p, data in files.items()}
        ref = self._branch_ref()
        try:
            scratch = pygit2.Index()
            scratch.read_tree(commits[0].tree)
            for path, data in wanted.items():
                if data is None:
                    if path in scratch:
                        scratch.remove(path)
                    continue
                mode = scratch[path].mode if path in scratch else FileMode.BLOB
                scratch.add(pygit2.IndexEntry(path, self._repo.create_blob(data), mode))
            tree = self._repo[scratch.write_tree(self._repo)].peel(pygit2.Tree)
            sig = self._signature(None)
            oid = self._repo.create_commit(None, sig, sig, with_machine(message), tree.id,
                                           [c.id for c in commits])
            # Work tree first, ref last: a crash in between leaves merged files to commit, not lose.
            old = self._tree(self.head_oid())
            changed = set(wanted) | {d.new_file.path for d in old.diff_to_tree(tree).deltas}
            worktree.sync_work_tree(self._repo, self._root, tree, sorted(changed))
            self._repo.references.create(ref, oid, force=True)
        except _GIT_ERRORS as exc:
            raise map_local_error(exc, "merge commit") from exc
        self._head_moved()
        return str(oid)

    @staticmethod
    def clone(
        url: str, root: Path, branch: str | None = None, *, token_file: Path | None = None
    ) -> GitRepo:
        """Clone `url` into `root` (token/SSH credentials); the stored URL carries no secret."""
        clean = transport.clone(url, root, branch, token_file)
        repo = GitRepo(root, token_file=token_file)
        if clean != url:
            repo.set_remote(clean)
        return repo


def _in_callers_zone(signature: pygit2.Signature) -> pygit2.Signature:
    """The signature stamped now with the caller's UTC offset (the warm server's caller may
    live in another time zone than the server; a normal process is its own caller)."""
    if caller.tz() is None:
        return signature
    moment = caller.local_time()
    offset = moment.utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    return pygit2.Signature(signature.name, signature.email, int(moment.timestamp()), minutes)
