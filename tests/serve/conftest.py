"""Fixtures of the warm-server tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmem.store.store import Store
from servers import QUIET, start_server, stop


@pytest.fixture
def served(store: Store) -> Iterator[Path]:
    """The store's root with `gitmem serve` running for it (nothing scheduled)."""
    proc = start_server(store.root, *QUIET)
    try:
        yield store.root
    finally:
        stop(proc)
