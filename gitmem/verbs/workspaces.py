"""Workspace verbs: `gitmem associate` and `gitmem workspaces`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gitmem.errors import InvalidInputError
from gitmem.store.paths import validate_workspace_key
from gitmem.store.registry import load_associations, save_association
from gitmem.store.store import Store


@dataclass(frozen=True)
class WorkspaceInfo:
    key: str
    title: str
    paths: list[str]
    registered: bool
    exists: bool


def associate(store: Store, key: str, title: str | None, folder: Path) -> str:
    """Register a workspace and associate a local folder with it (the folder stays machine-local)."""
    key = validate_workspace_key(key)
    if "\x00" in str(folder) or "\x00" in (title or ""):
        raise InvalidInputError("--path and --title must not hold a NUL character")
    if not folder.is_dir():
        raise InvalidInputError(f"--path {folder} is not a folder")
    with store.writing("associate") as txn:
        txn.message = f"associate: workspace {key}"
        store.register_workspace(txn, key, title)
        save_association(store.root, folder, key)
    return key


def list_workspaces(store: Store) -> list[WorkspaceInfo]:
    """Registered workspaces plus any folder under workspaces/, with this machine's paths."""
    paths: dict[str, list[str]] = {}
    for folder, key in sorted(load_associations(store.root).items()):
        paths.setdefault(key, []).append(folder)
    registered = store.registry.workspaces
    keys = sorted(set(registered) | set(store.scope_keys()[1:]))
    return [
        WorkspaceInfo(
            key=key,
            title=str((registered.get(key) or {}).get("title") or key),
            paths=paths.get(key, []),
            registered=key in registered,
            exists=(store.root / "workspaces" / key).is_dir(),
        )
        for key in keys
    ]
