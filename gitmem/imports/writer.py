"""Entries on their way into topic files during an import: written in groups, each topic file
read and written as few times as it can be.

At most FLUSH entries wait in memory (a streamed import of any size holds a bounded amount);
then every file with waiting entries is read once, changed and written once. Sources are read
folder by folder, so a topic file is usually written once. The last few files written stay
parsed (CACHE of them, and no more than CACHE_ENTRIES entries in all: topic files grow with
the import), for the next group and for looking up an entry an earlier import made.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from gitmem.format import layers as L
from gitmem.format.entry import Entry, TopicFile
from gitmem.format.markdown import new_topic_file
from gitmem.store.store import Store, WriteTxn

FLUSH = 2000
CACHE = 64
CACHE_ENTRIES = 4000


@dataclass
class Pending:
    topic: str  # the topic's name, for a new file's front matter
    entry: Entry
    replaces: str | None  # the id of the entry it replaces; None: a new entry


class TopicWriter:
    def __init__(self, store: Store, txn: WriteTxn | None) -> None:
        self.store, self.txn = store, txn
        self.pending: dict[str, list[Pending]] = {}
        self.count = 0
        self.cache: OrderedDict[str, TopicFile | None] = OrderedDict()
        self.registered: set[str] = set()
        self.cached_entries = 0

    def document(self, relpath: str) -> TopicFile | None:
        """The file as this import has written it so far (parsed once while it stays cached)."""
        if relpath in self.cache:
            self.cache.move_to_end(relpath)
            return self.cache[relpath]
        document = self.store.read_file(relpath)
        self._keep(relpath, document)
        return document

    def _keep(self, relpath: str, document: TopicFile | None) -> None:
        self.cache.pop(relpath, None)
        self.cache[relpath] = document
        self.cached_entries = sum(len(d.entries) for d in self.cache.values() if d is not None)
        while len(self.cache) > 1 and (len(self.cache) > CACHE or self.cached_entries > CACHE_ENTRIES):
            _, dropped = self.cache.popitem(last=False)
            self.cached_entries -= len(dropped.entries) if dropped is not None else 0

    def add(self, relpath: str, item: Pending) -> None:
        if self.txn is None:
            return  # a dry run writes nothing
        self.pending.setdefault(relpath, []).append(item)
        self.count += 1
        if self.count >= FLUSH:
            self.flush()

    def flush(self) -> None:
        if self.txn is None:
            return
        documents: dict[str, TopicFile] = {}
        for relpath, items in self.pending.items():
            role = L.classify_path(relpath)
            if role.scope != L.GLOBAL and role.scope not in self.registered:
                self.store.register_workspace(self.txn, role.scope)
                self.registered.add(role.scope)
            document = self.document(relpath) or new_topic_file(
                {"topic": items[0].topic, "layer": role.layer, "scope": role.scope}, items[0].topic)
            for item in items:
                index = document.find(item.replaces) if item.replaces else None
                if index is None:
                    document.entries.append(item.entry)
                else:
                    document.entries[index] = item.entry
            documents[relpath] = document
        self.store.write_topics(self.txn, documents)  # the group announced in one journal write
        for relpath, document in documents.items():
            self._keep(relpath, document)
        # Cataloged now, their parsed copies let go: the transaction holds a group, not the import.
        self.store.settle(self.txn, list(self.pending))
        self.pending, self.count = {}, 0
