"""The repository's own settings (.git/config), mixed into GitRepo: read, set and unset one
value without the user's global or the system's levels."""

from __future__ import annotations

import contextlib
import os

import pygit2

from gitmem.git.credentials import map_local_error

_GIT_ERRORS = (pygit2.GitError, KeyError, ValueError, OSError)


class ConfigOps:
    """Repo-local config, mixed into GitRepo (which provides `_repo`)."""

    _repo: pygit2.Repository

    def _local_config(self) -> pygit2.Config:
        """The repository's own .git/config, without global or system levels."""
        return pygit2.Config(os.path.join(self._repo.path, "config"))

    def set_config(self, key: str, value: str) -> None:
        """Set a repo-local config value."""
        try:
            self._local_config()[key] = value
        except _GIT_ERRORS as exc:
            raise map_local_error(exc, f"git config {key}") from exc

    def get_config(self, key: str) -> str | None:
        """A repo-local config value, or None when unset."""
        try:
            return str(self._local_config()[key])
        except KeyError:
            return None
        except _GIT_ERRORS as exc:
            raise map_local_error(exc, f"git config {key}") from exc

    def unset_config(self, key: str) -> None:
        """Remove a repo-local config value (no error when unset)."""
        with contextlib.suppress(KeyError):
            del self._local_config()[key]
