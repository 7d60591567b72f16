"""The record of one write (WriteTxn), located entries, and the subagent rule."""

from __future__ import annotations

from dataclasses import dataclass, field

from gitmem import caller
from gitmem.errors import SubagentWriteError
from gitmem.format.entry import Entry, TopicFile


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
