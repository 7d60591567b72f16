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

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gitmem.format import layers as L
from gitmem.format.markdown import conflict_marker_lines, render_topic_file
from gitmem.fsio import read_regular_file
from gitmem.merge.files import merge_file
from gitmem.merge.moves import align_moves
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
           settled: Settled) -> tuple[Side, Side]:
    """This machine's changed topic files (every entry of them) and, from the published
    commit, only the entries whose Id is duplicated now."""
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
    for path in sorted(changed - set(theirs_side)):
        if L.classify_path(path).kind != "topic" or not (store.root / path).is_file():
            continue
        text = read_memory_text(store.root, path)
        if not conflict_marker_lines(text):
            ours_side[path] = (None, text)
    return ours_side, theirs_side


def _follow_moves(store: Store, txn: WriteTxn, merged: tuple[str, str],
                  duplicates: dict[str, list[str]], settled: Settled) -> None:
    """An entry moved to another file on one side of the merge and edited in place on the other
    is in both files now (the merge driver merges one file at a time). Merge those two files
    again as `gitmem sync` does (merge/moves.py: the move applied to the base and the edit) and
    keep the result when it is clean and the files still hold what the merge commit holds; the
    Id then is in one file and leaves `duplicates`."""
    ours_rev, theirs_rev = merged
    base = store.git.merge_base(ours_rev, theirs_rev)
    paths = {p for found in duplicates.values() if len(found) == 2 for p in found}
    if base is None or not paths:
        return
    revs = {"base": base, "ours": ours_rev, "theirs": theirs_rev}

    def texts(side: str, path: str) -> str | None:
        return _text_at(store, revs[side], path)

    aligned = align_moves(texts, paths, paths)
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
                      merged: tuple[str, str] | None = None) -> Settled:
    """Renumber this machine's entries whose Id the published commit gives to another entry in
    another topic file; one commit. Nothing to do without a published commit. `absorb`: commit
    hand edits first, as every write does (check --fix normalizes them itself). `merged`: the
    two parents of the merge commit just made (post-merge), where an entry moved on one side
    and edited on the other is first put back together."""
    settled = Settled()
    if published is None:
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
        ours_side, theirs_side = _sides(store, published, duplicates, settled)
        rewritten, settled.renumbered, notes = renumber_local_ids(
            ours_side, theirs_side, store.catalog.numbers)
        settled.notes += notes
        clear_parse_cache()
        for path, text in sorted(rewritten.items()):
            store.write_file(txn, path, text)
        pairs = ", ".join(f"{old} -> {new}" for old, new in sorted(settled.renumbered.items()))
        txn.message = (f"renumber: {pairs} (the published commit gives the same Id to another "
                       "entry)\n\n" + "\n".join(f"- {note}" for note in settled.notes) + "\n")
    settled.commit = store.git.head_oid() if settled.renumbered or settled.moved else None
    return settled
