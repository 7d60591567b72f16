"""Bringing the catalog up to a commit: re-read only the files that changed since it last looked."""

from __future__ import annotations

from collections.abc import Callable

from gitmem.format import layers as L
from gitmem.store.catalog import Catalog, FileReader

# changed_between(old, new): the paths that differ (old None: every file of new); raises when
# `old` is unknown, e.g. after history was rewritten.
ChangedBetween = Callable[[str | None, str], list[str]]


def catch_up(catalog: Catalog, head: str | None, changed_between: ChangedBetween,
             all_topic_files: Callable[[], list[str]], read: FileReader) -> list[str]:
    """Bring the catalog to `head`; returns the topic files that changed underneath it
    (pulls, plain-git commits), so a write can regenerate their layer indexes too."""
    seen = catalog.get_meta("head")
    changed: list[str] = []
    if catalog.is_empty() or (head is None and seen is not None):
        changed = all_topic_files()
        catalog.rebuild(changed, read)
    elif head is not None and seen != head:
        try:
            changed = changed_between(seen, head)
        except Exception:  # noqa: BLE001 - an unknown old head: history was rewritten
            changed = all_topic_files()
            catalog.rebuild(changed, read)
        else:
            catalog.refresh(changed, read)
    catalog.set_meta("head", head)
    return [p for p in changed if L.classify_path(p).kind == "topic"]
