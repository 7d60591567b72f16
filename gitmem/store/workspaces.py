"""Workspace keys: from the flag, an association of the folder, the repo's origin URL, or its name."""

from __future__ import annotations

from pathlib import Path

from gitmem.errors import InvalidInputError
from gitmem.git.workrepo import CodeRepo, find_repository, toplevel
from gitmem.store.paths import key_from_remote_url, sanitize_workspace_key, validate_workspace_key
from gitmem.store.registry import associated_key


def resolve_workspace_key(root: Path, explicit: str | None, cwd: Path) -> str:
    """Flag, else an association of cwd, else the cwd repo's origin URL, else its folder name."""
    if explicit is not None:
        return validate_workspace_key(explicit)
    key = associated_key(root, cwd)
    if key:
        return validate_workspace_key(key)
    found = find_repository(cwd)
    if found is not None and found.top != root.resolve():
        return repository_key(found)
    raise InvalidInputError(
        f"no workspace for {cwd}: pass --workspace KEY, run inside a git repository, or `gitmem associate KEY`"
    )


def repository_key(found: CodeRepo) -> str:
    """The workspace key of a code repository: from its origin URL, else its folder's name."""
    return key_from_remote_url(found.origin) if found.origin else sanitize_workspace_key(found.top.name)


def project_folder(folder: Path) -> Path:
    """The project a folder belongs to, as agents name it: its repository's main work tree (a
    linked worktree's too, so every worktree of a repository is one project), else itself."""
    folder = folder.resolve()
    top = toplevel(folder) or folder
    marker = top / ".git"
    if not marker.is_file():
        return top
    try:
        text = marker.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return top
    if not text.startswith("gitdir:"):
        return top
    gitdir = Path(text[len("gitdir:"):].strip())
    gitdir = gitdir if gitdir.is_absolute() else (top / gitdir).resolve()
    if gitdir.parent.name == "worktrees" and gitdir.parent.parent.name == ".git":
        return gitdir.parent.parent.parent  # <main>/.git/worktrees/<name>
    return top  # a submodule, say: a project of its own
