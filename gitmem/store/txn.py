"""The record of one write (WriteTxn), located entries, and the subagent rule."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gitmem import caller
from gitmem.errors import SubagentWriteError
from gitmem.format.entry import Entry, TopicFile
from gitmem.fsio import read_text


@dataclass
class WriteTxn:
    """What one write verb changes; committed as one commit when the verb returns."""

    verb: str
    message: str = ""
    touched: list[str] = field(default_factory=list)
    parsed: dict[str, TopicFile] = field(default_factory=dict)  # what was written, to skip a re-parse
    # Topic files changed by a pull or a plain-git commit: their layer indexes are refreshed too.
    changed_elsewhere: list[str] = field(default_factory=list)
    cataloged: set[str] = field(default_factory=set)  # files whose catalog rows are already current
    # The bytes of each file before this write first changed it (None: it did not exist), so
    # that a write refused half-way puts every file back as it was.
    originals: dict[str, bytes | None] = field(default_factory=dict)
    # Secrets in what this write adds: None, the verb has no --allow-secret; False, it was not
    # given; True, it was (for a batch: by any of its writes).
    allow_secret: bool | None = None

    def note(self, relpath: str) -> None:
        if relpath not in self.touched:
            self.touched.append(relpath)


@dataclass(frozen=True)
class Located:
    """An entry together with where it lives."""

    entry: Entry
    path: str
    scope: str
    layer: str
    topic: str


def refuse_subagent(verb: str) -> None:
    """Subagents read memory but never write it (GITMEM_SUBAGENT=1)."""
    if caller.env("GITMEM_SUBAGENT") == "1":
        raise SubagentWriteError(
            f"`gitmem {verb}` refused: subagents do not write memory (GITMEM_SUBAGENT=1); report your findings to your caller instead"
        )


def commit_message(text: str) -> str:
    """A commit message as gitmem records it: a likely secret in it (a reason given for a
    rejection, a title a merge note quotes) masked as printed text is. The write gate keeps
    secrets out of the files; a message is not a file, and is never refused for one."""
    from gitmem.secrets.mask import hide_secrets

    return hide_secrets(text)


def last_look(root: Path, txn: WriteTxn, committed: Callable[[str], str | None]) -> None:
    """What a write is refused for just before it commits (its files are then put back): a file
    gitmem could not read again, or a likely secret it adds."""
    from gitmem.store import integrity

    integrity.refuse_unparseable(root, txn.touched, committed)
    if not txn.allow_secret:
        refuse_written_secrets(root, txn, committed)


def refuse_written_secrets(root: Path, txn: WriteTxn, committed: Callable[[str], str | None]) -> None:
    """A likely secret in a line this write brings into the next commit is refused, whichever
    field or rendering put it there: each verb checks its own inputs first, with a clearer
    message; this catches what one of them missed. The lines are compared with what each file
    holds at HEAD, so a hand edit the write would commit along counts as well; text the write
    only moves (archived, moved to another file, the same words out of a JSON string) is not
    new. GITMEM_ALLOW_SECRET=1 counts here, as for every hand edit."""
    from gitmem.secrets import scan

    if scan.allowed_by_environment():
        return
    found = []  # (finding, its line): one file's text at a time (an import writes thousands)
    known = scan.store_tokens(root)
    for relpath in txn.touched:
        try:
            new = read_text(root / relpath)
        except (OSError, UnicodeDecodeError):
            continue  # removed, or not text
        added = scan.added_lines(committed(relpath), new)
        by_number = dict(added)
        found += [(f, by_number[f.line]) for f in scan.scan_lines(added, path=relpath, known=known)]
    if not found:
        return
    held = "\n".join(text for text in map(committed, txn.touched) if text)
    held += "\n" + scan.unescaped(held)
    found = [(f, line) for f, line in found if line.strip() not in held]
    if found:
        # A verb without --allow-secret moves text the store (or a space) held already, or
        # commits a hand edit along: the variable that lets hand edits through lets it through.
        way_out = ("pass --allow-secret to record it anyway" if txn.allow_secret is False
                   else scan.HAND_EDIT_WAY_OUT)
        raise scan.refusal([f for f, _line in found], "", way_out)
