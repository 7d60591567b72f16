"""The history of a workspace's own code repository (not the store), for code-bound freshness.

One `git log --since` through the git binary lists the commits after a day with the files each
touched. The repository is someone's working copy: it is only read, with git's environment
variables for another repository (a hook's GIT_DIR) removed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from gitmem import caller
from gitmem.errors import GitLayerError
from gitmem.git import probecache
from gitmem.git.binary import run

_FOREIGN_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                "GIT_COMMON_DIR", "GIT_PREFIX")
_RECORD = "\x1e"


@dataclass(frozen=True)
class CodeCommit:
    """A commit of the workspace repository and the files it touched."""

    oid: str
    time: int  # committer time, epoch seconds
    files: tuple[str, ...]


def _env() -> dict[str, str]:
    return {k: v for k, v in caller.environ().items() if k not in _FOREIGN_ENV}


def head(repo: Path) -> str | None:
    """HEAD's oid, or None for an unborn branch or a folder that is not a repository."""
    try:
        out = run(repo, ["rev-parse", "-q", "--verify", "HEAD^{commit}"], env=_env(), check=False)
    except GitLayerError:
        return None
    value = out.decode().strip()
    return value or None


def toplevel(path: Path) -> Path | None:
    """The work tree holding `path`, or None (no repository, or git cannot read it)."""
    nearest = next((folder for folder in (path, *path.parents) if (folder / ".git").exists()), None)
    if nearest is None:
        return None  # not inside a work tree: no process started
    return probecache.answer(f"toplevel {path}", nearest, lambda: _ask_toplevel(path))


def _ask_toplevel(path: Path) -> Path | None:
    try:
        out = run(path, ["rev-parse", "--show-toplevel"], env=_env(), check=False)
    except GitLayerError:
        return None
    text = out.decode("utf-8", "surrogateescape").strip()
    return Path(text).resolve() if text else None


def origin_url(repo: Path) -> str | None:
    """The configured URL of the repository's `origin` remote, or None."""
    return probecache.answer("origin", repo, lambda: _ask_origin_url(repo))


def _ask_origin_url(repo: Path) -> str | None:
    try:
        out = run(repo, ["config", "--get", "remote.origin.url"], env=_env(), check=False)
    except GitLayerError:
        return None
    return out.decode("utf-8", "surrogateescape").strip() or None


def commits_since(repo: Path, since: date) -> list[CodeCommit]:
    """Commits reachable from HEAD made on or after `since`, newest first, with their files
    (renames listed as the old and the new path)."""
    args = ["log", f"--since={since.isoformat()} 00:00:00", "--no-renames", "--name-only",
            f"--format={_RECORD}%H %ct", "HEAD", "--"]
    out = run(repo, args, env=_env()).decode("utf-8", "surrogateescape")
    commits = []
    for record in out.split(_RECORD):
        lines = [line for line in record.splitlines() if line.strip()]
        if not lines:
            continue
        oid, _, stamp = lines[0].partition(" ")
        commits.append(CodeCommit(oid, int(stamp), tuple(lines[1:])))
    return commits
