"""One Id in two topic files after a plain `git pull`: two machines each gave the next number to a
new entry, in different files, so no file-level merge saw both. `gitmem sync` catches that before
it merges; after a plain git merge the post-merge hook (and `gitmem check --fix`) settles it the
same way, with the same code (merge/prep.py): this machine's entry, the one the published commit
does not hold, gets the next free number of its scope and layer, and links to it (Supersedes,
Superseded-by, Related) in this machine's changed files follow. Published Ids never change.

One Id in two files can also be one entry: moved to another file on one side and edited in place
on the other. After a merge commit the post-merge hook knows both parents, merges the two files
again as `gitmem sync` does (merge/moves.py) and keeps the entry once, with the edit, where it
was moved to; only what remains is renumbered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gitmem.errors import GitmemError, ParseError
from gitmem.format import layers as L
from gitmem.format.entry import TopicFile
from gitmem.format.markdown import conflict_marker_lines, render_topic_file
from gitmem.fsio import read_regular_file
from gitmem.git import binary as gitcli
from gitmem.git.gitlog import first_touching
from gitmem.merge.entries import same_entry
from gitmem.merge.files import merge_file
from gitmem.merge.moves import align_moves, only_generated
from gitmem.merge.prep import clear_parse_cache, ids_of, parse_copy, renumber_local_ids
from gitmem.store.tree import read_memory_text

if TYPE_CHECKING:
    from gitmem.store.store import Store, WriteTxn

Side = dict[str, tuple[str | None, str | None]]


@dataclass
class Settled:
    """What settling did: old Id -> new Id, notes, Ids left as they were, and the commit."""

    renumbered: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)  # Ids put back together in the file they moved to
    copies: list[tuple[str, str]] = field(default_factory=list)  # (old, new) of every copy renumbered
    commit: str | None = None


def published_ref(store: Store) -> str | None:
    """The commit this machine's branch is published as (its remote-tracking branch), if any."""
    ref = f"refs/remotes/origin/{store.git.branch()}"
    try:
        return ref if store.git.read_file_at(ref, "memory.json") is not None else None
    except Exception:  # noqa: BLE001 - no such ref: nothing was published
        return None


def _text_at(store: Store, rev: str, path: str) -> str | None:
    data = store.git.read_file_at(rev, path)
    return None if data is None else data.decode("utf-8", errors="replace")


def _sides(store: Store, published: str, duplicates: dict[str, list[str]],
           settled: Settled) -> tuple[Side, Side, frozenset[tuple[str, str]]]:
    """This machine's changed topic files, from the published commit only the entries whose Id
    is duplicated now, and (path, Id) of those published copies: a changed file can hold this
    machine's entry of one collision and the published entry of another, so sides are decided
    entry by entry."""
    theirs: dict[str, list[str]] = {}
    for ident, paths in sorted(duplicates.items()):
        holding = [p for p in paths if ident in ids_of(parse_copy(_text_at(store, published, p), p))]
        if len(holding) == 1:
            theirs.setdefault(holding[0], []).append(ident)
        else:  # no copy published, or several: nothing tells which one is this machine's
            settled.left.append(ident)
    theirs_side: Side = {}
    for path, idents in theirs.items():
        topic = parse_copy(_text_at(store, published, path), path)
        if topic is not None:
            topic.entries = [e for e in topic.entries if e.id in idents]
            theirs_side[path] = (None, render_topic_file(topic))
    changed = set(store.git.changed_between(published, store.git.head_oid()))
    ours_side: Side = {}
    for path in sorted(changed):
        if L.classify_path(path).kind != "topic" or not (store.root / path).is_file():
            continue
        text = read_memory_text(store.root, path)
        if not conflict_marker_lines(text):
            ours_side[path] = (None, text)
    published_copies = frozenset((path, ident) for path, idents in theirs.items() for ident in idents)
    return ours_side, theirs_side, published_copies


def _follow_moves(store: Store, txn: WriteTxn, merged: tuple[str, str],
                  duplicates: dict[str, list[str]], settled: Settled) -> None:
    """An entry moved to another file on one side of the merge and edited in place on the other
    is in both files now (the merge driver merges one file at a time). Merge those two files
    again as `gitmem sync` does (merge/moves.py: the move applied to the base and the edit) and
    keep the result when it is clean and the files still hold what the merge commit holds; the
    Id then is in one file and leaves `duplicates`."""
    ours_rev, theirs_rev = merged
    base = store.git.merge_base(ours_rev, theirs_rev)
    if base is None or not any(len(found) >= 2 for found in duplicates.values()):
        return
    revs = {"base": base, "ours": ours_rev, "theirs": theirs_rev}

    def texts(side: str, path: str) -> str | None:
        return _text_at(store, revs[side], path)

    def topics(rev: str) -> set[str]:
        return {p for p in store.git.changed_between(base, rev) if L.classify_path(p).kind == "topic"}

    aligned = align_moves(texts, topics(ours_rev), topics(theirs_rev))
    if not aligned.moved:
        return
    results: dict[str, str | None] = {}
    for path in sorted(aligned.paths()):
        committed = store.git.read_file_at("HEAD", path)
        if committed != _working_bytes(store, path):
            return  # changed since the merge commit: leave it to check --fix and the person
        plain = merge_file(path, *(texts(side, path) for side in ("base", "ours", "theirs")))
        if (None if plain is None else plain.text.encode("utf-8")) != committed:
            return  # the merge commit is not what this merge makes of the file (a conflict block
            # held from before, Ids renumbered by the driver, a hand-made merge): leave it
        three = [aligned.texts.get((side, path), texts(side, path)) for side in ("base", "ours", "theirs")]
        result = merge_file(path, *three)
        if result is not None and (result.conflicts or parse_copy(result.text, path) is None):
            return  # two edits of the moved entry: left as the merge made it (both kept)
        results[path] = None if result is None else result.text
    for path, text in results.items():
        if text is None:  # the move emptied the file it left, as `gitmem mv` removes it
            store.remove_file(txn, path)
        else:
            store.write_file(txn, path, text)
    for ident in aligned.moved:
        duplicates.pop(ident, None)
    settled.moved = sorted(aligned.moved)
    settled.notes += aligned.notes()


def _working_bytes(store: Store, path: str) -> bytes | None:
    try:
        return read_regular_file(store.root / path)  # never waits on a FIFO
    except OSError:
        return None


def settle_collisions(store: Store, published: str | None, *, absorb: bool = True,
                      merged: tuple[str, str] | None = None, every: bool = False) -> Settled:
    """Renumber this machine's entries whose Id the published commit gives to another entry in
    another topic file; one commit. Without a published commit (or when it holds no copy or
    several) nothing tells which copy is this machine's: those are left, unless `every`
    (check --fix), which settles them by history (`_settle_by_history`). `absorb`: commit hand
    edits first, as every write does (check --fix normalizes them itself). `merged`: the two
    parents of the merge commit just made (post-merge), where an entry moved on one side and
    edited on the other is first put back together."""
    settled = Settled()
    if published is None and not every:
        return settled
    with store.reading():
        store.catch_up_catalog()
    if not store.catalog.duplicates():
        return settled  # the common case: no write, no hand edit committed along
    with store.writing("renumber", absorb=absorb) as txn:
        duplicates = store.catalog.duplicates()
        if not duplicates:
            return settled
        if merged is not None:
            _follow_moves(store, txn, merged, duplicates, settled)
            if not duplicates:
                txn.message = "merge: " + "; ".join(settled.notes)
                return settled
        if every:  # identical copies are one entry: the later ones go, whoever published them
            _settle_by_history(store, txn, duplicates, sorted(duplicates), settled, identical=True)
        if published is not None:
            _renumber_unpublished(store, txn, published, duplicates, settled)
        else:
            settled.left = sorted(duplicates)
        later = _settle_by_history(store, txn, duplicates, list(settled.left), settled) if every else []
        why = " (the published commit gives the same Id to another entry)" if settled.copies else ""
        pairs = ", ".join(f"{old} -> {new}" for old, new in [*settled.copies, *later])
        txn.message = (f"renumber: {pairs or 'duplicate copies removed'}{why}\n\n"
                       + "\n".join(f"- {note}" for note in settled.notes) + "\n")
    changed = settled.renumbered or settled.moved or settled.notes
    settled.commit = store.git.head_oid() if changed else None
    return settled


def _renumber_unpublished(store: Store, txn: WriteTxn, published: str,
                          duplicates: dict[str, list[str]], settled: Settled) -> None:
    ours_side, theirs_side, published_copies = _sides(store, published, duplicates, settled)
    copies: dict[tuple[str, str], str] = {}
    rewritten, settled.renumbered, notes = renumber_local_ids(
        ours_side, theirs_side, store.catalog.numbers, published_copies, copies)
    settled.notes += notes
    settled.copies = sorted((old, new) for (_path, old), new in copies.items())
    clear_parse_cache()
    for path, text in sorted(rewritten.items()):
        store.write_file(txn, path, text)


def _settle_by_history(store: Store, txn: WriteTxn, duplicates: dict[str, list[str]],
                       idents: list[str], settled: Settled, *,
                       identical: bool = False) -> list[tuple[str, str]]:
    """Ids in several files with no published copy to go by (check --fix): the copy whose Id
    line was committed first keeps the Id (path order breaks a tie, so every machine decides
    alike); a later copy that is the same entry is removed, a different one takes the next free
    number. A copy inside a conflict block, or in a file that cannot be read, is left.
    `identical`: only the copies that are the same entry are settled (removed). Settled Ids leave
    `duplicates` and `settled.left`. Returns (old, new) of each renumbering."""
    done: list[tuple[str, str]] = []
    allocated: set[str] = {new for _old, new in settled.copies}
    for ident in idents:
        paths = sorted(duplicates.get(ident, []), key=lambda p: (_first_committed(store, p, ident), p))
        documents = {p: _readable(store, p) for p in paths}
        kept = documents[paths[0]]
        index = kept.find(ident) if kept is not None else None
        if kept is None or index is None:
            continue
        original = kept.entries[index]
        left = [paths[0]]
        for path in paths[1:]:
            document = documents[path]
            at = document.find(ident) if document is not None else None
            if document is None or at is None:
                left.append(path)
                continue
            copy = document.entries[at]
            if identical and not same_entry(copy, original):
                left.append(path)
                continue
            if same_entry(copy, original):
                del document.entries[at]
                settled.notes.append(f"{ident}: the same entry was in {paths[0]} and {path}; "
                                     f"the later copy, in {path}, was removed")
            else:
                new = _next_free(store, ident, allocated)
                if new is None:
                    left.append(path)
                    continue
                document.entries[at] = copy.with_fields(Id=new)
                done.append((ident, new))
                settled.notes.append(f"{ident}: in {paths[0]} and, for another entry committed "
                                     f"later, in {path}; that one is now {new}")
            if not document.entries and only_generated(document):
                store.remove_file(txn, path)
            else:
                store.write_file(txn, path, render_topic_file(document))
        if len(left) == 1:
            duplicates.pop(ident, None)
            if ident in settled.left:
                settled.left.remove(ident)
        else:
            duplicates[ident] = left
    return done


def _readable(store: Store, path: str) -> TopicFile | None:
    """The working copy of a topic file, unless it cannot be parsed or holds conflict markers."""
    try:
        text = read_memory_text(store.root, path)
    except (OSError, ParseError):
        return None
    return None if conflict_marker_lines(text) else parse_copy(text, path)


def _first_committed(store: Store, path: str, ident: str) -> tuple[float, int]:
    """When the Id line was first committed in `path`: (commit time, commits behind it, so that
    an ancestor comes first within one second); never committed: last."""
    try:
        found = first_touching(store.root, f"**Id:** {ident}", path)
        if found is None:
            return math.inf, 0
        oid, stamp = found
        depth = gitcli.run(store.root, ["rev-list", "--count", oid]).decode().strip()
        return float(stamp), int(depth)
    except (GitmemError, ValueError):
        return math.inf, 0


def _next_free(store: Store, ident: str, allocated: set[str]) -> str | None:
    parsed = L.parse_id(ident)
    if parsed is None:
        return None
    numbers = set(store.catalog.numbers(parsed.scope, parsed.layer))
    for other in allocated:
        mine = L.parse_id(other)
        if mine and (mine.scope, mine.layer) == (parsed.scope, parsed.layer):
            numbers.add(mine.number)
    new = L.format_id(parsed.scope, parsed.layer, max(numbers, default=0) + 1)
    allocated.add(new)
    return new
