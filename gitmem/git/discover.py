"""Finding the git work tree a folder lies in (for workspace keys)."""

from __future__ import annotations

from pathlib import Path

import pygit2

from gitmem.git.credentials import strip_credentials

_GIT_ERRORS = (pygit2.GitError, KeyError, ValueError, OSError)
def discover_repository(path: Path) -> tuple[Path, str | None] | None:
    """The work tree containing `path` (searching upwards) and its `origin` URL, without secrets."""
    try:  # opening searches upwards; pygit2.discover_repository() (1.21) releases None once per
        repo = pygit2.Repository(str(path))  # miss, and a long-lived process then aborts
    except _GIT_ERRORS:
        return None
    if repo.is_bare or repo.workdir is None:
        return None
    try:
        url = repo.remotes["origin"].url
    except (KeyError, ValueError, pygit2.GitError):
        url = None
    return Path(repo.workdir).resolve(), strip_credentials(url)[0] if url else None
