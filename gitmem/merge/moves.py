"""Entries that moved to another topic file on one side or both: one Id, one place after a merge.

Merged file by file, a moved entry can end up in two files under one Id:
- moved on one side and edited where it was on the other: the old file sees an edit against a
  deletion (and keeps the edit), the new file an addition;
- moved on both sides to two different files (the same topic renamed to two names, or an entry
  cut into two different files): each new file is an addition;
- moved on both sides to the same file, edited differently on the way: the new file has no base,
  so the two versions look like two new entries (kept both, one renumbered).

So before the per-file merges each such move is applied to the base and to the side that needs
it, and the per-file merge of the file the entry ends in sees one entry, edited on one side, on
both (combined, or a conflict like any other) or on none:
- moved on one side, edited in place on the other: the entry leaves the old file and joins the
  new one in the base and on the editing side;
- moved to the same file on both sides: the entry joins it in the base;
- moved to two files: it stays in the first of the two paths (sorted, so any machine merging the
  same commits decides alike); the base and the side that moved it elsewhere move it there. A
  file that side created for it and that is left with nothing but the title gitmem wrote goes.

A whole topic file renamed on one side (deleted, and every entry with an Id it held found in one
other file there) takes along the entries the other side added to the old file: they are moved
to the new name on that side, so the old file is not brought back for them.

A move is recognised by Id only: in one file at the merge base, in exactly one file on each side
(its old file counts when that side did not change it). Anything less clear is left to the
per-file merge, which keeps both.
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
Files = dict[tuple[str, str], "TopicFile | None"]
_WHO = {"ours": "this machine", "theirs": "the other machine"}


@dataclass
class Alignment:
    """Texts to merge instead of the sides' own, by (side, path), and what was moved."""

    texts: dict[tuple[str, str], str | None] = field(default_factory=dict)
    moved: dict[str, tuple[str, str]] = field(default_factory=dict)  # Id -> (old path, new path)
    said: list[str] = field(default_factory=list)

    def paths(self) -> set[str]:
        return {path for _side, path in self.texts}

    def notes(self) -> list[str]:
        return list(self.said)


@dataclass
class _Where:
    """Where each Id is on one side, among the files looked at: Id -> paths holding it."""

    paths: dict[str, list[str]] = field(default_factory=dict)
    entries: dict[tuple[str, str], Entry] = field(default_factory=dict)  # (Id, path) -> entry

    def only(self, ident: str) -> str | None:
        found = self.paths.get(ident, [])
        return found[0] if len(found) == 1 else None


class _Aligner:
    """One alignment: where every Id is on each side, and the files as the moves leave them."""

    def __init__(self, texts: Texts, ours_paths: set[str], theirs_paths: set[str]) -> None:
        self.texts = texts
        self.changed = {"ours": ours_paths, "theirs": theirs_paths}
        self.where = {"base": _locate(texts, "base", sorted(ours_paths | theirs_paths)),
                      "ours": _locate(texts, "ours", sorted(ours_paths)),
                      "theirs": _locate(texts, "theirs", sorted(theirs_paths))}
        self.files: Files = {}
        self.created: set[tuple[str, str]] = set()  # files a move created on a side
        self.touched: set[tuple[str, str]] = set()  # files the moves changed
        self.result = Alignment()

    def place(self, side: str, ident: str, old: str) -> str | None:
        """The one file holding the entry on `side` (its old file when that side left it alone);
        None when deleted there or held twice."""
        found = self.where[side].paths.get(ident, [])
        if old not in self.changed[side]:
            return old if not found else None
        return found[0] if len(found) == 1 else None

    def run(self) -> Alignment:
        for ident in sorted(self.where["base"].paths):
            old = self.where["base"].only(ident)
            if old is None:
                continue
            at = {side: self.place(side, ident, old) for side in ("ours", "theirs")}
            mine, other = at["ours"], at["theirs"]
            if mine is None or other is None or mine == other == old:
                continue
            if mine != old and other != old:
                self.both_moved(ident, old, mine, other)
            else:
                mover, editor = ("ours", "theirs") if mine != old else ("theirs", "ours")
                self.one_moved(ident, old, at[mover] or old, mover, editor)
        self.follow_renamed_files()
        for side, path in sorted(self.touched):
            document = self.files[(side, path)]
            if document is None or ((side, path) in self.created and only_generated(document)):
                self.result.texts[(side, path)] = None
            else:
                self.result.texts[(side, path)] = render_topic_file(document)
        return self.result

    def one_moved(self, ident: str, old: str, new: str, mover: str, editor: str) -> None:
        """Moved on `mover`, still in `old` on `editor`: the edit goes with it (when edited)."""
        edited = self.where[editor].entries.get((ident, old))
        if edited is None or same_entry(edited, self.where["base"].entries[(ident, old)]):
            return  # not edited: the plain merge already moves it
        skeleton = self.current(mover, new)
        if skeleton is not None and self.move(ident, [("base", old), (editor, old)], new, skeleton):
            self.result.moved[ident] = (old, new)
            self.result.said.append(f"{ident}: moved to {new} on one machine and edited in {old} "
                                    "on the other; the edit went with it")

    def both_moved(self, ident: str, old: str, mine: str, other: str) -> None:
        """Moved away from `old` on both sides: one destination, the first path of the two."""
        if mine == other:
            ours, theirs = (self.where[s].entries[(ident, mine)] for s in ("ours", "theirs"))
            skeleton = self.current("ours", mine)
            if not same_entry(ours, theirs) and skeleton is not None:
                self.move(ident, [("base", old)], mine, skeleton)  # a three-way merge there
            return
        target = min(mine, other)
        stray = "theirs" if target == mine else "ours"
        keeper = "ours" if stray == "theirs" else "theirs"
        skeleton = self.current(keeper, target)
        source = mine if stray == "ours" else other
        if skeleton is None or not self.move(ident, [("base", old), (stray, source)], target, skeleton):
            return
        self.result.moved[ident] = (old, target)
        self.result.said.append(f"{ident}: moved from {old} to {mine} on {_WHO['ours']} and to "
                                f"{other} on {_WHO['theirs']}; it is kept in {target}")

    def follow_renamed_files(self) -> None:
        """Entries added on one side to a file the other side renamed join the new name."""
        for mover, editor in (("ours", "theirs"), ("theirs", "ours")):
            for old in sorted(self.changed[mover] & self.changed[editor]):
                base = _parse(self.texts("base", old), old)
                if base is None or self.texts(mover, old) is not None:
                    continue
                idents = [e.id for e in base.entries if e.id]
                targets = {self.where[mover].only(i) for i in idents}
                if not idents or len(targets) != 1 or None in targets or old in targets:
                    continue
                new = targets.pop()
                assert new is not None
                self.take_new_entries(old, new, base, mover, editor)

    def take_new_entries(self, old: str, new: str, base: TopicFile, mover: str, editor: str) -> None:
        source = self.current(editor, old)
        skeleton = self.current(mover, new)
        if source is None or skeleton is None:
            return
        known = {e.id for e in base.entries if e.id}
        hashes = {e.content_hash for e in base.entries}
        added = [e for e in source.entries
                 if (e.id not in known if e.id else e.content_hash not in hashes)]
        if not added:
            return
        target = self.target(editor, new, skeleton)
        for entry in added:
            source.entries.remove(entry)
            target.entries.append(entry)
        self.touched |= {(editor, old), (editor, new)}
        labels = ", ".join(e.id or repr(e.title) for e in added)
        self.result.said.append(f"{labels}: added to {old} on one machine, which the other renamed "
                                f"to {new}; moved there")

    def move(self, ident: str, sources: list[tuple[str, str]], new: str, skeleton: TopicFile) -> bool:
        """Take the entry out of each (side, file) and append it to `new` on that side."""
        for side, path in sources:
            source = self.current(side, path)
            if source is None or source.find(ident) is None:
                return False
        for side, path in sources:
            source = self.current(side, path)
            assert source is not None
            index = source.find(ident)
            assert index is not None
            self.target(side, new, skeleton).entries.append(source.entries.pop(index))
            self.touched |= {(side, path), (side, new)}
        return True

    def target(self, side: str, path: str, skeleton: TopicFile) -> TopicFile:
        """The side's file at `path`, created from the head of `skeleton` when it has none."""
        found = self.current(side, path)
        if found is None:
            found = TopicFile(frontmatter_raw=skeleton.frontmatter_raw, meta=dict(skeleton.meta),
                              preamble=skeleton.preamble, entries=[], newline=skeleton.newline,
                              bom=skeleton.bom)
            self.files[(side, path)] = found
        return found

    def current(self, side: str, path: str) -> TopicFile | None:
        """The side's file as the moves so far left it (parsed once, then changed in place)."""
        if (side, path) not in self.files:
            self.files[(side, path)] = _parse(self.texts(side, path), path)
            if side != "base" and self.files[(side, path)] is not None and \
                    self.texts("base", path) is None:
                self.created.add((side, path))
        return self.files[(side, path)]


def align_moves(texts: Texts, ours_paths: set[str], theirs_paths: set[str]) -> Alignment:
    """Moves (on one side or both) among the topic files the two sides changed."""
    return _Aligner(texts, ours_paths, theirs_paths).run()


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


def only_generated(document: TopicFile) -> bool:
    """No entry left, and nothing before the entries but the title gitmem wrote (as `gitmem mv`
    decides whether the file an entry left goes)."""
    lines = [line for line in document.preamble.splitlines() if line.strip()]
    return not document.entries and all(line.startswith("# ") for line in lines) and len(lines) <= 1
