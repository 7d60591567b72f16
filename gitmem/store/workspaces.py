"""Workspace keys: from the flag, an association of the folder, the repo's origin URL, or its name."""

from __future__ import annotations

from pathlib import Path

from gitmem.errors import InvalidInputError
from gitmem.store.paths import key_from_remote_url, sanitize_workspace_key, validate_workspace_key
from gitmem.store.registry import associated_key


def resolve_workspace_key(root: Path, explicit: str | None, cwd: Path) -> str:
    """Flag, else an association of cwd, else the cwd repo's origin URL, else its folder name."""
    if explicit is not None:
        return validate_workspace_key(explicit)
    key = associated_key(root, cwd)
    if key:
        return validate_workspace_key(key)
    from gitmem.git.discover import discover_repository

    found = discover_repository(cwd)
    if found is not None and found[0].resolve() != root.resolve():
        workdir, origin = found
        return key_from_remote_url(origin) if origin else sanitize_workspace_key(workdir.name)
    raise InvalidInputError(
        f"no workspace for {cwd}: pass --workspace KEY, run inside a git repository, or `gitmem associate KEY`"
    )
