"""The review queue's file, `review.json` (pure): the proposals left for a person, the
fingerprints of those a person rejected, and what accepted items became
(docs/decisions/0036-review-queue.md, 0041-runtime-maintenance.md).

The file is committed like every other file of the store, so any machine can review what another
queued. It is a record file: `items` (what waits), `rejected` (what was turned down, newest last,
at most REJECTED_KEPT) and `accepted` (what an accepted item was written as, newest last, at most
ACCEPTED_KEPT), each record keyed by `id`. An item is a proposed fact (no `kind`) or a runtime
maintenance proposal (`kind` runtime-merge or runtime-compaction: the items it replaces, `sources`,
and the texts replacing them, `texts`). It is read through the store's one JSON reader
(store/review.py; a file that does not parse: git's last good version stands in, and a write into
it is refused), and sync merges it record by record (merge/review.py): an item removed on either
machine (accepted or rejected there) is gone, an item, rejection or accept added on either is kept.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from gitmem.errors import InvalidInputError, NotFoundError
from gitmem.format.records import load_record_list

REVIEW_PATH = "review.json"
ITEMS, REJECTED, ACCEPTED = "items", "rejected", "accepted"
REJECTED_KEPT = 1000  # the newest rejections remembered; older ones may be proposed again
ACCEPTED_KEPT = 1000  # the newest accepts remembered: a second accept of one is told what it became
SCHEMA_VERSION = 1
_WORDS = re.compile(r"[^\w]+")


def fingerprint(text: str) -> str:
    """The same fact however it is cased, spaced or punctuated: a hash of its words."""
    words = _WORDS.sub(" ", text.casefold()).split()
    return hashlib.sha1(" ".join(words).encode("utf-8")).hexdigest()[:16]


def item_id(fact_fingerprint: str, digest: str) -> str:
    """An item's id: the same fact from the same digest is one item on every machine."""
    return "r" + hashlib.sha1(f"{fact_fingerprint} {digest}".encode()).hexdigest()[:9]


@dataclass
class Queue:
    """The parsed review.json: waiting items, remembered rejections, keys this version keeps."""

    items: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    accepted: list[dict[str, Any]] = field(default_factory=list)

    def rejected_prints(self) -> set[str]:
        return {str(r.get("id")) for r in self.rejected}

    def queued_prints(self) -> set[str]:
        return {str(i.get("fingerprint")) for i in self.items}

    def find(self, ident: str) -> dict[str, Any]:
        """The item `ident` names: its id or a unique prefix of it (NotFoundError otherwise)."""
        wanted = ident.strip()
        exact = [i for i in self.items if i.get("id") == wanted]
        found = exact or [i for i in self.items if wanted and str(i.get("id", "")).startswith(wanted)]
        if len(found) == 1:
            return found[0]
        if not found:
            raise NotFoundError(f"no review item {wanted!r}; `gitmem review` lists them")
        raise InvalidInputError(f"{wanted!r} names {len(found)} review items; give more of the id")

    def remove(self, ident: str) -> None:
        self.items = [i for i in self.items if i.get("id") != ident]

    def accepted_as(self, ident: str) -> dict[str, Any] | None:
        """The accept record of the item `ident` names (its id or a unique prefix), if any."""
        wanted = ident.strip()
        found = [r for r in self.accepted if r.get("id") == wanted] or \
            [r for r in self.accepted if wanted and str(r.get("id", "")).startswith(wanted)]
        return found[-1] if len(found) == 1 else None

    def accept(self, item: dict[str, Any], at: str, machine: str, result: dict[str, Any]) -> None:
        """Take the item off the queue and remember what it became (`result`: entry or items)."""
        self.remove(str(item["id"]))
        self.accepted = [r for r in self.accepted if r.get("id") != item["id"]]
        self.accepted.append({"id": item["id"], "fingerprint": item.get("fingerprint"), "at": at,
                              "machine": machine, **result})
        self.accepted = self.accepted[-ACCEPTED_KEPT:]

    def reject(self, item: dict[str, Any], at: str, machine: str, reason: str) -> None:
        """Remember the item's fingerprint (once, newest last), keeping the newest REJECTED_KEPT."""
        print_ = str(item.get("fingerprint") or fingerprint(str(item.get("text", ""))))
        self.rejected = [r for r in self.rejected if r.get("id") != print_]
        record = {"id": print_, "at": at, "machine": machine, "text": str(item.get("text", ""))[:200]}
        if reason:
            record["reason"] = reason
        self.rejected.append(record)
        self.rejected = self.rejected[-REJECTED_KEPT:]


def parse_queue(text: str) -> Queue:
    """review.json's text as a Queue; InvalidInputError naming the line when it is not one."""
    items, extra = load_record_list(text, REVIEW_PATH, ITEMS)
    rejected = extra.pop(REJECTED, [])
    accepted = extra.pop(ACCEPTED, [])
    for name, value in ((REJECTED, rejected), (ACCEPTED, accepted)):
        if not isinstance(value, list):
            raise InvalidInputError(f"{REVIEW_PATH}: expected `{name}` to be a list")
    for where, records in ((ITEMS, items), (REJECTED, rejected), (ACCEPTED, accepted)):
        for n, record in enumerate(records, 1):
            if not isinstance(record, dict) or not isinstance(record.get("id"), str):
                raise InvalidInputError(f"{REVIEW_PATH}: {where} record {n} has no string `id`")
    for n, item in enumerate(items, 1):
        if not isinstance(item.get("text"), str) or not isinstance(item.get("layer"), str):
            raise InvalidInputError(f"{REVIEW_PATH}: item {n} ({item['id']}) needs `text` and `layer`")
    return Queue(items, rejected, extra, accepted)


def dump_queue(queue: Queue) -> str:
    """The file's text: other keys, the items, the rejections, then the accepts (when there are
    any: a queue nobody accepted from reads as before); two-space indent, final newline."""
    data = {"schemaVersion": SCHEMA_VERSION, **queue.extra, ITEMS: queue.items, REJECTED: queue.rejected}
    if queue.accepted:
        data[ACCEPTED] = queue.accepted
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
