"""Where runtime items go when they leave the hot file to make room.

- A `memory` item becomes an ordinary entry of its scope's long-term memory: the learnings layer
  when it reads as a lesson, else semantic; topic `runtime memory`, `**Source:** runtime:<id>`.
  It is written in the same write transaction as the runtime change and before it, so a crash in
  between leaves the item in both places, never in neither. Text already recorded as a live entry
  of that layer is not written twice: the existing entry is named instead.
- A `user` item never enters the layers (a profile is not project knowledge): it is appended to
  `global/runtime/USER.archive.md`, a plain list nothing reads into a prompt.
- A layer whose index file still holds entries of an old store (`gitmem check --fix` migrates
  them) is not written to; the item goes to `<scope>/runtime/MEMORY.archive.md` instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gitmem.format import layers as L
from gitmem.format.entry import Entry, text_hash
from gitmem.format.markdown import CONFLICT_MARKER_RE, entry_lines, new_topic_file
from gitmem.format.wording import reads_as_lesson
from gitmem.fsio import read_regular_text
from gitmem.runtime.model import Item
from gitmem.runtime.tier import ARCHIVE_FILE, runtime_dir
from gitmem.store.tree import read_memory_text

if TYPE_CHECKING:
    from gitmem.store.store import Store, WriteTxn

TOPIC = "runtime memory"
TOPIC_SLUG = "runtime-memory"
TITLE_CHARS = 80
_FIELD_LIKE_RE = re.compile(r"^\*\*(?=[A-Za-z-]+:\*\*)")


@dataclass(frozen=True)
class Moved:
    """One item that left the hot file, and where it is now."""

    item: Item
    path: str
    entry_id: str | None = None  # the layer entry, when it became one
    existing: bool = False  # the same text was already a live entry

    def describe(self) -> str:
        if self.entry_id is None:
            return f"{self.item.id} -> {self.path}"
        how = " (already recorded there)" if self.existing else ""
        return f"{self.item.id} -> {self.entry_id} ({self.path}){how}"

    def as_json(self) -> dict[str, object]:
        return {"item": self.item.id, "content": self.item.content, "path": self.path,
                "entry": self.entry_id, "existing": self.existing}


def _title(text: str) -> str:
    if len(text) <= TITLE_CHARS:
        return text
    cut = text[:TITLE_CHARS].rsplit(" ", 1)[0]
    return (cut if len(cut) > TITLE_CHARS // 2 else text[:TITLE_CHARS]).rstrip() + "…"


def _body(text: str) -> str:
    """One line that parses back as body text: no heading, marker or field lookalike."""
    if text.startswith("#") or CONFLICT_MARKER_RE.match(text):
        return "\\" + text
    return _FIELD_LIKE_RE.sub(r"\\*\\*", text)


def _legacy_layer(store: Store, scope: str, layer: str) -> bool:
    try:
        return bool(entry_lines(read_regular_text(store.path(L.layer_index_path(scope, layer)))))
    except (OSError, UnicodeDecodeError):
        return False  # missing, or not a layer file at all (a folder in its place): not legacy


class Archiver:
    """Moves leaving items of one write (keeps id numbers allocated within the write)."""

    def __init__(self, store: Store, txn: WriteTxn, scope: str, today: str) -> None:
        self.store, self.txn, self.scope, self.today = store, txn, scope, today
        self.numbers: dict[str, int] = {}

    def move(self, item: Item, moment: str) -> Moved:
        if item.target == "user":
            return self._to_list(ARCHIVE_FILE, "USER.md", [item], moment)
        layer = "learnings" if reads_as_lesson(item.content) else "semantic"
        if _legacy_layer(self.store, self.scope, layer):
            return self._to_list(f"{runtime_dir(self.scope)}/MEMORY.archive.md", "MEMORY.md", [item], moment)
        return self._to_layer(item, layer)

    def _to_layer(self, item: Item, layer: str) -> Moved:
        store, scope = self.store, self.scope
        relpath = L.topic_path(scope, layer, TOPIC_SLUG)
        body = _body(item.content)
        for hit in store.catalog.find_text(scope, layer, text_hash(body)):
            if hit.status == "live":
                return Moved(item, hit.path, hit.id, existing=True)
        number = self.numbers.get(layer, store.catalog.max_number(scope, layer)) + 1
        self.numbers[layer] = number
        entry_id = L.format_id(scope, layer, number)
        entry = Entry(_title(item.content), body, {
            "Id": entry_id,
            "Importance": "low" if item.importance == "low" else "normal",
            "Volatility": "normal",
            "Created": (item.created_at or self.today)[:10],
            "Verified": (item.updated_at or self.today)[:10],
            "Source": f"runtime:{item.id}",
        })
        if not store.append_entry(self.txn, relpath, entry):
            document = store.read_file(relpath) or new_topic_file(
                {"topic": TOPIC, "layer": layer, "scope": scope}, "Runtime memory")
            document.entries.append(entry)
            store.write_topic(self.txn, relpath, document)
        return Moved(item, relpath, entry_id)

    def _to_list(self, relpath: str, source: str, items: list[Item], moment: str) -> Moved:
        try:  # ParseError naming the file when it is not a regular UTF-8 file
            text = read_memory_text(self.store.root, relpath)
        except FileNotFoundError:
            text = (f"# Items that left {source}\n\n"
                    f"gitmem moves an item here when {source} is over its budget and an add needs room\n"
                    "(lowest importance first, then least recently updated). Nothing here is read into\n"
                    "a prompt; copy a line back with `gitmem runtime add` to use it again.\n\n")
        if text and not text.endswith("\n"):
            text += "\n"
        for item in items:
            text += (f"- {item.id} (importance={item.importance}; created {item.created_at or '?'}; "
                     f"updated {item.updated_at or '?'}; archived {moment}): {item.content}\n")
        self.store.write_file(self.txn, relpath, text)
        return Moved(items[0], relpath)


def move_out(store: Store, txn: WriteTxn, scope: str, leaving: list[Item], moment: str) -> list[Moved]:
    """Move these items out of their hot file (into the layers, or an archive list), in `txn`."""
    archiver = Archiver(store, txn, scope, store.today().isoformat())
    return [archiver.move(item, moment) for item in leaving]
