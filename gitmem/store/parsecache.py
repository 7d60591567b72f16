"""What a long-lived process (the warm server) keeps about memory files between calls.

- Parsed files, keyed by the file's whole text, read afresh every time: a file edited in any
  way, however soon after the last read and whatever its timestamps say, is parsed again. Only
  the parsing is saved. Callers get their own copy of the entry list and metadata, so changing
  what they got never changes what the next caller sees (entries themselves are immutable).
- The result of scanning a file for conflict markers, keyed by what lstat says of it (inode,
  size, modification and change times: gitmem/stamps.py), as git's index trusts an unchanged stat.
  A file changed less than stamps.SETTLE_NS ago is scanned again on every call, so an edit made in the
  same clock tick as the scan is never missed (the change time cannot be set by hand).
Off unless `enable()` is called: a one-shot CLI process would only fill it.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from gitmem.format.entry import TopicFile
from gitmem.stamps import Stamp, file_stamp, settled

MAX_FILES = 50_000  # past this, the oldest are dropped first

T = TypeVar("T")
_cache: dict[tuple[str, str], tuple[str, TopicFile]] | None = None
_scans: dict[tuple[str, str], tuple[Stamp, Any]] | None = None
_derived: dict[tuple[str, str], tuple[str, object, Any]] = {}
_guard = threading.Lock()


def enable() -> None:
    global _cache, _scans
    with _guard:
        if _cache is None:
            _cache, _scans = {}, {}


def disable() -> None:
    global _cache, _scans
    with _guard:
        _cache = _scans = None
        _derived.clear()


def derived(root: str, relpath: str, key: object, build: Callable[[], T]) -> T:
    """build(), or what it returned for the text parse() last read of this file under an equal
    `key` (e.g. the day, for values that age). Call it right after reading the file."""
    cache = _cache
    known = cache.get((root, relpath)) if cache is not None else None
    if known is None:
        return build()
    text = known[0]
    earlier = _derived.get((root, relpath))
    if earlier is not None and earlier[0] is text and earlier[1] == key:
        return earlier[2]
    value = build()
    with _guard:
        _derived[(root, relpath)] = (text, key, value)
    return value


def by_stat(root: str, relpath: str, scan: Callable[[], T]) -> T:
    """scan(), or what it returned before for this file when lstat shows the same settled file."""
    scans = _scans
    if scans is None:
        return scan()
    signature = file_stamp(os.path.join(root, relpath))
    if signature is None:
        return scan()
    key = (root, relpath)
    known = scans.get(key)
    if known is not None and known[0] == signature:
        return known[1]
    result = scan()
    if settled(signature):
        with _guard:
            scans[key] = (signature, result)
            while len(scans) > MAX_FILES:
                scans.pop(next(iter(scans)))
    return result


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
