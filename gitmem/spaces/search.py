"""Search over the store and its active spaces: each space's own index, one fused ranking.

Rank fusion needs from each space only the ranks that can reach the fused top `limit`: with n
spaces each holding enough hits, ranks 1..ceil(limit/n). So every space is asked for that many
first; only when a space runs out of hits are the others asked for the full `limit`. The fused
list is the same as with every space asked for `limit` (tests/spaces/test_fusion.py), and each
space reads and snippets a third of the hits (the part of a search that grows with `limit`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gitmem.eventlog import log_event
from gitmem.spaces.folder import cite
from gitmem.spaces.fusion import DEFAULT_METHOD, fuse
from gitmem.spaces.mounts import reading_targets

if TYPE_CHECKING:
    from gitmem.store.store import Store

Run = Callable[["Store", int], list[dict[str, Any]]]  # one store's ranked hits, at most N


def ranked(stores: list[tuple[str, bool, Store]], run: Run, limit: int,
           method: str = DEFAULT_METHOD) -> list[dict[str, Any]]:
    """Fused hits of these stores; with rank fusion, each is asked for only what can count."""
    if not stores:
        return []  # every space switched off, the store itself too: nothing is read
    first = limit if method != "rrf" or len(stores) == 1 else math.ceil(limit / len(stores))
    hits = [run(store, first) for _name, _home, store in stores]
    if first < limit and any(len(h) < first for h in hits):  # one ran out: the rest may reach deeper
        hits = [run(store, limit) if len(h) == first else h
                for (_name, _home, store), h in zip(stores, hits, strict=True)]
    for (_name, _home, store), found in zip(stores, hits, strict=True):
        for hit in found:
            hit["root"] = str(store.root)
            cite(store, hit, str(hit.get("source") or ""))
    return fuse([(name, home, found) for (name, home, _store), found in zip(stores, hits, strict=True)],
                limit, method)


def search_spaces(home: Store, run: Run, limit: int, *, space: str | None = None) -> list[dict[str, Any]]:
    """`run` (one store's ranked hits) over every store a read covers, fused into one ranking.

    A mounted space that cannot be opened is left out and logged; it never fails the search.
    """
    targets, problems = reading_targets(home, space)
    for name, reason in problems:
        log_event(home.root, {"event": "space-unavailable", "space": name, "reason": reason})
    return ranked([(name, store is home, store) for name, store in targets], run, limit)
