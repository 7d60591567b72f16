"""Texts made ready for the entry-level merge (pure: texts in, texts out).

- Conflict blocks an earlier merge left in a file are held as one placeholder entry each while
  merging, and put back (flattened when an entry was edited again against one) afterwards.
- An Id is one entry. When the base has the Id, both sides' versions are that entry, however
  much each changed it: the entry-level merge keeps one, combines them, or writes both between
  conflict markers. Never a renumbering: that would turn two edits of one fact into two live
  facts and hide the conflict. (Ids are never re-used, so a number the base had cannot name a
  new entry on one side.)
- An Id the base does not have, used on both sides for different entries (both machines
  allocated the next number): the entry of the side being merged here, this machine's, gets the
  next free number of its scope+layer, and links to it (Supersedes, Superseded-by, Related) in
  this machine's changed files follow. Ids as published on the remote never change. The rule is
  applied before the per-file merges, across files, so a collision between two topic files is
  caught too.

Used by `gitmem sync` (sync/commits.py) and by the git merge driver (githooks/driver.py).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable

from gitmem.errors import ParseError
from gitmem.format import layers as L
from gitmem.format.conflicts import HeldBlocks, conflict_spans, versions_of
from gitmem.format.entry import Entry, TopicFile
from gitmem.format.entry import normalize_text as norm
from gitmem.format.markdown import parse_topic_file, render_topic_file
from gitmem.merge.common import Labels, conflict_block

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
    side: dict[str, tuple[str | None, str | None]], others: frozenset[tuple[str, str]] = frozenset(),
) -> tuple[dict[str, list[Located]], dict[str, Entry]]:
    """(Id -> every copy in this side's changed files, in path order; Id -> entry in their base
    versions); entries listed in `others` as (path, Id) are not this side's. A side can hold an
    Id in several files: the merge driver, merging one file at a time, gives two of this
    machine's entries in two files the same next number."""
    mine: dict[str, list[Located]] = {}
    base: dict[str, Entry] = {}
    for path in sorted(side):
        before, after = (parse_copy(text, path) for text in side[path])
        for entry in before.entries if before else []:
            if entry.id:
                base.setdefault(entry.id, entry)
        for entry in after.entries if after else []:
            if entry.id and (path, entry.id) not in others:
                mine.setdefault(entry.id, []).append((path, entry))
    return mine, base


def _words(entry: Entry) -> tuple[str, str]:
    return norm(entry.title), norm(entry.body)


def _same_entry(a: Located, b: Located) -> bool:
    """The same entry written on both sides: same file, same heading and body."""
    return a[0] == b[0] and _words(a[1]) == _words(b[1])


def _clash(ours: Located, theirs: Located, base: Entry | None) -> bool:
    """One Id, two different entries: a number both machines allocated to a new entry.

    An Id the base has is one entry on both sides, whatever each did to it: two edits of it are
    for the entry-level merge to settle (combined, or a conflict), never a renumbering.
    """
    return base is None and not _same_entry(ours, theirs)


def _relink(value: str, renumbered: dict[str, str]) -> str:
    for old, new in renumbered.items():
        value = re.sub(rf"(?<![\w-]){re.escape(old)}(?![\w-])", new, value)
    return value


class ConflictBlocks(HeldBlocks):
    """Conflict blocks an earlier merge left in a file, held as one opaque entry while merging.

    A block spans several entries' text, so merging entry by entry would tear it apart: a side
    that did not touch the conflicted entry keeps the block as it is, a side that edited it
    collides with the whole block, and the block comes back byte for byte.
    """

    def protect(self, text: str | None) -> str | None:
        return None if text is None else self.hold(text)

    def restore(self, text: str, base: str | None = None, path: str = "") -> str:
        """Put the saved blocks back; a block nested in a new conflict is flattened (below)."""
        text = self.put_back(text)
        if base is None or text.count("<<<<<<<") < 2:
            return text
        return _flatten(text, parse_copy(self.restore(base), path), path)


def _flatten(text: str, base: TopicFile | None, path: str) -> str:
    """Nested conflict blocks (an entry edited here while the other side still held an older
    conflict on it) lose the versions that are just the common base, and the duplicates; what
    is left is one flat block, each version under its own label, or the entry itself when only
    one version remains."""
    if base is None:
        return text
    originals = {e.id: (e.title, e.body, e.fields) for e in base.entries if e.id}
    newline = "\r\n" if "\r\n" in text else "\n"
    for start, end in reversed(conflict_spans(text)):
        block = text[start:end]
        if block.count("<<<<<<<") < 2:
            continue
        kept: list[tuple[str, str]] = []
        seen: set[tuple[str, str, tuple[tuple[str, str], ...]]] = set()
        for version in versions_of(block):
            topic = parse_copy(version.text, path)
            if topic is None or len(topic.entries) != 1:
                continue
            entry = topic.entries[0]
            key = (entry.title, entry.body, tuple(sorted(entry.fields.items())))
            if key in seen or (entry.id and originals.get(entry.id) == (entry.title, entry.body,
                                                                         entry.fields)):
                continue
            seen.add(key)
            kept.append((version.label, version.text.rstrip("\r\n") + newline))
        if len(kept) == 1:
            text = text[:start] + kept[0][1] + text[end:]
        elif len(kept) == 2:
            labels = Labels(kept[0][0], kept[1][0])
            text = text[:start] + conflict_block(kept[0][1], kept[1][1], newline, labels) + text[end:]
    return text


def _clashing_copies(ours: list[Located], theirs: list[Located], base: Entry | None) -> list[Located]:
    """Ours' copies of an Id that are none of theirs' entries under it."""
    return [copy for copy in ours if all(_clash(copy, other, base) for other in theirs)]


def renumber_local_ids(
    ours_side: dict[str, tuple[str | None, str | None]],
    theirs_side: dict[str, tuple[str | None, str | None]],
    taken: TakenIds | None = None,
    theirs_in_ours: frozenset[tuple[str, str]] = frozenset(),
    copies: dict[tuple[str, str], str] | None = None,
) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """Give ours' entries whose Id theirs uses for a different entry a free Id.

    `*_side` map each topic file a side changed to (base text, that side's text), None when absent.
    `theirs_in_ours` lists, as (path, Id), entries of ours' texts that are theirs' (after a merge
    commit a file holds both sides' entries): they keep their Id and their links. Sides are
    decided entry by entry, never file by file. Each of ours' copies of such an Id (one per file
    it is in) gets a number of its own.
    Returns (ours' rewritten texts by path, old Id -> new Id of its first copy (the one links
    follow), notes naming every copy). `copies`, when given, receives (path, old Id) -> new Id
    of every copy renumbered. Deterministic: collisions are handled in Id order, then path
    order, each taking 1 + the highest number used on either side or in `taken`.
    """
    ours_new, base = _side_entries(ours_side, theirs_in_ours)
    theirs_new, theirs_base = _side_entries(theirs_side)
    for ident, entry in theirs_base.items():
        base.setdefault(ident, entry)
    clashing = {i: found for i in ours_new if i in theirs_new
                and (found := _clashing_copies(ours_new[i], theirs_new[i], base.get(i)))}
    clashes = sorted(clashing, key=lambda i: (L.parse_id(i) is None, i))
    renumbered: dict[str, str] = {}
    places: dict[tuple[str, str], str] = {}  # (path, old Id) -> new Id
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
        for path, _entry in clashing[old]:
            number = max(used[key], default=0) + 1
            used[key].add(number)
            places[(path, old)] = L.format_id(parsed.scope, parsed.layer, number)
            renumbered.setdefault(old, places[(path, old)])
            notes.append(f"{old}: used on both machines for different entries; this machine's "
                         f"entry ({path}) is now {places[(path, old)]}")
    if copies is not None:
        copies.update(places)
    rewritten: dict[str, str] = {}
    if not renumbered:
        return rewritten, renumbered, notes
    for path, (_base, text) in sorted(ours_side.items()):
        topic = parse_copy(text, path)
        if topic is None:
            continue
        changed = False
        for index, entry in enumerate(topic.entries):
            if entry.id and (path, entry.id) in theirs_in_ours:
                continue
            updates: dict[str, str | None] = {}
            if entry.id and (path, entry.id) in places:
                updates["Id"] = places[(path, entry.id)]
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
