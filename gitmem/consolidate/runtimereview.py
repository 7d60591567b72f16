"""Runtime maintenance proposals in the review queue: queued by the maintenance pass
(maintain.py), accepted by `gitmem review accept` (the items replaced in one commit with the
queue change, runtime/regroup.py), rejected like any item (its fingerprint, a hash of the items
it would replace, is remembered: the same merge is not proposed again while they read so)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gitmem.format.reviewqueue import item_id
from gitmem.runtime.regroup import replace_group
from gitmem.runtime.tier import projection_path
from gitmem.secrets.scan import find_secrets
from gitmem.store.review import read_queue, this_machine, write_queue

if TYPE_CHECKING:
    from gitmem.store.store import Store, WriteTxn

MERGE, COMPACTION = "runtime-merge", "runtime-compaction"
KINDS = (MERGE, COMPACTION)
TOPICS = {MERGE: "runtime merge", COMPACTION: "runtime compaction"}


@dataclass
class Proposal:
    """One merge or compaction: the exact items it replaces and the texts that replace them."""

    kind: str  # MERGE | COMPACTION
    scope: str
    target: str
    sources: list[dict[str, str]]
    texts: list[str]
    reason: str
    fingerprint: str
    model: str = ""


def is_runtime(item: dict[str, Any]) -> bool:
    return item.get("kind") in KINDS


def queue_runtime(store: Store, proposals: list[Proposal]) -> list[dict[str, Any]]:
    """Add the proposals to the review queue in one commit; those waiting already or whose text
    the secret gate refuses are left out. Returns the queued items."""
    at, machine = store.now().isoformat(timespec="seconds"), this_machine()
    with store.writing("runtime maintain") as txn:
        queue = read_queue(store)
        waiting = queue.queued_prints()
        queued = []
        for proposal in proposals:
            if proposal.fingerprint in waiting or any(find_secrets(t) for t in proposal.texts):
                continue
            waiting.add(proposal.fingerprint)
            queued.append(_item(proposal, at, machine))
        queue.items += queued
        if queued:
            write_queue(store, txn, queue)
        txn.message = f"runtime maintain: {len(queued)} proposal(s) queued for review"
    return queued


def _item(proposal: Proposal, at: str, machine: str) -> dict[str, Any]:
    return {"id": item_id(proposal.fingerprint, proposal.kind), "kind": proposal.kind, "layer": "runtime",
            "scope": proposal.scope, "target": proposal.target, "topic": TOPICS[proposal.kind],
            "text": "\n".join(proposal.texts), "texts": proposal.texts, "sources": proposal.sources,
            "reason": proposal.reason, "model": proposal.model, "fingerprint": proposal.fingerprint,
            "digest": None, "confidence": None, "at": at, "machine": machine}


def texts_of(item: dict[str, Any], text: str | None) -> list[str]:
    """The texts an accept writes: the proposed ones, or a person's (one item per line)."""
    if text is None:
        return [str(t) for t in item.get("texts") or [item.get("text", "")]]
    return [line.strip().removeprefix("- ").strip() for line in text.splitlines() if line.strip()]


def accept_runtime(store: Store, item: dict[str, Any], texts: list[str],
                   take_off: Callable[[WriteTxn, dict[str, Any]], None]) -> dict[str, Any]:
    """Replace the items the proposal names by `texts`, and (through `take_off(txn, result)`) take
    it off the queue, in one commit; refused, nothing written, when an item changed since."""
    sources = [(str(s.get("id")), str(s.get("content"))) for s in item.get("sources") or []]
    ident = str(item["id"])
    provenance = {"kind": item["kind"], "review": ident, "reason": item.get("reason", ""),
                  "model": item.get("model", ""), "proposed": item.get("at", ""),
                  "accepted": store.now().isoformat(timespec="seconds")}
    edited = texts != [str(t) for t in item.get("texts") or []]
    message = f"review accept {ident}{' (edited)' if edited else ''}: {TOPICS[item['kind']]}"
    scope, target = str(item["scope"]), str(item.get("target") or "user")
    path = projection_path(scope, target)
    result, new = replace_group(store, scope, target, sources, texts, verb="review accept", message=message,
                                provenance=provenance,
                                also=lambda txn, new: take_off(txn, {"items": [i.id for i in new], "path": path}))
    return {"item": ident, "kind": item["kind"], "id": ", ".join(i.id for i in new), "items": [i.id for i in new],
            "path": path, "changed": True, "edited": edited,
            "note": result.note, "replaced": [s[0] for s in sources]}

