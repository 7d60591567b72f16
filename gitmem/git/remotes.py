"""The remote side of a GitRepo: configured remotes, upstream tracking, fetch, push, ls-remote."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2

from gitmem.errors import InvalidInputError
from gitmem.git import gitnet, history, transport
from gitmem.git.credentials import map_local_error, register_secret, strip_credentials
from gitmem.git.history import CommitInfo
from gitmem.git.transport import REMOTE

_GIT_ERRORS = (pygit2.GitError, KeyError, ValueError, OSError)


class RemoteOps:
    """Remote operations, mixed into GitRepo (which provides `_repo`, `_root`, `branch`)."""

    _repo: pygit2.Repository
    _root: Path
    token_file: Path | None

    if TYPE_CHECKING:  # GitRepo's own method; declared here for the type checker only
        def branch(self) -> str: ...

    def set_remote(self, url: str, name: str = REMOTE) -> None:
        """Create or update a remote; a password or token in the URL is never stored."""
        clean, secret = strip_credentials(url)
        register_secret(secret)
        try:
            if name in list(self._repo.remotes.names()):
                self._repo.remotes.set_url(name, clean)
            else:
                self._repo.remotes.create(name, clean)
        except _GIT_ERRORS as exc:
            raise map_local_error(exc, f"set remote {name}") from exc

    def remote_url(self, name: str = REMOTE) -> str | None:
        """The configured URL of a remote, or None when there is no such remote."""
        try:
            return self._repo.remotes[name].url
        except _GIT_ERRORS:
            return None

    def effective_url(self, name: str = REMOTE, *, push: bool = False) -> str | None:
        """The URL git really talks to for a remote (url.<base>.insteadOf, pushurl applied)."""
        if not gitnet.use_git_binary():
            return self.remote_url(name)
        return gitnet.effective_url(self._root, name, push=push)

    def set_upstream(self, branch: str, remote: str = REMOTE) -> None:
        """Make `branch` track `remote`/`branch`, so plain `git push` and `git pull` work."""
        ref = f"refs/heads/{branch}"
        if not pygit2.reference_is_valid_name(ref):
            raise InvalidInputError(f"not a valid branch name: {branch!r}")
        config = pygit2.Config(str(Path(self._repo.path) / "config"))
        try:
            config[f"branch.{branch}.remote"] = remote
            config[f"branch.{branch}.merge"] = ref
        except _GIT_ERRORS as exc:
            raise map_local_error(exc, f"set upstream of {branch}") from exc

    def upstream(self, branch: str) -> tuple[str, str] | None:
        """(remote, branch on the remote) that `branch` tracks, or None."""
        config = self._repo.config
        try:
            remote = str(config[f"branch.{branch}.remote"])
            merge = str(config[f"branch.{branch}.merge"])
        except _GIT_ERRORS:
            return None
        return remote, merge.removeprefix("refs/heads/")

    def fetch(self, *, remote: str = REMOTE, branch: str | None = None) -> str | None:
        """Fetch all branches of `remote`; return refs/remotes/<remote>/<branch>'s oid or None."""
        return transport.fetch(self._repo, remote, branch or self.branch(), self.token_file)

    def remote_branches(self, remote: str = REMOTE) -> list[str]:
        """Branch names of `remote` as last fetched (refs/remotes/<remote>/*), sorted."""
        prefix = f"refs/remotes/{remote}/"
        return sorted(
            name.removeprefix(prefix)
            for name in self._repo.references
            if name.startswith(prefix) and not name.endswith("/HEAD")
        )

    def push(self, *, remote: str = REMOTE, branch: str | None = None) -> None:
        """Push the branch; PushRejectedError when the remote has commits we lack."""
        transport.push(self._repo, remote, branch or self.branch(), self.token_file)

    def ls_remote(self, remote: str = REMOTE) -> dict[str, str]:
        """The refs a remote (name or URL) has now, without fetching: name -> oid."""
        return transport.ls_remote(self._repo, remote, self.token_file)

    def commits_between(self, base: str | None, tip: str, limit: int = 100) -> list[CommitInfo]:
        """Newest-first commits reachable from `tip` but not from `base` (at most `limit`)."""
        return list(itertools.islice(history.walk(self._repo, tip, hide=base), limit))
