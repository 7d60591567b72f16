"""Entry-by-entry three-way merge of topic files: three texts in, merged text and a report out.

Topic and single-layer files merge entry by entry (SPEC §7); files.py picks the merge by a
file's role (JSON by key in records.py, other text by line in lines.py).

Decisions:
- `conflicts` lists exactly the places where conflict markers were written. An entry edited on
  one side and deleted on the other keeps the edit, gets no markers and is reported in `notes`.
- Entries are compared ignoring line-ending style and trailing blank space, so a CRLF conversion
  or a blank line added before a following entry is not an edit.
- An entry both sides edited: edits of different parts (the heading, the body, different fields)
  combine; two different edits of the same part are a conflict (markers around that entry, each
  marker line naming its side's machine and commit). `Verified` changed on both sides is no
  conflict: the later date is kept.
- Entries only in theirs go after the nearest preceding theirs entry present in the result (and
  after ours-only entries right behind it: both appended -> ours' first), else before the
  nearest following one, else at the end.
- An entry from theirs whose Id is already used in the result is renumbered (next free number of
  its scope+layer); a malformed Id cannot be renumbered, so both entries are kept and noted.
- Frontmatter + preamble: the side that changed; changed on both: a clean line merge, else ours.
- Text taken from theirs is converted to ours' line ending when the two files differ in style.
- A side whose frontmatter cannot be parsed falls back to a line merge of the whole file.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from gitmem.errors import ParseError
from gitmem.format.conflicts import is_held
from gitmem.format.entry import Entry, TopicFile, normalize_text
from gitmem.format.layers import format_id, parse_id
from gitmem.format.markdown import parse_topic_file, render_entry
from gitmem.merge.common import (
    PLAIN,
    Labels,
    MergeConflict,
    MergeResult,
    conflict_block,
    fast_path,
    interleave,
    lf,
    to_newline,
    with_eol,
)
from gitmem.merge.lines import merge_lines

TakenIds = Callable[[str, str], set[int]]
LATEST_DATE_FIELDS = ("Verified",)  # re-confirmed on both machines: the later day stands
_BLANK_TAIL_RE = re.compile(r"(\r?\n)(?:[ \t]*\r?\n)+\Z")
_HEADER = "\0header"  # ordering anchor standing for the frontmatter and preamble


# ---- entry merge --------------------------------------------------------------------------


def _signature(entry: Entry) -> str:
    """The entry's text as compared: line endings unified, trailing blank space ignored."""
    return lf(entry.raw if entry.raw is not None else render_entry(entry)).rstrip()


def same_entry(a: Entry, b: Entry) -> bool:
    """Same text, or the same title, body and fields written differently."""
    if _signature(a) == _signature(b):
        return True
    return (a.title, a.body, a.fields) == (b.title, b.body, b.fields)


def _keys(entries: list[Entry]) -> list[str]:
    """Match keys: the Id, else the content hash; repeats numbered so keys stay unique."""
    seen: Counter[str] = Counter()
    keys = []
    for entry in entries:
        key = f"id:{entry.id}" if entry.id else f"hash:{entry.content_hash}"
        seen[key] += 1
        keys.append(key if seen[key] == 1 else f"{key}#{seen[key]}")
    return keys


def _match_to_base(keys: list[str], entries: list[Entry], base: dict[str, Entry]) -> list[str]:
    """Re-key side entries that are a base entry without Id, since edited or given an Id."""
    taken = set(keys)
    free = [key for key, entry in base.items() if entry.id is None and key not in taken]
    tests: tuple[Callable[[Entry, Entry], bool], ...] = (
        lambda a, b: a.content_hash == b.content_hash,
        lambda a, b: normalize_text(a.title) == normalize_text(b.title),
    )
    out = list(keys)
    for test in tests:
        for index, entry in enumerate(entries):
            if out[index] in base:
                continue
            match = next((key for key in free if test(base[key], entry)), None)
            if match is not None:
                out[index] = match
                free.remove(match)
    return out


def _three_way(base: str | None, ours: str | None, theirs: str | None) -> tuple[bool, str | None]:
    """(settled, value) of one part: the side that changed it, else unsettled."""
    if ours == theirs or theirs == base:
        return True, ours
    if ours == base:
        return True, theirs
    return False, None


def _combine(base: Entry, ours: Entry, theirs: Entry) -> Entry | None:
    """One entry edited on both sides in different parts, combined; None when both changed the
    same part differently (a true conflict)."""
    if is_held(ours.body) or is_held(theirs.body):
        return None  # an earlier conflict block: never merged piecewise
    title_ok, title = _three_way(base.title, ours.title, theirs.title)
    body_ok, body = _three_way(base.body, ours.body, theirs.body)
    if not (title_ok and body_ok) or title is None or body is None:
        return None
    fields: dict[str, str] = {}
    for name in interleave(list(ours.fields), list(theirs.fields)):
        mine, other = ours.fields.get(name), theirs.fields.get(name)
        settled, value = _three_way(base.fields.get(name), mine, other)
        if not settled and name in LATEST_DATE_FIELDS and mine and other:
            settled, value = True, max(mine, other)
        if not settled:
            return None
        if value is not None:
            fields[name] = value
    return Entry(title=title, body=body, fields=fields)


@dataclass
class _Piece:
    """One block of the merged file and where its text came from."""

    text: str
    origin: str  # "ours" (ours' exact bytes), "theirs", "merged" (combined), "conflict"
    entry: Entry | None = None


class _EntryMerge:
    """State of one entry-by-entry merge."""

    def __init__(self, path: str, trio: list[TopicFile], taken_ids: TakenIds | None,
                 labels: Labels = PLAIN) -> None:
        self.path = path
        self.labels = labels
        self.base, self.ours, self.theirs = trio
        self.taken_ids = taken_ids
        self.newline = self.ours.newline
        self.convert = self.theirs.newline != self.ours.newline
        self.result = MergeResult("")
        self.pieces: dict[str, _Piece] = {}  # by match key; "theirs:<key>" for a second entry
        self.next_number: dict[tuple[str, str], int] = {}
        base_keys = _keys(self.base.entries)
        self.base_map = dict(zip(base_keys, self.base.entries, strict=True))
        self.ours_keys = _match_to_base(_keys(self.ours.entries), self.ours.entries, self.base_map)
        self.theirs_keys = _match_to_base(
            _keys(self.theirs.entries), self.theirs.entries, self.base_map
        )
        self.ours_map = dict(zip(self.ours_keys, self.ours.entries, strict=True))
        self.theirs_map = dict(zip(self.theirs_keys, self.theirs.entries, strict=True))

    def theirs_text(self, text: str) -> str:
        return to_newline(text, self.newline) if self.convert else text

    def note(self, text: str) -> None:
        self.result.notes.append(f"{self.path}: {text}")

    def run(self) -> MergeResult:
        """Merge header and entries, renumber colliding ids, render."""
        header, header_is_ours = self.header()
        for key in dict.fromkeys(self.ours_keys + self.theirs_keys):
            self.decide(key)
        placed = self.pieces
        ours_order = [key for key in self.ours_keys if key in placed]
        theirs_order = [
            x for key in self.theirs_keys for x in (key, f"theirs:{key}") if x in placed
        ]
        order = interleave(ours_order, theirs_order)
        self.renumber_collisions([placed[key] for key in order])
        self.result.text = self.render(header, header_is_ours, order)
        return self.result

    def header(self) -> tuple[str, bool]:
        """Frontmatter + preamble of the side that changed; (text, is it ours' exact text)."""
        base, ours, theirs = (
            t.frontmatter_raw + t.preamble for t in (self.base, self.ours, self.theirs)
        )
        if lf(theirs) == lf(base) or lf(ours) == lf(theirs):
            return ours, True
        if lf(ours) == lf(base):
            return self.theirs_text(theirs), False
        merged = merge_lines(self.path, base, ours, self.theirs_text(theirs), labels=self.labels)
        if not merged.conflicts:
            try:
                parse_topic_file(merged.text, self.path)
            except ParseError:
                pass
            else:
                self.note("frontmatter/preamble edited on both sides; combined line by line")
                return merged.text, False
        return self.header_apart(), False

    def header_apart(self) -> str:
        """Front matter and preamble edited in overlapping lines on both sides: the front matter
        (gitmem's topic, layer and scope) is ours; the preamble, a person's free text, keeps the
        lines of both sides (ours, then theirs), so that neither side's words are lost."""
        sides = (self.base, self.ours, self.theirs)
        base_fm, ours_fm, theirs_fm = (t.frontmatter_raw for t in sides)
        front = ours_fm
        if lf(ours_fm) == lf(base_fm):
            front = self.theirs_text(theirs_fm)
        elif lf(theirs_fm) != lf(base_fm) and lf(ours_fm) != lf(theirs_fm):
            merged_fm = merge_lines(self.path, base_fm, ours_fm, self.theirs_text(theirs_fm))
            if merged_fm.conflicts:
                self.note("front matter edited differently on both sides; kept ours")
            else:
                front = merged_fm.text
        base_pre, ours_pre, theirs_pre = (t.preamble for t in sides)
        preamble = merge_lines(self.path, base_pre, ours_pre, self.theirs_text(theirs_pre), union=True)
        if preamble.conflicts:
            self.note("text above the first entry edited differently on both sides; kept both")
        text = front + preamble.text
        try:
            parse_topic_file(text, self.path)
        except ParseError:
            self.note("frontmatter/preamble edited differently on both sides; kept ours")
            return self.ours.frontmatter_raw + self.ours.preamble
        return text

    def decide(self, key: str) -> None:
        """Settle one matched entry: keep a side, both, drop it, or write a conflict block."""
        base, ours, theirs = (
            side.get(key) for side in (self.base_map, self.ours_map, self.theirs_map)
        )
        if ours is None or theirs is None:
            self.one_sided(key, base, ours, theirs)
        elif base is None and not same_entry(ours, theirs):
            # Added on both sides under one key: two different entries, keep both.
            self.pieces[key] = _Piece(ours.raw or "", "ours", ours)
            self.pieces[f"theirs:{key}"] = self.from_theirs(theirs)
        elif base is None or same_entry(theirs, base) or same_entry(ours, theirs):
            self.pieces[key] = _Piece(ours.raw or "", "ours", ours)
        elif same_entry(ours, base):
            self.pieces[key] = self.from_theirs(theirs)
        else:
            self.both_edited(key, base, ours, theirs)

    def both_edited(self, key: str, base: Entry, ours: Entry, theirs: Entry) -> None:
        """Combined when the edits touch different parts, else a conflict block."""
        combined = _combine(base, ours, theirs)
        if combined is None:
            self.pieces[key] = self.conflict(ours, theirs)
            return
        self.pieces[key] = _Piece(render_entry(combined, self.newline), "merged", combined)
        self.note(f"{ours.id or repr(ours.title)}: edited on both sides in different parts; combined")

    def one_sided(
        self, key: str, base: Entry | None, ours: Entry | None, theirs: Entry | None
    ) -> None:
        """An entry present on one side only: new, deleted, or edited against a deletion."""
        entry = ours if ours is not None else theirs
        assert entry is not None
        if base is not None and same_entry(entry, base):
            return  # deleted on the other side, untouched here
        if base is not None:
            side, other = ("ours", "theirs") if ours is not None else ("theirs", "ours")
            label = entry.id or repr(entry.title)
            self.note(f"{label}: edited on {side}, deleted on {other}; kept the edit")
        ours_piece = _Piece(entry.raw or "", "ours", entry)
        self.pieces[key] = ours_piece if ours is not None else self.from_theirs(entry)

    def from_theirs(self, entry: Entry) -> _Piece:
        return _Piece(self.theirs_text(entry.raw or ""), "theirs", entry)

    def conflict(self, ours: Entry, theirs: Entry) -> _Piece:
        """Both versions of an entry edited differently, verbatim between markers."""
        # Trailing blank lines only separate entries; inside the block they would just be noise.
        ours_text = _BLANK_TAIL_RE.sub(r"\1", ours.raw or "")
        theirs_text = _BLANK_TAIL_RE.sub(r"\1", self.theirs_text(theirs.raw or ""))
        self.result.conflicts.append(
            MergeConflict(
                self.path, ours.id or theirs.id, ours.title, "both-edited", ours_text, theirs_text
            )
        )
        block = conflict_block(ours_text, theirs_text, self.newline, self.labels)
        return _Piece(block, "conflict", ours)

    def renumber_collisions(self, pieces: list[_Piece]) -> None:
        """Give an entry from theirs whose Id is already in the result the next free number."""
        used = {p.entry.id for p in pieces if p.origin != "theirs" and p.entry and p.entry.id}
        for piece in pieces:
            if piece.origin != "theirs" or piece.entry is None or not piece.entry.id:
                continue
            old = piece.entry.id
            parsed = parse_id(old)
            if old in used and parsed is None:
                self.note(f"{old}: used on both sides for different entries; kept both")
            elif old in used and parsed is not None:
                number = self.allocate(parsed.scope, parsed.layer)
                new = format_id(parsed.scope, parsed.layer, number)
                piece.entry = piece.entry.with_fields(Id=new)
                piece.text = render_entry(piece.entry, self.newline)
                self.result.renumbered[old] = new
                self.note(f"{old}: used on both sides for different entries; theirs' is now {new}")
                old = new
            used.add(old)

    def allocate(self, scope: str, layer: str) -> int:
        """1 + the highest number of this scope+layer seen in the three files or elsewhere."""
        if (scope, layer) not in self.next_number:
            numbers = set(self.taken_ids(scope, layer)) if self.taken_ids else set()
            for topic in (self.base, self.ours, self.theirs):
                for entry in topic.entries:
                    parsed = parse_id(entry.id or "")
                    if parsed and (parsed.scope, parsed.layer) == (scope, layer):
                        numbers.add(parsed.number)
            self.next_number[(scope, layer)] = max(numbers, default=0) + 1
        number = self.next_number[(scope, layer)]
        self.next_number[(scope, layer)] = number + 1
        return number

    def render(self, header: str, header_is_ours: bool, order: list[str]) -> str:
        """Concatenate: neighbours in ours stay byte-exact, other joins get a blank line."""
        ours_prev = dict(zip(self.ours_keys, [_HEADER, *self.ours_keys], strict=False))
        out = header
        prev = _HEADER if header_is_ours else None
        for key in order:
            piece = self.pieces[key]
            tight = piece.origin == "ours" and prev is not None and ours_prev.get(key) == prev
            if not tight and out:
                out = with_eol(out, self.newline)
                if not re.search(r"(?:^|\n)[ \t]*\r?\n\Z", out):
                    out += self.newline
            out += piece.text
            prev = key if piece.origin == "ours" else None
        return out


def merge_topic_text(
    path: str, base: str | None, ours: str, theirs: str, *, taken_ids: TakenIds | None = None,
    labels: Labels = PLAIN,
) -> MergeResult:
    """Entry-by-entry three-way merge of a topic or single-layer file."""
    fast = fast_path(base, ours, theirs)
    if fast is not None:
        return MergeResult(fast)
    try:
        trio = [parse_topic_file(text, path) for text in (base or "", ours, theirs)]
    except ParseError as exc:
        result = merge_lines(path, base, ours, theirs, labels=labels)
        result.notes.insert(0, f"{path}: {exc.reason}; merged line by line")
        return result
    return _EntryMerge(path, trio, taken_ids, labels).run()
