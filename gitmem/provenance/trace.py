"""Following one entry through the store's git history, by its Id, across files.

An entry is the entry holding `**Id:** <id>` wherever it lives: when someone moves it to another
topic file (by hand, or a topic rename), the next commit shows it in the new file and the trace
goes on there. The commits that changed the entry come from the history index (index.py: read
once per commit, extended to HEAD on use), with every file the entry ever lived in; only those
files of each such commit and its parents are read (each file version parsed once). `versions_at`
(one commit: `as-of`, `revert --to`) searches the commit's tree for files holding the id instead
(memoized per subtree and blob).

A commit *changed* the entry when the entry (its file, heading, body and fields) differs from its
state in every parent — git's own rule for `git log PATH`, so an edit made on another machine is
credited to that machine's commit, not to the merge that brought it here.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass

from gitmem import caller
from gitmem.errors import InvalidInputError, NotFoundError, ParseError
from gitmem.format import layers as L
from gitmem.format.entry import Entry
from gitmem.format.markdown import parse_topic_file
from gitmem.git.graph import Graph
from gitmem.git.history import CommitInfo, NeedleFinder
from gitmem.git.repo import GitRepo
from gitmem.provenance.index import MEMORY_FOLDERS, HistoryIndex, Progress

__all__ = ["MEMORY_FOLDERS", "Change", "EntryTrace", "Shown", "Version", "commit_date", "subject",
           "summarize"]
_SHORT = 60


@dataclass(frozen=True)
class Version:
    """The entry as one commit holds it."""

    path: str
    entry: Entry

    @property
    def key(self) -> tuple[object, ...]:
        fields = tuple(sorted(self.entry.fields.items()))
        return (self.path, self.entry.title, self.entry.body, fields)

    @property
    def text(self) -> str:
        """The entry's Markdown as it was written (trailing blank lines dropped)."""
        return (self.entry.raw or "").rstrip("\r\n") + "\n"


@dataclass(frozen=True)
class Change:
    """One commit that created, changed, moved or removed the entry."""

    commit: CommitInfo
    kind: str  # created | changed | removed
    before: Version | None
    after: Version | None
    summary: str

    def as_json(self, *, with_text: bool = False) -> dict[str, object]:
        data: dict[str, object] = {
            "commit": self.commit.oid,
            "short": self.commit.oid[:7],
            "date": commit_date(self.commit),
            "author": self.commit.author,
            "machine": self.commit.machine,
            "message": subject(self.commit.message),
            "kind": self.kind,
            "path": where.path if (where := self.after or self.before) else None,
            "summary": self.summary,
        }
        if with_text:
            data["text"] = self.after.text if self.after else None
        return data


def commit_date(commit: CommitInfo) -> str:
    return caller.local_time(commit.time).isoformat(timespec="seconds")


def subject(message: str) -> str:
    return message.strip().split("\n", 1)[0]


class EntryTrace:
    """The versions of one entry id in the commits of one store."""

    def __init__(self, git: GitRepo, entry_id: str, progress: Progress | None = None) -> None:
        if L.parse_id(entry_id) is None:
            raise InvalidInputError(f"malformed Id {entry_id!r} (expected <scope>-<abbr>-<NNNN>)")
        self.entry_id = entry_id
        self.history = git
        self.progress = progress  # told how far reading history into the index got
        self._finder: NeedleFinder = self.history.needle_finder(entry_id.encode(), MEMORY_FOLDERS)
        self._parsed: dict[str, list[Entry]] = {}
        self._states: dict[str, tuple[Version, ...]] = {}

    def versions_at(self, oid: str, near: str | None = None) -> tuple[Version, ...]:
        """The entry in commit `oid` (usually one; two while a copy exists in two files);
        `near`, a neighbouring commit already read, makes it a diff away."""
        cached = self._states.get(oid)
        if cached is None:
            cached = tuple(Version(path, entry) for path, blob in self._finder.at(oid, near)
                           for entry in self._entries(path, blob))
            self._states[oid] = cached
        return cached

    def _versions_in(self, graph: Graph, oid: str, paths: list[str]) -> tuple[Version, ...]:
        """versions_at, reading only `paths` (sorted): every file the entry ever lived in."""
        cached = self._states.get(oid)
        if cached is None:
            cached = tuple(Version(path, entry) for path in paths
                           if (blob := graph.blob_at(oid, path)) is not None
                           for entry in self._entries(path, blob))
            self._states[oid] = cached
        return cached

    def _entries(self, path: str, blob: str) -> list[Entry]:
        found = self._parsed.get(blob)
        if found is None:
            try:
                text = self.history.read_blob(blob).decode("utf-8")
                document = parse_topic_file(text, path)
                found = [e for e in document.entries if e.id == self.entry_id]
            except (UnicodeDecodeError, ParseError):
                found = []  # a version that cannot be read is skipped, never fatal
            self._parsed[blob] = found
        return found

    def _indexed(self) -> tuple[list[str], list[str], Graph]:
        """The commits the index says may have changed the entry (newest first), every file it
        lived in, and the graph to read them from."""
        with HistoryIndex(self.history, self.progress) as index:
            return index.commits_changing(self.entry_id), index.paths_of(self.entry_id), index.graph

    def _change_at(self, graph: Graph, oid: str, paths: list[str]) -> Change | None:
        """The change commit `oid` made to the entry, or None (a reformatting, or a side of a
        merge that already had it)."""
        commit = self.history.commit_info(oid)
        here = self._versions_in(graph, oid, paths)
        before = [self._versions_in(graph, p, paths) for p in commit.parents]
        keys = _keys(here)
        if before and any(_keys(b) == keys for b in before):
            return None
        prev = next((b for b in before if b), ())
        if not here and not prev:
            return None
        kind = "created" if not prev else "removed" if not here else "changed"
        old = prev[0] if prev else None
        new = here[0] if here else None
        return Change(commit, kind, old, new, summarize(old, new))

    def iter_changes(self) -> Iterator[Change]:
        """Every commit reachable from HEAD that created, changed, moved or removed the entry,
        newest first, each read (versions, summary) only when it is asked for."""
        oids, paths, graph = self._indexed()
        for oid in oids:
            change = self._change_at(graph, oid, paths)
            if change is not None:
                yield change

    def changes(self, limit: int | None = None) -> list[Change]:
        """The newest `limit` changes (None: all), newest first; NotFoundError when none."""
        out: list[Change] = []
        for change in self.iter_changes():
            out.append(change)
            if limit is not None and len(out) >= limit:
                break
        if not out:
            raise NotFoundError(f"no entry with Id {self.entry_id} in the history of this store")
        return out

    def shown(self, limit: int | None) -> Shown:
        """The newest `limit` changes (None: all) and the one that created the entry, reading
        only those: the commits between them are counted, not read."""
        oids, paths, graph = self._indexed()
        newest: list[Change] = []
        position = 0
        while position < len(oids) and (limit is None or len(newest) < limit):
            change = self._change_at(graph, oids[position], paths)
            position += 1
            if change is not None:
                newest.append(change)
        oldest, created, first = len(oids), None, None
        while oldest > position:  # the oldest commit that created it, read from the oldest up
            oldest -= 1
            change = self._change_at(graph, oids[oldest], paths)
            if change is not None:
                first = first or change
                if change.kind == "created":
                    created = change
                    break
        created = created or next((c for c in reversed(newest) if c.kind == "created"), None) or first
        if created is None and not newest:
            raise NotFoundError(f"no entry with Id {self.entry_id} in the history of this store")
        return Shown(newest, created or newest[-1], max(0, oldest - position))


@dataclass(frozen=True)
class Shown:
    """Part of an entry's history: its newest changes (newest first), the change that created
    it, and how many commits between them were not read (at most that many changes)."""

    newest: list[Change]
    created: Change
    unread: int


def _keys(versions: tuple[Version, ...]) -> tuple[tuple[object, ...], ...]:
    return tuple(sorted(v.key for v in versions))


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SHORT else text[: _SHORT - 1] + "…"


def summarize(old: Version | None, new: Version | None) -> str:
    """A one-line account of what a commit did to the entry."""
    if old is None and new is not None:
        return f"created in {new.path}"
    if new is None and old is not None:
        return f"removed from {old.path}"
    assert old is not None and new is not None
    parts: list[str] = []
    if old.path != new.path:
        parts.append(f"moved {old.path} → {new.path}")
    if old.entry.title != new.entry.title:
        parts.append(f"title {_short(old.entry.title)!r} → {_short(new.entry.title)!r}")
    if old.entry.body != new.entry.body:
        added = removed = 0
        for line in difflib.ndiff(old.entry.body.splitlines(), new.entry.body.splitlines()):
            added += line.startswith("+ ")
            removed += line.startswith("- ")
        parts.append(f"body +{added} -{removed} lines")
    for name in sorted(set(old.entry.fields) | set(new.entry.fields)):
        was, now = old.entry.fields.get(name), new.entry.fields.get(name)
        if was == now:
            continue
        if was is None:
            parts.append(f"+{name} {_short(now or '')}")
        elif now is None:
            parts.append(f"-{name}")
        else:
            parts.append(f"{name} {_short(was)} → {_short(now)}")
    return "; ".join(parts) or "reformatted"
