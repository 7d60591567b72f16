"""Three-way merge of the review queue, review.json (pure).

Items are only ever added (by a consolidation pass) and removed (accepted or rejected), never
edited in place, so the merge is by id: an item removed on either side is gone, an item added on
either side is kept (ours when both added one id), once per fact (fingerprint: a fact both
machines queued waits once, ours first), unless either side rejected that fact. Rejections are kept from both sides, one per
fingerprint (the earlier rejection stands), newest last, trimmed to the bound. Accepts are kept
from both sides, one per item: when both machines accepted one item, the other machine's record
stands (it is published, and what it names is what every machine keeps: merge/accepted.py folds
this machine's copy of the entry into it). A side that does
not parse as a queue falls back to the line merge, whose markers leave the file unparseable:
reads then use its last good version, and both sides' text stays in the file for a person.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gitmem.errors import GitmemError
from gitmem.format.reviewqueue import (
    ACCEPTED_KEPT,
    REJECTED_KEPT,
    REVIEW_PATH,
    Queue,
    dump_queue,
    parse_queue,
)
from gitmem.merge.common import MergeResult, fast_path, interleave
from gitmem.merge.lines import merge_lines


def _by_id(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {str(r["id"]): r for r in records}


def _items(base: Queue, ours: Queue, theirs: Queue) -> list[dict[str, Any]]:
    """Ours' order, theirs' new items after their predecessors; removed on either side: gone."""
    old, mine, other = _by_id(base.items), _by_id(ours.items), _by_id(theirs.items)
    merged = []
    for key in interleave(list(mine), list(other)):
        if key in old and (key not in mine or key not in other):
            continue  # accepted or rejected on one machine
        merged.append(mine.get(key) or other[key])
    return merged


def _rejected(ours: Queue, theirs: Queue) -> list[dict[str, Any]]:
    """Every rejection of both sides, one per fingerprint (the earlier stands), oldest first."""
    found: dict[str, dict[str, Any]] = {}
    for record in sorted([*ours.rejected, *theirs.rejected], key=lambda r: str(r.get("at", ""))):
        found.setdefault(str(record["id"]), record)
    return list(found.values())[-REJECTED_KEPT:]


def _accepted(ours: Queue, theirs: Queue) -> list[dict[str, Any]]:
    """Every accept of both sides, one per item (theirs stands), oldest first."""
    found: dict[str, dict[str, Any]] = {}
    for record in sorted(ours.accepted, key=lambda r: str(r.get("at", ""))):
        found[str(record["id"])] = record
    for record in theirs.accepted:
        found[str(record["id"])] = record
    return sorted(found.values(), key=lambda r: str(r.get("at", "")))[-ACCEPTED_KEPT:]


def double_accepts(ours: str | None, theirs: str | None) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(ours' record, theirs' record) of every item both sides accepted with different results."""
    try:
        mine, other = parse_queue(ours or ""), parse_queue(theirs or "")
    except GitmemError:
        return []
    by_id = _by_id(other.accepted)
    result = []
    for record in mine.accepted:
        twin = by_id.get(str(record["id"]))
        if twin is not None and {k: v for k, v in twin.items() if k not in ("at", "machine")} != \
                {k: v for k, v in record.items() if k not in ("at", "machine")}:
            result.append((record, twin))
    return result


def _one_per_fact(items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first item of each fingerprint: a fact both machines queued (from digests of their
    own) waits once."""
    seen: set[str] = set()
    out = []
    for item in items:
        key = str(item.get("fingerprint") or item["id"])
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def merge_review(base: str | None, ours: str, theirs: str, *, path: str = REVIEW_PATH) -> MergeResult:
    """review.json merged by item id (see the module docstring)."""
    fast = fast_path(base, ours, theirs)
    if fast is not None:
        return MergeResult(fast)
    try:
        base_q = parse_queue(base) if base else Queue()
        ours_q, theirs_q = parse_queue(ours), parse_queue(theirs)
    except GitmemError as exc:
        result = merge_lines(path, base, ours, theirs)
        result.notes.insert(0, f"{path}: not a review queue ({exc}); merged line by line")
        return result
    rejected = _rejected(ours_q, theirs_q)
    turned_down = {str(r["id"]) for r in rejected}
    items = _one_per_fact(i for i in _items(base_q, ours_q, theirs_q) if i.get("fingerprint") not in turned_down)
    merged = Queue(items, rejected, {**theirs_q.extra, **ours_q.extra}, _accepted(ours_q, theirs_q))
    return MergeResult(dump_queue(merged))
