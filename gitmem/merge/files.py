"""Merging one store file by its role: topic files entry by entry, JSON by key, generated files
flagged for regeneration, anything else line by line (pure)."""

from __future__ import annotations

import re

from gitmem.format.idmarks import MARKS_PATH, merge_marks
from gitmem.format.layers import classify_path
from gitmem.format.reviewqueue import REVIEW_PATH
from gitmem.merge.common import PLAIN, Labels, MergeResult
from gitmem.merge.entries import TakenIds, merge_topic_text
from gitmem.merge.lines import merge_lines
from gitmem.merge.records import merge_records, merge_registry
from gitmem.merge.review import merge_review

_GENERATED_RE = re.compile(
    r"^(?:SYSTEM\.md|(?:global|workspaces/[^/]+)/runtime/(?:USER|MEMORY)\.md)$"
)
_APPEND_ONLY_RE = re.compile(r"^(?:global|workspaces/[^/]+)/runtime/[A-Z]+\.archive\.md$")
_REGISTRY_RE = re.compile(r"^(?:memory\.json|workspaces/[^/]+/meta\.json)$")
_RECORDS_RE = re.compile(
    r"^(?:(?:global/|workspaces/[^/]+/)?documents/index\.json|(?:global|workspaces/[^/]+)/runtime/.+\.json)$"
)


def merge_json_registry(
    base: str | None, ours: str, theirs: str, *, path: str = "memory.json"
) -> MergeResult:
    """memory.json: deep merge by key; lists of records matched on key/id/name."""
    return merge_registry(base, ours, theirs, path=path)


def merge_json_records(
    base: str | None, ours: str, theirs: str, *, key: str = "id", path: str = "records",
    labels: Labels = PLAIN,
) -> MergeResult:
    """Runtime and document JSON: lists of records matched on `key`, else on `content`."""
    return merge_records(base, ours, theirs, key=key, path=path, labels=labels)


def merge_appended(path: str, base: str | None, ours: str, theirs: str) -> MergeResult:
    """A file both sides only appended to (runtime archive lists): ours' lines, then theirs'
    new ones; anything else is merged line by line."""
    start = base or ""
    if ours.startswith(start) and theirs.startswith(start):
        mine = ours[len(start):]
        new = [line for line in theirs[len(start):].splitlines(keepends=True)
               if line not in mine.splitlines(keepends=True)]
        if mine and not mine.endswith("\n") and new:
            mine += "\n"
        return MergeResult(start + mine + "".join(new))
    return merge_lines(path, base, ours, theirs)


def is_generated(path: str) -> bool:
    """Files rendered from other files: regenerated after a merge, never merged."""
    return classify_path(path).kind == "layer-index" or bool(_GENERATED_RE.match(path))


def _one_side_deleted(
    path: str, base: str | None, ours: str | None, theirs: str | None
) -> MergeResult | None:
    """File deleted on one side: deleted if the other side left it alone, else the edit is kept."""
    present = ours if ours is not None else theirs
    assert present is not None
    if base is not None and present == base:
        return None
    result = MergeResult(present, regenerate=is_generated(path))
    if base is not None:
        side, other = ("ours", "theirs") if ours is not None else ("theirs", "ours")
        result.notes.append(f"{path}: edited on {side}, deleted on {other}; kept the edit")
    return result


def merge_file(
    path: str,
    base: str | None,
    ours: str | None,
    theirs: str | None,
    *,
    taken_ids: TakenIds | None = None,
    labels: Labels = PLAIN,
) -> MergeResult | None:
    """Merge one repo-relative path by its role; None means the merged result is "deleted".

    `labels` name the two sides on the marker lines of any conflict block written."""
    if ours is None and theirs is None:
        return None
    if ours is None or theirs is None:
        return _one_side_deleted(path, base, ours, theirs)
    if is_generated(path):
        placeholder = theirs if ours == base else ours
        return MergeResult(placeholder, regenerate=ours != theirs)
    if _APPEND_ONLY_RE.match(path):
        return merge_appended(path, base, ours, theirs)
    kind = classify_path(path).kind
    if kind in ("topic", "single"):
        return merge_topic_text(path, base, ours, theirs, taken_ids=taken_ids, labels=labels)
    if path == MARKS_PATH:  # the highest Id numbers handed out: the larger of each side
        return MergeResult(merge_marks(base, ours, theirs))
    if path == REVIEW_PATH:  # the review queue: by item id, removals win (merge/review.py)
        return merge_review(base, ours, theirs, path=path)
    if _REGISTRY_RE.match(path):
        return merge_json_registry(base, ours, theirs, path=path)
    if _RECORDS_RE.match(path):
        return merge_json_records(base, ours, theirs, path=path, labels=labels)
    return merge_lines(path, base, ours, theirs, labels=labels)
