"""gitmem: a git-native Markdown memory store for AI coding agents and the people who work with them.

The public API is loaded on first use, so `gitmem --help` and the git hooks start fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import GitmemError

if TYPE_CHECKING:
    from .entry import Entry, TopicFile
    from .store import Store

__all__ = ["Entry", "GitmemError", "Store", "TopicFile", "__version__"]
__version__ = "0.1.0"

_LAZY = {"Entry": "entry", "TopicFile": "entry", "Store": "store"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'gitmem' has no attribute {name!r}")
