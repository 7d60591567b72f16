"""Texts made ready for the entry-level merge (pure: texts in, texts out).

- Conflict blocks an earlier merge left in a file are held as one placeholder entry each while
  merging, and put back (flattened when an entry was edited again against one) afterwards.
- One Id, two different entries (both machines allocated it, or one reused a number freed by a
  deletion): the entry of the side being merged here, this machine's, gets the next free number
  of its scope+layer, and links to it (Supersedes, Superseded-by, Related) in this machine's
  changed files follow. Ids as published on the remote never change. The rule is applied before
  the per-file merges, across files, so a collision between two topic files is caught too.

Used by `gitmem sync` (sync_merge.py) and by the git merge driver (merge_driver.py).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
from collections.abc import Callable

from gitmem.errors import ParseError
from gitmem.format import layers as L
from gitmem.format.entry import Entry, TopicFile
from gitmem.format.entry import normalize_text as norm
from gitmem.format.markdown import (
    CONFLICT_MARKER_RE,
    parse_topic_file,
    render_topic_file,
    split_lines,
)
from gitmem.merge.common import OURS_MARKER, SPLIT_MARKER, THEIRS_MARKER

TakenIds = Callable[[str, str], set[int]]
LINK_FIELDS = ("Supersedes", "Superseded-by", "Related")


@functools.lru_cache(maxsize=4096)
def _parse_cached(text: str, path: str) -> TopicFile | None:
    try:
        return parse_topic_file(text, path)
    except ParseError:
        return None


def parse_copy(text: str | None, path: str) -> TopicFile | None:
    """Parse once per merge (a file is read by the Id pass, the merge and the catalog); callers
    that change the result get their own copy of the entry list."""
    if text is None:
        return None
    topic = _parse_cached(text, path)
    return None if topic is None else dataclasses.replace(topic, entries=list(topic.entries))


def ids_of(topic: TopicFile | None) -> set[str]:
    return {e.id for e in topic.entries if e.id} if topic else set()


Located = tuple[str, Entry]  # (path, entry)


def _side_entries(
    side: dict[str, tuple[str | None, str | None]],
) -> tuple[dict[str, Located], dict[str, Entry]]:
    """(Id -> entry in this side's changed files, Id -> entry in their base versions)."""
    mine: dict[str, Located] = {}
    base: dict[str, Entry] = {}
    for path in sorted(side):
        before, after = (parse_copy(text, path) for text in side[path])
        for entry in before.entries if before else []:
            if entry.id:
                base.setdefault(entry.id, entry)
        for entry in after.entries if after else []:
            if entry.id:
                mine.setdefault(entry.id, (path, entry))
    return mine, base


def _words(entry: Entry) -> tuple[str, str]:
    return norm(entry.title), norm(entry.body)


def _same_entry(a: Located, b: Located) -> bool:
    """The same entry written on both sides: same file, same heading and body."""
    return a[0] == b[0] and _words(a[1]) == _words(b[1])


def _clash(ours: Located, theirs: Located, base: Entry | None) -> bool:
    """One Id, two different entries: allocated on both sides, or reused after a deletion.

    An entry whose heading and body both differ from the base entry of its Id is another entry
    that took a freed number, not an edit. Two edits of the same entry are no clash: the
    entry-level merge keeps one, or both between conflict markers.
    """
    if _same_entry(ours, theirs):
        return False
    if base is None:
        return True

    def changed(entry: Entry) -> bool:
        return (entry.title, entry.body, entry.fields) != (base.title, base.body, base.fields)

    def reused(entry: Entry) -> bool:
        return all(a != b for a, b in zip(_words(entry), _words(base), strict=True))

    if not (changed(ours[1]) and changed(theirs[1])):
        return False
    return reused(ours[1]) or reused(theirs[1])


def _relink(value: str, renumbered: dict[str, str]) -> str:
    for old, new in renumbered.items():
        value = re.sub(rf"(?<![\w-]){re.escape(old)}(?![\w-])", new, value)
    return value


_PLACEHOLDER_RE = re.compile(
    r"^## [^\r\n]*\r?\n<!-- gitmem-conflict ([0-9a-f]{16}) -->\r?\n(?:\r?\n\*\*Id:\*\*[^\r\n]*\r?\n)?",
    re.MULTILINE,
)


class ConflictBlocks:
    """Conflict blocks an earlier merge left in a file, held as one opaque entry while merging.

    A block spans several entries' text, so merging entry by entry would tear it apart. Each
    block that starts with an entry heading becomes a placeholder entry with that heading and the
    block's first Id: a side that did not touch the conflicted entry keeps the block as it is, a
    side that edited it collides with the whole block, and the block comes back byte for byte.
    """

    def __init__(self) -> None:
        self.saved: dict[str, str] = {}

    def protect(self, text: str | None) -> str | None:
        if text is None or "<<<<<<<" not in text:
            return text
        newline = "\r\n" if "\r\n" in text else "\n"
        for start, end in reversed(_conflict_spans(text)):
            block = text[start:end]
            lines = block.splitlines()
            if len(lines) < 2 or not lines[1].startswith("## "):
                continue  # not an entry-level block: merged as text around it
            if not block.endswith("\n"):
                block += newline
            key = hashlib.sha1(block.encode("utf-8")).hexdigest()[:16]
            self.saved[key] = block
            ident = _ID_LINE_RE.search(block)
            placeholder = f"{lines[1]}{newline}<!-- gitmem-conflict {key} -->{newline}"
            if ident:
                placeholder += f"{newline}**Id:** {ident.group(1)}{newline}"
            text = text[:start] + placeholder + text[end:]
        return text

    def restore(self, text: str, base: str | None = None, path: str = "") -> str:
        """Put the saved blocks back; a block nested in a new conflict is flattened (below)."""
        text = _PLACEHOLDER_RE.sub(lambda m: self.saved.get(m.group(1), m.group(0)), text)
        if base is None or text.count("<<<<<<<") < 2:
            return text
        return _flatten(text, parse_copy(self.restore(base), path), path)


_MARKER_LINE_RE = re.compile(r"^(?:<{7}|={7}|>{7})(?: [^\r\n]*)?\r?\n?", re.MULTILINE)


def _flatten(text: str, base: TopicFile | None, path: str) -> str:
    """Nested conflict blocks (an entry edited here while the other side still held an older
    conflict on it) lose the versions that are just the common base, and the duplicates; what
    is left is one flat block, or the entry itself when only one version remains."""
    if base is None:
        return text
    originals = {e.id: (e.title, e.body, e.fields) for e in base.entries if e.id}
    newline = "\r\n" if "\r\n" in text else "\n"
    for start, end in reversed(_conflict_spans(text)):
        block = text[start:end]
        if block.count("<<<<<<<") < 2:
            continue
        kept: list[str] = []
        seen: set[tuple[str, str, tuple[tuple[str, str], ...]]] = set()
        for part in _MARKER_LINE_RE.split(block):
            topic = parse_copy(part, path) if part.strip() else None
            if topic is None or len(topic.entries) != 1:
                continue
            entry = topic.entries[0]
            key = (entry.title, entry.body, tuple(sorted(entry.fields.items())))
            if key in seen or (entry.id and originals.get(entry.id) == (entry.title, entry.body,
                                                                         entry.fields)):
                continue
            seen.add(key)
            kept.append(part.rstrip("\r\n") + newline)
        if len(kept) == 1:
            text = text[:start] + kept[0] + text[end:]
        elif len(kept) == 2:
            flat = f"{OURS_MARKER}{newline}{kept[0]}{SPLIT_MARKER}{newline}{kept[1]}{THEIRS_MARKER}{newline}"
            text = text[:start] + flat + text[end:]
    return text


_ID_LINE_RE = re.compile(r"^\*\*Id:\*\*[ \t]+(\S+)", re.MULTILINE)


def _conflict_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every outermost <<<<<<< ... >>>>>>> block (nested blocks included)."""
    spans, depth, start, pos = [], 0, 0, 0
    for line in split_lines(text):
        marker = CONFLICT_MARKER_RE.match(line)
        if marker and marker.group(1).startswith("<"):
            start = pos if depth == 0 else start
            depth += 1
        elif marker and marker.group(1).startswith(">") and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, pos + len(line)))
        pos += len(line)
    return spans


def renumber_local_ids(
    ours_side: dict[str, tuple[str | None, str | None]],
    theirs_side: dict[str, tuple[str | None, str | None]],
    taken: TakenIds | None = None,
) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """Give ours' entries whose Id theirs uses for a different entry a free Id.

    `*_side` map each topic file a side changed to (base text, that side's text), None when absent.
    Returns (ours' rewritten texts by path, old Id -> new Id, notes). Deterministic: collisions are
    handled in Id order, each taking 1 + the highest number used on either side or in `taken`.
    """
    ours_new, base = _side_entries(ours_side)
    theirs_new, theirs_base = _side_entries(theirs_side)
    for ident, entry in theirs_base.items():
        base.setdefault(ident, entry)
    clashes = sorted(
        (i for i in ours_new if i in theirs_new and _clash(ours_new[i], theirs_new[i], base.get(i))),
        key=lambda i: (L.parse_id(i) is None, i),
    )
    renumbered: dict[str, str] = {}
    notes: list[str] = []
    used: dict[tuple[str, str], set[int]] = {}
    for old in clashes:
        parsed = L.parse_id(old)
        if parsed is None:
            notes.append(f"{old}: malformed Id used on both sides for different entries; kept both")
            continue
        key = (parsed.scope, parsed.layer)
        if key not in used:
            numbers = set(taken(*key)) if taken else set()
            for side in (ours_side, theirs_side):
                for path, texts in side.items():
                    for text in texts:
                        for ident in ids_of(parse_copy(text, path)):
                            other = L.parse_id(ident)
                            if other and (other.scope, other.layer) == key:
                                numbers.add(other.number)
            used[key] = numbers
        number = max(used[key], default=0) + 1
        used[key].add(number)
        renumbered[old] = L.format_id(parsed.scope, parsed.layer, number)
        notes.append(f"{old}: used on both machines for different entries; this machine's "
                     f"entry ({ours_new[old][0]}) is now {renumbered[old]}")
    rewritten: dict[str, str] = {}
    if not renumbered:
        return rewritten, renumbered, notes
    for path, (_base, text) in sorted(ours_side.items()):
        topic = parse_copy(text, path)
        if topic is None:
            continue
        changed = False
        for index, entry in enumerate(topic.entries):
            updates: dict[str, str | None] = {}
            if entry.id in renumbered and ours_new[entry.id][0] == path:
                updates["Id"] = renumbered[entry.id]
            for name in LINK_FIELDS:
                value = entry.fields.get(name)
                if value and _relink(value, renumbered) != value:
                    updates[name.replace("-", "_")] = _relink(value, renumbered)
            if updates:
                topic.entries[index] = entry.with_fields(**updates)
                changed = True
        if changed:
            rewritten[path] = render_topic_file(topic)
    return rewritten, renumbered, notes



def clear_parse_cache() -> None:
    """Drop the parsed texts kept for the current merge."""
    _parse_cached.cache_clear()
