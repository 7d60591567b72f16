"""`sourcePaths`: where in the workspace repository a document comes from (references only:
gitmem never reads, writes or requires them)."""

from __future__ import annotations

from pathlib import Path

from gitmem import caller
from gitmem.errors import InvalidInputError


def workspace_folder(cwd: Path, store_root: Path) -> Path:
    """The repository holding `cwd` (the folder with `.git`; the store's own repository does
    not count), else `cwd` itself."""
    here = cwd.absolute()
    store = store_root.absolute()
    for candidate in (here, *here.parents):
        if candidate != store and (candidate / ".git").exists():
            return candidate
    return here


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _in_store_documents(path: Path, store_root: Path) -> bool:
    """True for a path inside any documents/ folder of the store (managed copies, indexes)."""
    root = store_root.resolve()
    if not _inside(path, root):
        return False
    parts = path.relative_to(root).parts
    return (len(parts) >= 2 and parts[0] == "global" and parts[1] == "documents") or \
        (len(parts) >= 3 and parts[0] == "workspaces" and parts[2] == "documents") or \
        (len(parts) >= 1 and parts[0] == "documents")


def check_source_paths(raw: list[str] | tuple[str, ...], cwd: Path, store_root: Path) -> tuple[str, ...]:
    """Each path as a repository-relative POSIX path; refused when it leaves the repository or
    points into the store's documents/ folders. Relative paths are read from `cwd`."""
    repo = workspace_folder(cwd, store_root).resolve()
    found: list[str] = []
    for given in raw:
        text = given.strip()
        if not text or "\0" in text:
            raise InvalidInputError(f"source path {given!r} is empty or not a path")
        candidate = Path(caller.expanduser(text))
        full = (candidate if candidate.is_absolute() else cwd.absolute() / candidate).resolve()
        if not _inside(full, repo):
            raise InvalidInputError(
                f"source path {given!r} is outside the workspace repository {repo}; nothing changed")
        if _in_store_documents(full, store_root):
            raise InvalidInputError(
                f"source path {given!r} points into the store's documents/ folder; nothing changed")
        relative = full.relative_to(repo).as_posix()
        if relative == ".":
            relative = ""
        if relative and relative not in found:
            found.append(relative)
        elif not relative:
            raise InvalidInputError(f"source path {given!r} is the repository itself, not a file in it")
    return tuple(found)
