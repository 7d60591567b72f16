"""Imported runtime-tier items (Hermes' MEMORY.md / USER.md): into `runtime/memories.json`.

The same rules as imported entries: an item records where it came from (`source`) and the
digest of its content as imported (`importHash`) among its kept keys; a later import updates an
item nobody edited, keeps one a person edited (reported `kept-edit`), and never adds content the
tier already holds. An import that would overflow a budget is refused: the hot tier is what an
agent reads first, and an import does not decide what leaves it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gitmem.errors import InvalidInputError
from gitmem.format import layers as L
from gitmem.format.entry import text_hash
from gitmem.notes.model import Action, SourceFile, malformed
from gitmem.runtime.model import (
    PROJECTIONS,
    Item,
    RuntimeFile,
    body_bytes,
    check_content,
    new_id,
    normalize_content,
    timestamp,
)
from gitmem.runtime.tier import (
    hand_edits,
    limits_of,
    read_records,
    records_path,
    refuse_problems,
    with_hand_edits,
    write_scope,
)

if TYPE_CHECKING:
    from gitmem.store.store import Store, WriteTxn


def _digest(content: str) -> str:
    return text_hash(content)[:16]


class HotWriter:
    """Adds the items of source files to the runtime tier within the import's transaction."""

    def __init__(self, store: Store, txn: WriteTxn | None, prefix: str, report: Any) -> None:
        self.store, self.txn, self.prefix, self.report = store, txn, prefix, report

    def _records(self, scope: str) -> RuntimeFile:
        records = read_records(self.store, scope)
        edits = hand_edits(self.store, scope, records, limits_of(self.store))
        refuse_problems(edits)
        return with_hand_edits(records, edits)[0]

    def add(self, source: SourceFile, scope: str) -> None:
        limits = limits_of(self.store)
        now = timestamp(self.store.now())
        by_scope: dict[str, RuntimeFile] = {}
        for wanted in source.items:
            key = L.GLOBAL if wanted.target == "user" else scope
            records = by_scope.setdefault(key, self._records(key))
            try:
                content = check_content(wanted.content, limits.item)
            except InvalidInputError as exc:
                raise malformed(source.path, wanted.line, str(exc).removesuffix("; nothing changed")) from None
            origin = f"{self.prefix}{source.path}#{wanted.anchor}"
            self._one(records, key, wanted.target, content, origin, f"{source.path}:{wanted.line}", now)
        for key, records in by_scope.items():
            for target in PROJECTIONS:
                size = body_bytes([i.content for i in records.of(target)])
                if size > limits.of(target):
                    raise InvalidInputError(
                        f"cannot import {source.path}: {key} {PROJECTIONS[target]} would hold {size} "
                        f"bytes, over its budget of {limits.of(target)}; nothing was written")
            if self.txn is not None:
                if key != L.GLOBAL:
                    self.store.register_workspace(self.txn, key)
                write_scope(self.store, self.txn, key, records)

    def _one(self, records: RuntimeFile, key: str, target: str, content: str, origin: str,
             where: str, now: str) -> None:
        path = records_path(key)
        mine = next((i for i in records.items if i.extra.get("source") == origin), None)
        if mine is not None:
            recorded = mine.extra.get("importHash")
            if recorded == _digest(content):
                self.report.actions.append(_action("unchanged", mine.id, path, where, content))
            elif _digest(normalize_content(mine.content)) != recorded:
                self.report.actions.append(_action("kept-edit", mine.id, path, where, content))
            else:
                mine.content, mine.updated_at = content, now
                mine.extra = {**mine.extra, "importHash": _digest(content)}
                self.report.actions.append(_action("updated", mine.id, path, where, content))
            return
        same = next((i for i in records.of(target) if normalize_content(i.content) == content), None)
        if same is not None:
            self.report.actions.append(_action("duplicate", same.id, path, where, content))
            return
        item = Item(new_id(records.ids()), content, target, "normal", now, now,
                    extra={"source": origin, "importHash": _digest(content)})
        records.items.append(item)
        self.report.actions.append(_action("added", item.id, path, where, content))


def _action(what: str, item_id: str, path: str, where: str, content: str) -> Action:
    title = content if len(content) <= 60 else content[:59] + "…"
    return Action(what, item_id, path, where, title)
