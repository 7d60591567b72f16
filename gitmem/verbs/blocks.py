"""Writing into files that hold conflict blocks: a block stays byte for byte, or the write is refused.

A block holds two versions of one entry (or state/working section) between marker lines. A write
verb that changes some other entry of the same file reads the file with every entry-level block
held aside as one stand-in entry, changes what it changes, and puts the blocks back untouched.
A write that would change the conflicted entry or section itself is refused (exit 3) with the way
out: `gitmem resolve`. Nothing is written before the refusal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gitmem.errors import ConflictError
from gitmem.format.conflicts import HeldBlocks, block_titled
from gitmem.format.entry import Entry, TopicFile
from gitmem.format.markdown import parse_topic_file, render_topic_file
from gitmem.store.tree import read_memory_text

if TYPE_CHECKING:
    from gitmem.store.store import Store, WriteTxn


def conflict_refusal(verb: str, what: str, ref: str, where: str) -> ConflictError:
    """The one-line refusal, naming the real ways out."""
    return ConflictError(
        f"`gitmem {verb}` refused: {what} is in conflict at {where} (two versions between"
        f" markers); settle it first with `gitmem resolve {ref} --ours|--theirs|--both`, or edit"
        f" the file and run `gitmem resolve {ref}` (`gitmem conflicts` lists them); nothing was written"
    )


@dataclass
class HeldFile:
    """A memory file parsed with its entry-level conflict blocks held as stand-in entries."""

    relpath: str
    text: str  # as on disk
    held: HeldBlocks
    document: TopicFile

    def _line_of(self, block: str) -> int:
        at = self.text.find(block.rstrip("\r\n"))
        return self.text.count("\n", 0, max(at, 0)) + 1

    def refuse_if_held(self, entry: Entry, verb: str) -> None:
        """ConflictError when `entry` is the stand-in of a conflict block."""
        block = self.held.block(entry.body)
        if block is None:
            return
        where = f"{self.relpath}:{self._line_of(block)}"
        what = entry.id or f"section {entry.title!r}"
        raise conflict_refusal(verb, what, entry.id or where, where)

    def refuse_section(self, title: str, verb: str) -> None:
        """ConflictError when a version of the section with this heading is in a block."""
        block = block_titled(self.text, title)
        if block is not None:
            where = f"{self.relpath}:{block.line}"
            raise conflict_refusal(verb, f"section {title!r}", where, where)

    def render(self) -> str:
        return self.held.put_back(render_topic_file(self.document))


def open_held(store: Store, relpath: str) -> HeldFile | None:
    """The file with its blocks held aside; None when it does not exist."""
    try:
        text = read_memory_text(store.root, relpath)  # ParseError (path:line) when unreadable
    except FileNotFoundError:
        return None
    held = HeldBlocks()
    return HeldFile(relpath, text, held, parse_topic_file(held.hold(text), relpath))


def save_held(store: Store, txn: WriteTxn, edit: HeldFile) -> bool:
    """Write the changed file, every block back in place; returns whether it changed."""
    if not edit.held.saved:  # nothing held: the parse is the file, the catalog may reuse it
        return store.write_topic(txn, edit.relpath, edit.document)
    return store.write_file(txn, edit.relpath, edit.render())
