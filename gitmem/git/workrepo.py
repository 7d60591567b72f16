"""The one reader of a code repository (a workspace's working copy, not the store): the work tree
a folder lies in, its `origin` URL, HEAD and ancestry, through the git binary (git/binary.py).

The repository is someone's working copy: it is only read, with git's environment variables for
another repository (a hook's GIT_DIR) removed. The git binary costs a process start where pygit2
costs its import, and a search marking suspect entries must not load pygit2. A folder with no
`.git` above it starts no process at all. In a long-lived process (the warm server) probecache
keeps the answers while git's inputs look the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gitmem import caller
from gitmem.errors import GitLayerError, InvalidInputError
from gitmem.git import probecache
from gitmem.git.binary import run
from gitmem.redaction import strip_credentials

_FOREIGN_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                "GIT_COMMON_DIR", "GIT_PREFIX")


@dataclass(frozen=True)
class CodeRepo:
    """A work tree and its `origin` URL (credentials taken out), when it has one."""

    top: Path
    origin: str | None


def code_env() -> dict[str, str]:
    """The environment for git on a code repository: none of the variables naming another one."""
    return {k: v for k, v in caller.environ().items() if k not in _FOREIGN_ENV}


def find_repository(path: Path) -> CodeRepo | None:
    """The work tree containing `path` (searching upwards) and its origin URL, or None (no
    repository, a bare one, or one git cannot read)."""
    top = toplevel(path)
    if top is None:
        return None
    url = origin_url(top)
    return CodeRepo(top, strip_credentials(url)[0] if url else None)


def repository_top(folder: Path) -> Path:
    """The work tree root of the repository `folder` is in; InvalidInputError when there is none."""
    if not folder.is_dir():
        raise InvalidInputError(f"no such folder: {folder}")
    top = toplevel(folder)
    if top is None:
        raise InvalidInputError(f"not a git repository: {folder}")
    return top


def toplevel(path: Path) -> Path | None:
    """The work tree holding `path`, or None (no repository, or git cannot read it)."""
    nearest = next((folder for folder in (path, *path.parents) if (folder / ".git").exists()), None)
    if nearest is None:
        return None  # not inside a work tree: no process started
    return probecache.answer(f"toplevel {path}", nearest, lambda: _ask_toplevel(path))


def _ask_toplevel(path: Path) -> Path | None:
    try:
        out = run(path, ["rev-parse", "--show-toplevel"], env=code_env(), check=False)
    except GitLayerError:
        return None
    text = out.decode("utf-8", "surrogateescape").strip()
    return Path(text).resolve() if text else None


def origin_url(repo: Path) -> str | None:
    """The configured URL of the repository's `origin` remote (as configured), or None."""
    return probecache.answer("origin", repo, lambda: _ask_origin_url(repo))


def _ask_origin_url(repo: Path) -> str | None:
    try:
        out = run(repo, ["config", "--get", "remote.origin.url"], env=code_env(), check=False)
    except GitLayerError:
        return None
    return out.decode("utf-8", "surrogateescape").strip() or None


def head(repo: Path) -> str | None:
    """HEAD's oid, or None for an unborn branch or a folder that is not a repository."""
    return rev_parse(repo, "HEAD")


def rev_parse(repo: Path, rev: str) -> str | None:
    """The full oid of the commit `rev` names, or None when there is none."""
    try:
        out = run(repo, ["rev-parse", "-q", "--verify", f"{rev}^{{commit}}"], env=code_env(),
                  check=False)
    except GitLayerError:
        return None
    value = out.decode().strip()
    return value or None


def is_ancestor(repo: Path, old: str, new: str) -> bool:
    """True when `old` exists and is reachable from `new` (false after a rebase or force-push)."""
    full = rev_parse(repo, old)
    if full is None:
        return False
    base = run(repo, ["merge-base", full, new], env=code_env(), check=False).decode().strip()
    return base == full
