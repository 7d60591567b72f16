"""A review item accepted on both machines and merged with plain git (`git pull`, not `gitmem
sync`): after the merge commit, the post-merge hook folds the two copies of its entry into one,
with the fold `gitmem sync` uses (merge/accepted.py), and commits that."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gitmem.format.reviewqueue import REVIEW_PATH
from gitmem.merge.accepted import fold_double_accepts

if TYPE_CHECKING:
    from gitmem.store.store import Store


@dataclass
class _Folded:
    """What the fold changed in the merged work tree, and what it says."""

    files: dict[str, bytes | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    renumbered: dict[str, str] = field(default_factory=dict)


class _AfterMerge:
    """The fold's sides after a merge commit: each parent's review queue; the topic files as
    the merge left them in the work tree."""

    def __init__(self, store: Store, mine: str, other: str) -> None:
        self.store, self.revs = store, {"ours": mine, "theirs": other}

    def blob(self, side: str, path: str) -> bytes | None:
        if path == REVIEW_PATH:
            return self.store.git.read_file_at(self.revs[side], path)
        return self.store.read_bytes(path)


def fold_accepts_after_merge(store: Store, mine: str, other: str,
                             renumbered: dict[str, str]) -> list[str]:
    """Drop this machine's copy of each item both parents accepted, in one commit; the notes.
    `renumbered`: Ids of this machine's entries settled just before (old -> new)."""
    folded = _Folded(renumbered=dict(renumbered))
    fold_double_accepts(folded, _AfterMerge(store, mine, other))
    changed = {path: data for path, data in folded.files.items() if data is not None}
    if changed:
        with store.writing("merge") as txn:
            for path, data in changed.items():
                store.write_file(txn, path, data.decode("utf-8"))
            txn.message = "merge: " + "; ".join(folded.notes)
    return folded.notes
