"""gitmem: a git-native Markdown memory store for AI coding agents and the people who work with them."""

from __future__ import annotations

from .entry import Entry, TopicFile
from .errors import GitmemError

__all__ = ["Entry", "GitmemError", "TopicFile", "__version__"]
__version__ = "0.1.0"
