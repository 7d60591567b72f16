"""Search over the store and its active spaces: each space's own index, one fused ranking."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gitmem.eventlog import log_event
from gitmem.spaces.fusion import fuse
from gitmem.spaces.mounts import reading_targets

if TYPE_CHECKING:
    from gitmem.store.store import Store

Run = Callable[["Store"], list[dict[str, Any]]]


def search_spaces(home: Store, run: Run, limit: int, *, space: str | None = None) -> list[dict[str, Any]]:
    """`run` (one store's ranked hits) over every store a read covers, fused into one ranking.

    A mounted space that cannot be opened is left out and logged; it never fails the search.
    """
    targets, problems = reading_targets(home, space)
    for name, reason in problems:
        log_event(home.root, {"event": "space-unavailable", "space": name, "reason": reason})
    rankings = []
    for name, store in targets:
        hits = run(store)
        for hit in hits:
            hit["root"] = str(store.root)
        rankings.append((name, store is home, hits))
    return fuse(rankings, limit)
