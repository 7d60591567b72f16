"""Network operations of the git layer: fetch, push, clone and ls-remote.

They go through the git binary (gitnet.py), so the user's credential helpers, ssh configuration
and URL rewrites apply exactly as for `git push`. libgit2 (libgit2_transport.py) is the fallback
only where no git binary is installed, or when GITMEM_GIT_TRANSPORT=pygit2 asks for it; which one
is used is decided once per process. Local work (commits, reads, merges) stays on pygit2.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pygit2

from gitmem.errors import SyncError
from gitmem.git import gitnet, libgit2_transport
from gitmem.git.credentials import (
    PushRejectedError,
    is_non_fast_forward,
    map_git_error,
    redact,
    register_secret,
    strip_credentials,
    token_source,
)
from gitmem.git.gitnet import Token

__all__ = ["REMOTE", "PushRejectedError", "clone", "fetch", "ls_remote", "push"]

_GIT_ERRORS = (pygit2.GitError, KeyError, ValueError, OSError)

REMOTE = "origin"  # the one remote a store syncs with (its name in the store's .git/config)


def _remote(repo: pygit2.Repository, name: str) -> tuple[Path, str]:
    """The folder to run git in and the remote's URL; SyncError when it is not configured."""
    try:
        url = repo.remotes[name].url or ""
    except _GIT_ERRORS as exc:
        raise SyncError(f"no git remote named {name!r} is configured in {repo.workdir}") from exc
    return Path(repo.workdir or repo.path), url


def _token_host(cwd: Path, remote: str, token: Token | None, *, push: bool = False) -> str | None:
    """`protocol://host` the store's token may be given to: the one git will really talk to."""
    if token is None:
        return None
    return gitnet.origin_of(gitnet.effective_url(cwd, remote, push=push))


def fetch(repo: pygit2.Repository, remote: str, branch: str, token_file: Path | None) -> str | None:
    """Fetch all branches of `remote`; return refs/remotes/<remote>/<branch>'s oid or None."""
    if not gitnet.use_git_binary():
        return libgit2_transport.fetch(repo, remote, branch, token_file)
    cwd, url = _remote(repo, remote)
    token = token_source(token_file)
    spec = f"+refs/heads/*:refs/remotes/{remote}/*"
    done = gitnet.run(cwd, ["fetch", "--no-tags", "--prune", remote, spec], action="fetch",
                      url=url, token=token, host=_token_host(cwd, remote, token))
    if done.returncode != 0:
        raise map_git_error(done.stderr, "fetch", url)
    ref = repo.references.get(f"refs/remotes/{remote}/{branch}")
    return None if ref is None else str(ref.peel(pygit2.Commit).id)


def push(repo: pygit2.Repository, remote: str, branch: str, token_file: Path | None) -> None:
    """Push the branch; PushRejectedError when the remote has commits we lack."""
    if not gitnet.use_git_binary():
        libgit2_transport.push(repo, remote, branch, token_file)
        return
    ref = f"refs/heads/{branch}"
    if repo.references.get(ref) is None:
        raise SyncError(f"nothing to push: branch {branch} has no commits")
    cwd, url = _remote(repo, remote)
    token = token_source(token_file)
    done = gitnet.run(cwd, ["push", "--porcelain", remote, f"{ref}:{ref}"], action="push",
                      url=url, token=token, host=_token_host(cwd, remote, token, push=True))
    rejected = _rejection(done.stdout)
    if rejected is not None:
        reason = redact(rejected)
        if is_non_fast_forward(rejected):
            raise PushRejectedError(
                f"push to {redact(url)} rejected: remote branch {branch} has commits this"
                f" store lacks; fetch and merge first ({reason})"
            )
        raise SyncError(f"push to {redact(url)} rejected for {ref}: {reason}")
    if done.returncode != 0:
        raise map_git_error(done.stderr, "push", url)


def _rejection(porcelain: str) -> str | None:
    """The summary of a ref the remote refused, from `git push --porcelain` output."""
    for line in porcelain.splitlines():
        flag, _, rest = line.partition("\t")
        if flag == "!":
            return rest.partition("\t")[2] or rest
    return None


def clone(url: str, root: Path, branch: str | None, token_file: Path | None) -> str:
    """Clone `url` into `root`; returns the URL without credentials (for the caller to store)."""
    clean, secret = strip_credentials(url)
    register_secret(secret)
    if not gitnet.use_git_binary():
        return libgit2_transport.clone(url, root, branch, token_file)
    root = Path(root).absolute()
    root.parent.mkdir(parents=True, exist_ok=True)
    args = ["clone", "--origin", REMOTE, *(["--branch", branch] if branch else []),
            "--", clean, str(root)]
    with _one_time_token(secret) as once:
        token = once or token_source(token_file)
        host = _token_host(root.parent, clean, token)
        done = gitnet.run(root.parent, args, action="clone", url=clean, token=token, host=host)
    if done.returncode != 0:
        raise map_git_error(done.stderr, "clone", clean)
    return clean


def ls_remote(repo: pygit2.Repository, remote: str, token_file: Path | None) -> dict[str, str]:
    """The refs (name -> oid) of a remote name or URL, asked without fetching any object."""
    if not gitnet.use_git_binary():
        return libgit2_transport.ls_remote(repo, remote, token_file)
    cwd = Path(repo.workdir or repo.path)
    url = remote
    with contextlib.suppress(*_GIT_ERRORS):
        url = repo.remotes[remote].url or remote
    clean, secret = strip_credentials(url)
    target = remote if url != remote else clean
    with _one_time_token(secret) as once:
        token = once or token_source(token_file)
        done = gitnet.run(cwd, ["ls-remote", target], action="ls-remote", url=clean, token=token,
                          host=_token_host(cwd, target, token))
    if done.returncode != 0:
        raise map_git_error(done.stderr, "ls-remote", clean)
    refs = {}
    for line in done.stdout.splitlines():
        oid, _, name = line.partition("\t")
        if name:
            refs[name] = oid
    return refs


@contextlib.contextmanager
def _one_time_token(secret: str | None) -> Iterator[Token | None]:
    """A token taken out of a URL, in a private temporary file for the helper; None without one."""
    if not secret:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="gitmem-cred-") as folder:
        path = Path(folder) / "token"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(secret + "\n")
        yield Token("file", path)
