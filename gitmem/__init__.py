"""gitmem: a git-native Markdown memory store for AI coding agents and the people who work with them.

The public API is loaded on first use, so `gitmem --help` and the git hooks start fast:

    from gitmem import Store, remember
    store = Store("~/.gitmem")
    store.init()
    remember(store, "Staging listens on 5433", "semantic", topic="staging")
"""

from __future__ import annotations

# Neither `typing` nor gitmem.errors is imported here: every CLI call imports this package
# first, and the warm server's client must start in a few milliseconds.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gitmem.errors import GitmemError
    from gitmem.format.entry import Entry, TopicFile
    from gitmem.store.store import Store, open_store
    from gitmem.sync.remote import init_store, remote_set
    from gitmem.sync.run import list_conflicts
    from gitmem.verbs.check import check_tree
    from gitmem.verbs.context import build_card
    from gitmem.verbs.decisions import decision
    from gitmem.verbs.entries import codebase, forget, remember, verify
    from gitmem.verbs.reads import list_entries, show
    from gitmem.verbs.search import reindex
    from gitmem.verbs.status import status
    from gitmem.verbs.workfiles import WorkingUpdate, record_state, record_working

__version__ = "0.1.0"

# Public name -> the module that defines it. `search` and `sync` are not here: those names are
# the subpackages gitmem.search and gitmem.sync (use gitmem.verbs.search / gitmem.sync.run).
_LAZY = {
    "GitmemError": "errors",
    "Entry": "format.entry", "TopicFile": "format.entry",
    "Store": "store.store", "open_store": "store.store",
    "init_store": "sync.remote", "remote_set": "sync.remote",
    "list_conflicts": "sync.run",
    "remember": "verbs.entries", "forget": "verbs.entries", "verify": "verbs.entries",
    "codebase": "verbs.entries", "decision": "verbs.decisions",
    "record_state": "verbs.workfiles", "record_working": "verbs.workfiles",
    "WorkingUpdate": "verbs.workfiles",
    "show": "verbs.reads", "list_entries": "verbs.reads", "status": "verbs.status",
    "reindex": "verbs.search",
    "build_card": "verbs.context", "check_tree": "verbs.check",
}
__all__ = [
    "GitmemError", "__version__",
    "Entry",
    "Store",
    "TopicFile",
    "WorkingUpdate",
    "build_card",
    "check_tree",
    "codebase",
    "decision",
    "forget",
    "init_store",
    "list_conflicts",
    "list_entries",
    "open_store",
    "record_state",
    "record_working",
    "reindex",
    "remember",
    "remote_set",
    "show",
    "status",
    "verify",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f"gitmem.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'gitmem' has no attribute {name!r}")
