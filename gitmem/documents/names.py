"""One copy file per document, across machines (pure: index texts in, renames out).

Each machine picks a new document's file name from its title, unique among the documents it
knows (`unique_filename`). Two machines adding documents under the same title (or titles with
the same slug) pick the same name, so their copies would be one file and, after a merge, one
document's text would be lost or merged into the other's. Before such a merge, the document of
the side not yet published (ours in a sync merge) takes the next free name; the published
side's name never changes, as with Ids two machines numbered alike.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gitmem.documents.model import DocIndex, DocRecord, dump_index, load_index
from gitmem.errors import GitmemError


@dataclass(frozen=True)
class Renamed:
    """Ours' record `doc_id` moves from `old` to `new` (file names inside its status folder)."""

    doc_id: str
    status: str
    old: str
    new: str


def _load(text: str | None, path: str) -> DocIndex | None:
    if text is None:
        return DocIndex()
    try:
        return load_index(text, path)
    except GitmemError:
        return None


def _new(index: DocIndex, base: DocIndex) -> list[DocRecord]:
    """Records of `index` the base does not hold under the same id and file name."""
    known = {(r.id, r.filename) for r in base.documents}
    return [r for r in index.documents if (r.id, r.filename) not in known]


def _free_name(filename: str, taken: set[str]) -> str:
    stem = filename.removesuffix(".md")
    number = 2
    while f"{stem}-{number}.md" in taken:
        number += 1
    return f"{stem}-{number}.md"


def distinct_copy_names(path: str, base: str | None, ours: str | None,
                        theirs: str | None) -> tuple[str, list[Renamed]] | None:
    """Ours' index text with each new record renamed whose file name a new record of theirs
    also took (for another document), and the renames; None when nothing collides or a side
    does not parse (the index merge reports that)."""
    sides = [_load(text, path) for text in (base, ours, theirs)]
    if ours is None or theirs is None or any(side is None for side in sides):
        return None
    base_index, ours_index, theirs_index = (s for s in sides if s is not None)
    theirs_new = {r.filename: r for r in _new(theirs_index, base_index)}
    taken = {r.filename for side in (base_index, ours_index, theirs_index) for r in side.documents}
    renames: list[Renamed] = []
    records: list[DocRecord] = []
    mine = _new(ours_index, base_index)
    for record in ours_index.documents:
        other = theirs_new.get(record.filename)
        if record in mine and other is not None and other != record:
            name = _free_name(record.filename, taken)
            taken.add(name)
            renames.append(Renamed(record.id, record.status, record.filename, name))
            record = replace(record, filename=name)
        records.append(record)
    if not renames:
        return None
    return dump_index(DocIndex(records, ours_index.extra)), renames
