"""`suspect` marks on search hits, shown entries and the context card: entries whose code changed
in their workspace's repository after they were verified (see gitmem/provenance/codefresh.py).
The search engine stays store-agnostic; the marks are added here, after ranking."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem.format import layers as L
from gitmem.format.markdown import entry_at
from gitmem.fsio import read_regular_file
from gitmem.provenance.codefresh import Bound, CodeWatch
from gitmem.verbs.base import record_ref

if TYPE_CHECKING:
    from gitmem.store.store import Store

CARD_LIMIT = 10


def entry_fields(path: Path, line: int) -> dict[str, str]:
    """The fields of the entry whose heading is at `line` (1-based), read as the store reads
    them (gitmem.format.markdown.entry_at); {} when the file has no entry there."""
    try:  # a regular file only: never a read that blocks on a FIFO named like a topic
        text = read_regular_file(path).decode("utf-8", "replace")
    except OSError:
        return {}
    entry = entry_at(text, line)
    return dict(entry.fields) if entry is not None else {}


def _mark(home: Store, records: list[dict[str, Any]], fields_of: Any) -> None:
    watch = CodeWatch(home.root, home.cwd)
    bounds: list[Bound] = []
    for position, record in enumerate(records):
        record.setdefault("suspect", [])
        scope = record.get("scope") or ""
        if scope in ("", L.GLOBAL) or watch.repo_for(scope) is None:
            continue
        bound = watch.bound(position, scope, record.get("layer") or "", record.get("topic") or "",
                            fields_of(record))
        if bound is not None:
            bounds.append(bound)
    if not bounds:
        return
    for key, marks in watch.check(bounds).items():
        records[int(str(key))]["suspect"] = [m.text() for m in marks]


def summary(reasons: list[str]) -> str:
    """The newest reason, and how many commits more."""
    more = len(reasons) - 1
    return reasons[0] + (f" (and {more} earlier commit{'s' if more > 1 else ''})" if more else "")


def mark_hits(home: Store, hits: list[dict[str, Any]]) -> None:
    """Add `suspect` (the reasons, empty when none) to search hits."""
    _mark(home, hits, lambda h: entry_fields(Path(h["root"]) / h["path"], int(h["line"])))


def mark_records(home: Store, records: list[dict[str, Any]]) -> None:
    """Add `suspect` to entry records (show, list)."""
    _mark(home, records, lambda r: r["fields"])


def suspect_lines(store: Store, workspace: str | None,
                  load: Callable[[], list[dict[str, Any]]]) -> list[str]:
    """The card's lines for facts whose code changed since they were verified, naming the
    commits; `load` lists the workspace's entries and is called only when its code is known."""
    if workspace is None or CodeWatch(store.root, store.cwd).repo_for(workspace) is None:
        return []
    records = load()
    mark_records(store, records)
    lines = [f"- {r['title']} ({record_ref(r)}): {summary(r['suspect'])} — check it"
             + (f", then `gitmem verify {r.get('ref') or r['id']}`" if r.get("ref") or r["id"] else "")
             for r in records if r["suspect"]]
    return lines[:CARD_LIMIT]

