"""An entry moved to another topic file on one side and edited where it was on the other.

Merged file by file, the old file sees an edit against a deletion (and keeps the edit) and the new
file an addition: the entry would live twice under one Id. So before the per-file merges such a
move is applied to the base and to the side that edited: the entry leaves the old file and joins
the new one there too. The new file's merge then sees one entry edited on one side (or on both:
combined, or a conflict like any other), and the old file's merge sees it gone on both sides.

A move is recognised by Id only: in one file at the merge base, in exactly one other file on the
moving side and no longer in the old one, still in the old file (and nowhere else) on the editing
side, and changed there. Anything less clear is left to the per-file merge, which keeps both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gitmem.errors import ParseError
from gitmem.format.entry import Entry, TopicFile
from gitmem.format.markdown import parse_topic_file, render_topic_file
from gitmem.merge.entries import same_entry

SIDES = ("base", "ours", "theirs")
Texts = Callable[[str, str], "str | None"]  # (side, path) -> that side's text, None when absent


@dataclass
class Alignment:
    """Texts to merge instead of the sides' own, by (side, path), and what was moved."""

    texts: dict[tuple[str, str], str | None] = field(default_factory=dict)
    moved: dict[str, tuple[str, str]] = field(default_factory=dict)  # Id -> (old path, new path)

    def paths(self) -> set[str]:
        return {path for _side, path in self.texts}

    def notes(self) -> list[str]:
        return [f"{ident}: moved to {new} on one machine and edited in {old} on the other; "
                f"the edit went with it" for ident, (old, new) in sorted(self.moved.items())]


@dataclass
class _Where:
    """Where each Id is on one side, among the files looked at: Id -> paths holding it."""

    paths: dict[str, list[str]] = field(default_factory=dict)
    entries: dict[tuple[str, str], Entry] = field(default_factory=dict)  # (Id, path) -> entry

    def only(self, ident: str) -> str | None:
        found = self.paths.get(ident, [])
        return found[0] if len(found) == 1 else None


def align_moves(texts: Texts, ours_paths: set[str], theirs_paths: set[str]) -> Alignment:
    """Moves against in-place edits among the topic files the two sides changed."""
    looked = sorted(ours_paths | theirs_paths)
    where = {"base": _locate(texts, "base", looked), "ours": _locate(texts, "ours", sorted(ours_paths)),
             "theirs": _locate(texts, "theirs", sorted(theirs_paths))}
    changed = {"ours": ours_paths, "theirs": theirs_paths}
    alignment = Alignment()
    files: dict[tuple[str, str], TopicFile | None] = {}
    for ident in sorted(where["base"].paths):
        old = where["base"].only(ident)
        if old is None:
            continue
        for mover, editor in (("theirs", "ours"), ("ours", "theirs")):
            new = where[mover].only(ident)
            if new is None or new == old or old not in changed[mover]:
                continue
            if where[editor].only(ident) != old or old not in changed[editor]:
                continue
            edited = where[editor].entries[(ident, old)]
            if same_entry(edited, where["base"].entries[(ident, old)]):
                continue  # not edited: the plain merge already moves it
            skeleton = _parse(texts(mover, new), new)
            if skeleton is None or not _move(files, texts, ident, old, new, editor, skeleton):
                continue
            alignment.moved[ident] = (old, new)
    for (side, path), document in files.items():
        alignment.texts[(side, path)] = None if document is None else render_topic_file(document)
    return alignment


def _locate(texts: Texts, side: str, paths: list[str]) -> _Where:
    where = _Where()
    for path in paths:
        document = _parse(texts(side, path), path)
        for entry in document.entries if document else []:
            if entry.id:
                where.paths.setdefault(entry.id, []).append(path)
                where.entries.setdefault((entry.id, path), entry)
    return where


def _parse(text: str | None, path: str) -> TopicFile | None:
    if text is None:
        return None
    try:
        return parse_topic_file(text, path)
    except ParseError:
        return None  # unreadable front matter: the per-file merge deals with it


def _move(files: dict[tuple[str, str], TopicFile | None], texts: Texts, ident: str, old: str,
          new: str, editor: str, skeleton: TopicFile) -> bool:
    """Take the entry out of `old` and append it to `new`, in the base and on the editing side."""
    for side in ("base", editor):
        source = _current(files, texts, side, old)
        if source is None or source.find(ident) is None:
            return False
    for side in ("base", editor):
        source = _current(files, texts, side, old)
        assert source is not None
        index = source.find(ident)
        assert index is not None
        entry = source.entries.pop(index)
        target = _current(files, texts, side, new)
        if target is None:  # the file is new: the mover's head of the file, and this entry
            target = TopicFile(frontmatter_raw=skeleton.frontmatter_raw, meta=dict(skeleton.meta),
                               preamble=skeleton.preamble, entries=[], newline=skeleton.newline,
                               bom=skeleton.bom)
            files[(side, new)] = target
        target.entries.append(entry)
    return True


def _current(files: dict[tuple[str, str], TopicFile | None], texts: Texts, side: str,
             path: str) -> TopicFile | None:
    """The side's file as the moves so far left it (parsed once, then changed in place)."""
    if (side, path) not in files:
        files[(side, path)] = _parse(texts(side, path), path)
    return files[(side, path)]
