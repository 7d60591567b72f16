"""Workspace keys: resolution from flag / association / origin URL / folder, and registration."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import InvalidInputError
from .paths import key_from_remote_url, sanitize_workspace_key, validate_workspace_key
from .registry import associated_key, load_associations, save_association

if TYPE_CHECKING:
    from .store import Store, WriteTxn


@dataclass(frozen=True)
class WorkspaceInfo:
    key: str
    title: str
    paths: list[str]
    registered: bool
    exists: bool


def resolve_workspace_key(store: Store, explicit: str | None, cwd: Path) -> str:
    """Flag, else an association of cwd, else the cwd repo's origin URL, else its folder name."""
    if explicit:
        return validate_workspace_key(explicit)
    key = associated_key(store.root, cwd)
    if key:
        return validate_workspace_key(key)
    from .git import discover_repository

    found = discover_repository(cwd)
    if found is not None and found[0].resolve() != store.root.resolve():
        workdir, origin = found
        return key_from_remote_url(origin) if origin else sanitize_workspace_key(workdir.name)
    raise InvalidInputError(
        f"no workspace for {cwd}: pass --workspace KEY, run inside a git repository, or `gitmem associate KEY`"
    )


def register_workspace(store: Store, txn: WriteTxn, key: str, title: str | None = None) -> None:
    """Add the workspace to memory.json and create its folder on first use."""
    registry = store.registry
    record = registry.workspaces.get(key)
    wanted_title = title or (record or {}).get("title") or key
    if record is None or record.get("title") != wanted_title:
        registry.workspaces[key] = {**(record or {}), "title": wanted_title}
        store.save_registry(txn, registry)
    store.ensure_scope(txn, key)


def associate(store: Store, key: str, title: str | None, folder: Path) -> str:
    """Register a workspace and associate a local folder with it (the folder stays machine-local)."""
    key = validate_workspace_key(key)
    if not folder.is_dir():
        raise InvalidInputError(f"--path {folder} is not a folder")
    with store.writing("associate") as txn:
        txn.message = f"associate: workspace {key}"
        register_workspace(store, txn, key, title)
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
