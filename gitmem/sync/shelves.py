"""Document copies in a sync merge: each document lives once, on the shelf its merged index
record names (`<scope>/documents/active|archived/<filename>`), with its front matter generated
from that record.

- A copy archived or restored on one side and edited in place on the other: the edit follows
  the move (`align_shelf_moves`, before the per-file merges).
- A copy under a file name no record names, which the merge brought (one machine put a copy
  back from git while the other moved it to the other shelf, so git sees two additions; a copy
  renamed by hand on one machine and edited in place on the other): its text joins the copy
  the record names, merged line by line against the base's text, and the file goes
  (`fold_stray_copies`). Identical texts simply leave one copy; different ones keep every line
  (conflict blocks where they differ).
- Every copy the merge wrote gets its front matter generated again (`copy_front_matter`).
"""

from __future__ import annotations

from typing import Protocol

from gitmem.errors import GitmemError
from gitmem.format.document import split_copy
from gitmem.merge.common import MergeConflict, MergeResult
from gitmem.merge.lines import merge_lines


class _Trees(Protocol):
    """The three commits' files as the sync merge reads them (sync/commits.py)."""

    override: dict[tuple[str, str], str | None]

    def blob(self, side: str, path: str) -> bytes | None: ...

    def text(self, side: str, path: str) -> str | None: ...


class TreeMerge(Protocol):
    """What the sync merge has merged so far (sync/commits.py)."""

    files: dict[str, bytes | None]
    conflicts: list[MergeConflict]
    notes: list[str]
    renumbered: dict[str, str]

SHELVES = ("/documents/active/", "/documents/archived/")


def twin(path: str) -> str | None:
    """A document copy's path on the other shelf (active <-> archived), else None."""
    for here, there in (SHELVES, SHELVES[::-1]):
        if here in path:
            return path.replace(here, there, 1)
    return None


def align_shelf_moves(trees: _Trees, ours_paths: set[str], theirs_paths: set[str]) -> set[str]:
    """A copy archived or restored (moved between shelves) on one side and edited in place on the
    other: the edit follows the copy, so the document lives once, where the move put it; returns
    the paths to merge."""
    paths: set[str] = set()
    for side, other, changed in (("ours", "theirs", ours_paths), ("theirs", "ours", theirs_paths)):
        for path in sorted(changed):
            old = twin(path)
            if old is None or trees.blob("base", path) is not None or trees.blob(side, path) is None:
                continue
            if trees.blob("base", old) is None or trees.blob(side, old) is not None:
                continue  # not a move on this side
            if trees.blob(other, path) is not None or trees.blob(other, old) in (None, trees.blob("base", old)):
                continue  # the other side moved it too, deleted it, or left it as it was
            trees.override[("base", path)] = trees.text("base", old)
            trees.override[(other, path)] = trees.text(other, old)
            trees.override[(other, old)] = None
            paths |= {path, old}
    return paths


def fold_stray_copies(result: TreeMerge, trees: _Trees, changed: set[str]) -> None:
    """Copies the merge brought to a file no record names, whose front matter names a document
    (put back on the other shelf, renamed by hand): folded into the copy the record names (or
    moved there when it is missing), so the document lives once."""
    from gitmem.documents.model import load_index, render_copy
    from gitmem.documents.shelf import copy_path

    def merged(path: str) -> bytes | None:
        return result.files[path] if path in result.files else trees.blob("ours", path)

    strays = sorted(p for p in changed if twin(p) is not None and p.endswith(".md") and merged(p) is not None)
    for stray in strays:
        index = stray.split("/documents/")[0] + "/documents/index.json"
        scope = index.removesuffix("/documents/index.json").removeprefix("workspaces/")
        try:
            records = load_index((merged(index) or b"").decode("utf-8"), index).documents
            values, body, _line = split_copy((merged(stray) or b"").decode("utf-8"))
        except (UnicodeDecodeError, GitmemError):
            continue
        named = {copy_path(scope, r) for r in records}
        doc_id = values.get("id")
        if trees.blob("ours", stray) is not None and trees.blob("theirs", stray) is None:
            # this machine's copy: its document may have been renumbered by this very merge
            doc_id = result.renumbered.get(str(doc_id), doc_id)
        record = next((r for r in records if r.id == doc_id), None)
        if stray in named or record is None:
            continue
        kept = copy_path(scope, record)
        text = _folded_body(trees, kept, stray, body, merged(kept))
        result.files[kept] = render_copy(record, text.text).encode("utf-8")
        result.files[stray] = None
        result.conflicts.extend(text.conflicts)
        result.notes.append(f"{stray}: a copy of {record.id}, whose record names {kept}; its text "
                            "joined that copy")


def _folded_body(trees: _Trees, kept: str, stray: str, body: str, current: bytes | None) -> MergeResult:
    """The kept copy's body with the stray copy's merged in (against the base's body, if any)."""
    if current is None:
        return MergeResult(body)
    mine = split_copy(current.decode("utf-8", errors="replace"))[1]
    if mine == body:
        return MergeResult(mine)
    old = trees.blob("base", kept) or trees.blob("base", stray)
    base = split_copy(old.decode("utf-8", errors="replace"))[1] if old is not None else None
    return merge_lines(kept, base, mine, body)


def copy_front_matter(result: TreeMerge, trees: _Trees) -> None:
    """Every document copy the merge wrote gets its front matter generated again from its merged
    index record: the front matter is a function of the record, so two machines' changes to it
    (an archive here, an update there; an id renumbered) are never conflict blocks in the copy."""
    from gitmem.documents.model import load_index, parse_doc_id, render_copy
    from gitmem.documents.shelf import copy_path, index_path

    copies = {p for p, data in result.files.items() if data is not None and twin(p) is not None
              and p.endswith(".md")}
    renumbered = {new for old, new in result.renumbered.items() if parse_doc_id(old)}
    indexes = {p.split("/documents/")[0] + "/documents/index.json" for p in copies}
    indexes |= {index_path(parsed[0]) for new in renumbered if (parsed := parse_doc_id(new))}
    for index in sorted(indexes):
        scope = index.removesuffix("/documents/index.json").removeprefix("workspaces/")
        data = result.files.get(index, trees.blob("ours", index))
        try:
            records = load_index((data or b"").decode("utf-8"), index).documents
        except (UnicodeDecodeError, GitmemError):
            continue
        for record in records:
            path = copy_path(scope, record)
            if path not in copies and record.id not in renumbered:
                continue
            copy = result.files.get(path, trees.blob("ours", path))
            if copy is None:
                continue
            _values, body, _line = split_copy(copy.decode("utf-8", errors="replace"))
            result.files[path] = render_copy(record, body).encode("utf-8")
