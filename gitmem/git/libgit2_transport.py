"""The fallback transport: fetch, push, clone and ls-remote over libgit2 (pygit2), for machines
without a git binary. It knows the store's token and ~/.ssh/id_ed25519 / id_rsa or the ssh agent,
but none of git's own configuration (credential helpers, ~/.ssh/config, insteadOf)."""

from __future__ import annotations

from pathlib import Path

import pygit2
from pygit2.enums import FetchPrune

from gitmem.errors import GitLayerError, SyncError
from gitmem.git.credentials import (
    GitCredentials,
    PushRejectedError,
    is_non_fast_forward,
    map_remote_error,
    redact,
    register_secret,
    strip_credentials,
)

_GIT_ERRORS = (pygit2.GitError, KeyError, ValueError, OSError)


def _remote(repo: pygit2.Repository, name: str) -> tuple[pygit2.Remote, str]:
    """Look up a remote and its URL; SyncError when it is not configured."""
    try:
        remote = repo.remotes[name]
    except _GIT_ERRORS as exc:
        raise SyncError(f"no git remote named {name!r} is configured in {repo.workdir}") from exc
    return remote, remote.url or ""


def fetch(repo: pygit2.Repository, remote: str, branch: str, token_file: Path | None) -> str | None:
    """Fetch all branches of `remote`; return refs/remotes/<remote>/<branch>'s oid or None."""
    rem, url = _remote(repo, remote)
    callbacks = GitCredentials(url, token_file)
    spec = f"+refs/heads/*:refs/remotes/{remote}/*"
    try:
        rem.fetch([spec], callbacks=callbacks, prune=FetchPrune.PRUNE)
    except (*_GIT_ERRORS, GitLayerError) as exc:
        raise map_remote_error(exc, "fetch", url) from exc
    ref = repo.references.get(f"refs/remotes/{remote}/{branch}")
    return None if ref is None else str(ref.peel(pygit2.Commit).id)


def push(repo: pygit2.Repository, remote: str, branch: str, token_file: Path | None) -> None:
    """Push the branch; PushRejectedError when the remote has commits we lack."""
    ref = f"refs/heads/{branch}"
    if repo.references.get(ref) is None:
        raise SyncError(f"nothing to push: branch {branch} has no commits")
    rem, url = _remote(repo, remote)
    callbacks = GitCredentials(url, token_file)
    try:
        rem.push([f"{ref}:{ref}"], callbacks=callbacks)
    except (*_GIT_ERRORS, GitLayerError) as exc:
        if not isinstance(exc, GitLayerError) and is_non_fast_forward(str(exc)):
            raise PushRejectedError(
                f"push to {redact(url)} rejected: remote branch {branch} has commits this"
                " store lacks; fetch and merge first"
            ) from exc
        raise map_remote_error(exc, "push", url) from exc
    for refname, why in callbacks.rejections:
        reason = redact(" ".join(why.split()))
        cls = PushRejectedError if is_non_fast_forward(why) else SyncError
        raise cls(f"push to {redact(url)} rejected for {refname}: {reason}")


def clone(url: str, root: Path, branch: str | None, token_file: Path | None) -> str:
    """Clone `url` into `root`; returns the URL without credentials (for the caller to store)."""
    clean, secret = strip_credentials(url)
    register_secret(secret)
    callbacks = GitCredentials(clean, token_file, secret)
    try:
        pygit2.clone_repository(clean, str(root), checkout_branch=branch, callbacks=callbacks)
    except (*_GIT_ERRORS, GitLayerError) as exc:
        raise map_remote_error(exc, "clone", url) from exc
    return clean


def ls_remote(repo: pygit2.Repository, remote: str, token_file: Path | None) -> dict[str, str]:
    """The remote's refs (name -> oid), asked over the network without fetching objects."""
    try:
        rem = repo.remotes[remote]
    except _GIT_ERRORS:
        rem = repo.remotes.create_anonymous(remote)
    url = rem.url or remote
    try:
        heads = rem.list_heads(callbacks=GitCredentials(url, token_file))
    except (*_GIT_ERRORS, GitLayerError) as exc:
        raise map_remote_error(exc, "ls-remote", url) from exc
    return {str(head.name): str(head.oid) for head in heads}
