"""Parsed memory files kept between calls in a long-lived process (the warm server).

Keyed by the file's whole text, read afresh every time: a file edited in any way, however soon
after the last read and whatever its timestamps say, is parsed again. Only the parsing is
saved. Callers get their own copy of the file's entry list and metadata, so changing what they
got never changes what the next caller sees (entries themselves are immutable).
Off unless `enable()` is called: a one-shot CLI process would only fill it.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable

from gitmem.format.entry import TopicFile

MAX_FILES = 50_000  # past this, the oldest are dropped first

_cache: dict[tuple[str, str], tuple[str, TopicFile]] | None = None
_guard = threading.Lock()


def enable() -> None:
    global _cache
    with _guard:
        if _cache is None:
            _cache = {}


def disable() -> None:
    global _cache
    with _guard:
        _cache = None


def parse(root: str, relpath: str, text: str, parser: Callable[[str, str], TopicFile]) -> TopicFile:
    """parser(text, relpath), or a copy of the file parsed from exactly this text before."""
    cache = _cache
    if cache is None:
        return parser(text, relpath)
    key = (root, relpath)
    known = cache.get(key)
    if known is not None and known[0] == text:
        return _copy(known[1])
    topic = parser(text, relpath)
    with _guard:
        cache.pop(key, None)
        cache[key] = (text, _copy(topic))
        while len(cache) > MAX_FILES:
            cache.pop(next(iter(cache)))
    return topic


def _copy(topic: TopicFile) -> TopicFile:
    return dataclasses.replace(topic, meta=dict(topic.meta), entries=list(topic.entries))
