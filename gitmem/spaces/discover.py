"""`gitmem space discover`: gitmem stores on this machine that are not mounted yet.

A gitmem store is a folder holding memory.json and a git repository. Discovery looks in the
folders it is given, or in the usual places: the default store (~/.gitmem), folders beside this
store, the home folder, and the folders people keep work in (~/work, ~/src, ~/code, ~/projects,
~/dev), each two levels deep. It never follows symbolic links, never enters a store it found (a
store does not hold another) nor a hidden folder other than the ones named, and reads only the
memory.json of what it finds. Found stores are listed with the name they would be mounted
under; `--add` mounts each, switched off, so that nothing starts reading or routing to it until
someone activates it.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem import caller
from gitmem.errors import GitmemError
from gitmem.fsio import read_regular_file
from gitmem.spaces.mounts import HOME, check_name, home_name, load_mounts

if TYPE_CHECKING:
    from gitmem.store.store import Store

DEPTH = 2
WORK_FOLDERS = ("work", "src", "code", "projects", "dev")
SKIPPED = frozenset({"node_modules", "__pycache__", ".git", "venv", ".venv", "site-packages"})


@dataclass(frozen=True)
class Found:
    """A store discovery found: where, what it calls itself, the name it would be mounted as."""

    path: str
    name: str
    description: str
    mounted: bool = False

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def usual_places(home: Store) -> list[Path]:
    """Where stores usually live on a machine (the ones that exist)."""
    user = Path(caller.home())
    places = [user / ".gitmem", home.root.parent, user, *(user / f for f in WORK_FOLDERS)]
    return [p for p in dict.fromkeys(places) if p.is_dir()]


def is_store(folder: Path) -> bool:
    return (folder / "memory.json").is_file() and (folder / ".git").exists()


def _walk(folder: Path, depth: int) -> list[Path]:
    """Stores at or below `folder`, `depth` levels down at most."""
    try:
        if folder.is_symlink() or not folder.is_dir():
            return []
        if is_store(folder):
            return [folder]
        if depth == 0:
            return []
        children = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:  # a folder this user cannot read holds nothing to mount
        return []
    found: list[Path] = []
    for child in children:
        if (child.name.startswith(".") and child.name != ".gitmem") or child.name in SKIPPED:
            continue
        if child.is_dir(follow_symlinks=False):
            found += _walk(Path(child.path), depth - 1)
    return found


def _identity(folder: Path) -> tuple[str, str]:
    """(the space name a store gives itself, its description), from its memory.json alone."""
    try:
        data = json.loads(read_regular_file(folder / "memory.json").decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return "", ""
    record = data.get("spaces") if isinstance(data, dict) else None
    record = record if isinstance(record, dict) else {}
    return str(record.get("name") or ""), " ".join(str(record.get("description") or "").split())


def _mount_name(wanted: str, folder: Path, taken: set[str]) -> str:
    """The store's own name when it is a free, valid space name; else its folder's, numbered."""
    for candidate in (wanted, folder.name.lower().lstrip(".")):
        cleaned = "".join(c if c.isalnum() or c == "-" else "-" for c in candidate.lower()).strip("-")[:60]
        if not cleaned or cleaned == HOME:
            continue
        try:
            check_name(cleaned)
        except GitmemError:
            continue
        name, n = cleaned, 2
        while name in taken:
            name, n = f"{cleaned}-{n}", n + 1
        return name
    name, n = "space", 1
    while name in taken:
        n += 1
        name = f"space-{n}"
    return name


def discover(home: Store, folders: list[str] | None = None) -> list[Found]:
    """Stores under `folders` (default: the usual places), this store excluded; the mounted
    ones are listed as such, under the name they are mounted as."""
    home.require()
    roots = [Path(caller.absolute(caller.expanduser(f))) for f in folders] if folders else usual_places(home)
    mounts = load_mounts(home.root)
    by_path = {Path(m.path).resolve(): m.name for m in mounts.values()}
    taken = {*mounts, HOME, home_name(home)}
    own = home.root.resolve()
    seen: set[Path] = set()
    found: list[Found] = []
    for root in roots:
        for folder in _walk(root, DEPTH):
            real = folder.resolve()
            if real == own or real in seen:
                continue
            seen.add(real)
            wanted, description = _identity(folder)
            if real in by_path:
                found.append(Found(str(real), by_path[real], description, mounted=True))
                continue
            name = _mount_name(wanted, folder, taken)
            taken.add(name)
            found.append(Found(str(real), name, description))
    return found
