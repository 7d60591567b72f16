"""Making a store: its repository, its first files and their first commit (`Store.init`)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from gitmem.format import layers as L
from gitmem.fsio import read_text
from gitmem.store import generated
from gitmem.store.registry import load_registry, save_registry
from gitmem.store.txn import WriteTxn


class Creating(Protocol):
    """What of a Store making itself is used here (store.py imports this module)."""

    root: Path

    def wire_git(self, repo: Any) -> None: ...
    def exists(self) -> bool: ...
    def locked(self) -> AbstractContextManager[None]: ...
    def path(self, relpath: str) -> Path: ...
    def write_file(self, txn: WriteTxn, relpath: str, text: str) -> bool: ...
    def ensure_scope(self, txn: WriteTxn, scope: str) -> None: ...
    def catch_up_catalog(self, *, clean: bool = False) -> list[str]: ...
    def render_system_doc(self) -> str: ...
    def finish(self, txn: WriteTxn) -> str | None: ...


def create(store: Creating, branch: str) -> bool:
    """Create the store at `store.root` (or adopt an existing repository there); False when a
    store was there already. A store cloned from another machine keeps its files."""
    from gitmem.git.repo import GitRepo, check_branch_name
    from gitmem.store.system_doc import system_doc_stale

    check_branch_name(branch)
    existed = store.exists()
    store.root.mkdir(parents=True, exist_ok=True)
    repo = GitRepo.init(store.root, branch=branch, token_file=store.root / "state" / "git-token")
    store.wire_git(repo)
    with store.locked():
        txn = WriteTxn("init", message="init: gitmem store")
        for relpath, wanted in ((".gitignore", generated.GITIGNORE),
                                (".gitattributes", generated.GITATTRIBUTES)):
            current = read_text(store.path(relpath)) if store.path(relpath).exists() else None
            text = generated.with_missing_lines(current, wanted)
            if text is not None:
                store.write_file(txn, relpath, text)
        if not (store.root / "memory.json").exists():
            registry = load_registry(store.root)
            registry.git["branch"] = repo.branch() or branch
            save_registry(store.root, registry)
            txn.note("memory.json")
        store.ensure_scope(txn, L.GLOBAL)
        store.catch_up_catalog()
        # A clone keeps its SYSTEM.md unless it is outdated.
        if system_doc_stale(store.root):
            store.write_file(txn, "SYSTEM.md", store.render_system_doc())
        store.finish(txn)
    return not existed
