"""`gitmem system`: regenerate SYSTEM.md and commit it when it changed."""

from __future__ import annotations

from gitmem.store.store import Store


def write_system_doc(store: Store) -> bool:
    """Regenerate SYSTEM.md; True when it changed (and was committed)."""
    with store.writing("system") as txn:
        txn.message = "system: regenerate SYSTEM.md"
        return store.write_file(txn, "SYSTEM.md", store.render_system_doc())
