"""What one commit changed, entry by entry: the part of the history index that reads git.

A commit changed an entry when the entry (its file, heading, body and fields; every copy of it)
differs from its state in every parent — git's rule for `git log PATH` (see trace.py). Each
changed topic file version is split into entry signatures once (format/versions.py), and only the
entries whose signature differs between the two sides are read for the Ids they name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

from gitmem.format.versions import (
    Signature,
    entry_signatures,
    frontmatter_raw,
    frontmatter_readable,
    signature_ids,
)
from gitmem.git.graph import FileChange, Graph, Node

_PARSED_KEPT = 20_000  # file versions whose entries are kept while reading history
_ONE_PROCESS_FROM = 64  # commits from which one git process diffs them all (it costs ~10 ms)


class CommitReader:
    """Reads commits of one graph into {entry id: files where its versions differ}."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._parsed: dict[str, Counter[Signature]] = {}
        self._frontmatter: dict[str, bool] = {}

    def changed_many(self, nodes: list[Node]) -> Iterator[dict[str, set[str]]]:
        """changed() of each node in turn; many nodes are diffed by one git process."""
        if len(nodes) < _ONE_PROCESS_FROM:
            yield from (self.changed(node) for node in nodes)
            return
        for files in self.graph.changes_of(nodes):
            yield self._changed_in(files)

    def changed(self, node: Node) -> dict[str, set[str]]:
        """The ids whose entries differ from their state in every parent, each with the files
        (on either side of any parent) where its versions differ."""
        return self._changed_in(self.graph.changes(node.oid))

    def _changed_in(self, per_parent: list[list[FileChange]]) -> dict[str, set[str]]:
        found: dict[str, set[str]] | None = None
        for files in per_parent:
            differing = self._differing(files)
            if found is None:
                found = differing
            else:
                found = {i: found[i] | differing[i] for i in found.keys() & differing.keys()}
            if not found:
                return {}
        return found or {}

    def _differing(self, files: Iterable[FileChange]) -> dict[str, set[str]]:
        """Ids of the entries whose versions differ across these changed files, with those files
        (an entry only reformatted is among them: trace.py, which reads the versions, passes
        over it)."""
        found: dict[str, set[str]] = {}
        for change in files:
            old = self._signatures(change.old_blob)
            new = self._signatures(change.new_blob)
            same_path = change.old_path == change.new_path
            for side, signatures in ((change.old_path, old - new if same_path else old),
                                     (change.new_path, new - old if same_path else new)):
                for signature in signatures:
                    for entry_id in signature_ids(signature):
                        found.setdefault(entry_id, set()).add(side or "")
        return found

    def _signatures(self, blob: str | None) -> Counter[Signature]:
        """The entry signatures of one file version (none when trace.py could not read it)."""
        if blob is None:
            return Counter()
        found = self._parsed.get(blob)
        if found is None:
            found = Counter()
            try:
                text = self.graph.blob(blob).decode("utf-8")
            except UnicodeDecodeError:
                text = None
            if text is not None and self._readable(frontmatter_raw(text)):
                found = Counter(entry_signatures(text))
            if len(self._parsed) >= _PARSED_KEPT:
                del self._parsed[next(iter(self._parsed))]  # the oldest read goes first
            self._parsed[blob] = found
        return found

    def _readable(self, frontmatter: str) -> bool:
        if not frontmatter:
            return True
        known = self._frontmatter.get(frontmatter)
        if known is None:
            known = self._frontmatter[frontmatter] = frontmatter_readable(frontmatter)
        return known
