"""One review item accepted on two machines before they synced: one entry, not two.

Each accept records what the item became in review.json's `accepted` (format/reviewqueue.py).
When both sides of a merge accepted the same item and wrote it under different Ids (one machine
had written other entries first), the merge keeps the other machine's record (it is published:
merge/review.py) and this fold drops this machine's copy of the entry from the merged file, when
it says what the kept entry says: in `gitmem sync`'s merge, and after a plain `git pull` in the
post-merge hook (githooks/accepts.py). Copies whose texts differ (accepted with different edits) are
both kept, with a note: nothing a person wrote is lost.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

from gitmem.format.entry import Entry
from gitmem.format.markdown import render_topic_file
from gitmem.format.reviewqueue import REVIEW_PATH
from gitmem.merge.prep import parse_copy
from gitmem.merge.review import double_accepts


class Trees(Protocol):
    """The files of the merge's sides: "ours" and "theirs" (sync/commits.py's reader, or the
    post-merge hook's view of a merge commit made by plain git)."""

    def blob(self, side: str, path: str) -> bytes | None: ...


class TreeMerge(Protocol):
    """The merge's result so far: files changed by it (sync/commits.py's TreeMerge)."""

    files: dict[str, bytes | None]
    notes: list[str]
    renumbered: dict[str, str]


def fold_double_accepts(result: TreeMerge, trees: Trees) -> None:
    """Drop this machine's copy of each item both sides accepted (see the module text)."""
    ours, theirs = trees.blob("ours", REVIEW_PATH), trees.blob("theirs", REVIEW_PATH)
    if ours is None or theirs is None:
        return
    pairs = double_accepts(ours.decode("utf-8", errors="replace"), theirs.decode("utf-8", errors="replace"))
    for mine, other in pairs:
        if mine.get("entry") and mine.get("path") and other.get("entry") and other.get("path"):
            _fold(result, trees, mine, other)


def _merged_text(result: TreeMerge, trees: Trees, path: str) -> str | None:
    data = result.files[path] if path in result.files else trees.blob("ours", path)
    return None if data is None else data.decode("utf-8", errors="replace")


def _entry(result: TreeMerge, trees: Trees, path: str, ident: str) -> Entry | None:
    topic = parse_copy(_merged_text(result, trees, path), path)
    return next((e for e in topic.entries if e.id == ident), None) if topic else None


def _fold(result: TreeMerge, trees: Trees, mine: dict[str, Any], other: dict[str, Any]) -> None:
    mine_id = result.renumbered.get(str(mine["entry"]), str(mine["entry"]))
    kept_id, path = str(other["entry"]), str(mine["path"])
    if mine_id == kept_id:
        return
    copy, kept = _entry(result, trees, path, mine_id), _entry(result, trees, str(other["path"]), kept_id)
    if copy is None or kept is None:
        return
    if copy.body.strip() != kept.body.strip():
        result.notes.append(f"review item {mine['id']} was accepted on both machines with different "
                            f"texts: kept both, {kept_id} and {mine_id}")
        return
    topic = parse_copy(_merged_text(result, trees, path), path)
    if topic is None:
        return
    topic = dataclasses.replace(topic, entries=[e for e in topic.entries if e.id != mine_id])
    result.files[path] = render_topic_file(topic).encode("utf-8")
    result.notes.append(f"review item {mine['id']} was accepted on both machines: kept {kept_id}, "
                        f"dropped this machine's copy {mine_id}")
