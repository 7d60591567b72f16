"""Fixtures of the store tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gitmem.store import parsecache, warm


@pytest.fixture
def caching() -> Iterator[None]:
    """The caches a long-lived process keeps (parsed files, warm parts), on for one test."""
    parsecache.enable()
    warm.enable()
    try:
        yield
    finally:
        warm.disable()
        parsecache.disable()
