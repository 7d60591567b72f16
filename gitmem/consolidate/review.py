"""The review queue: what consolidation is unsure of waits for a person instead of being written
(setting consolidate.review), and `gitmem review` lists, accepts (as written or edited) and
rejects it. A rejected fact's fingerprint is remembered, so consolidation drops the same fact
when a model proposes it again. The file and its merge: format/reviewqueue.py, merge/review.py;
the decision: docs/decisions/0036-review-queue.md."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitmem.consolidate.apply import Fact, write_fact
from gitmem.consolidate.runtimereview import accept_runtime, is_runtime, texts_of
from gitmem.errors import InvalidInputError, StoreStateError
from gitmem.format.entry import text_hash
from gitmem.format.reviewqueue import REVIEW_PATH, Queue, fingerprint, item_id
from gitmem.secrets.mask import hide_secrets
from gitmem.secrets.scan import find_secrets, refuse_secrets
from gitmem.store.review import read_queue, this_machine, write_queue
from gitmem.store.settings import REVIEW_EVERYTHING, REVIEW_OFF, consolidate_review
from gitmem.verbs.base import safe_body

if TYPE_CHECKING:
    from gitmem.consolidate.protocol import Proposal
    from gitmem.store.store import Store, WriteTxn


@dataclass
class Triage:
    """A pass's proposals sorted: to write now, to queue for review, dropped as rejected before."""

    write: list[Proposal] = field(default_factory=list)
    queue: list[Proposal] = field(default_factory=list)
    dropped: list[dict[str, str]] = field(default_factory=list)
    blocked: list[Proposal] = field(default_factory=list)  # to queue, but the queue does not parse

    def blocked_note(self, store: Store) -> list[dict[str, Any]]:
        """The blocked facts as `not written` lines: their digests stay pending for a later pass."""
        stand_in = store.stand_ins.get(REVIEW_PATH)
        problem = stand_in.problem if stand_in is not None else REVIEW_PATH
        return [_unwritten(p, f"{problem}; not queued for review, the digest stays pending")
                for p in self.blocked]


def _unwritten(proposal: Proposal, reason: str) -> dict[str, str]:
    """A proposal reported as not written or not queued: its digest, its text masked, why."""
    return {"digest": proposal.digest, "text": hide_secrets(proposal.text)[:200], "reason": reason}


def review_rule(store: Store) -> str | float:
    """The setting in force; one that cannot be read holds everything back for review (a pass
    never stops on a setting, and a careful user's typo must not write what they meant to see)."""
    try:
        return consolidate_review(store.registry)
    except (InvalidInputError, StoreStateError) as exc:
        store.notes.append(f"{exc}; every proposed fact waits for review until it is fixed")
        return REVIEW_EVERYTHING


def needs_review(rule: str | float, confidence: float | None) -> bool:
    """Whether a fact with this confidence waits (a fact without one counts as confident)."""
    if rule == REVIEW_EVERYTHING:
        return True
    if rule == REVIEW_OFF or isinstance(rule, str):
        return False
    return confidence is not None and confidence < rule


def triage(store: Store, proposals: list[Proposal]) -> Triage:
    """Sort the proposals by the setting; a fact rejected before is dropped, whatever the setting."""
    rule = review_rule(store)
    rejected = read_queue(store).rejected_prints()
    writable = REVIEW_PATH not in store.stand_ins
    out = Triage()
    for proposal in proposals:
        if fingerprint(proposal.text) in rejected:
            out.dropped.append(_unwritten(proposal, "rejected in review before"))
        elif needs_review(rule, proposal.confidence):
            recorded = _recorded(store, proposal)
            if recorded:
                out.dropped.append(_unwritten(proposal, f"already recorded as {recorded}"))
            else:
                (out.queue if writable else out.blocked).append(proposal)
        else:
            out.write.append(proposal)
    return out


def _recorded(store: Store, proposal: Proposal) -> str | None:
    """The live entry already holding this fact's text in its layer and scope (a fact accepted
    before is not asked about again), else None."""
    if proposal.layer == "decisions":
        return None  # written as a statement and a rationale: not the proposed text
    hits = store.catalog.find_text(proposal.scope, proposal.layer, text_hash(safe_body(proposal.text)))
    return next((hit.id for hit in hits if hit.status == "live"), None)


def queue_proposals(store: Store, txn: WriteTxn,
                    proposals: list[Proposal]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Add the proposals to the queue inside `txn`: (queued items, refused). Text the secret gate
    refuses never reaches the queue; a fact already waiting is not queued twice."""
    if not proposals:
        return [], []
    queue = read_queue(store)
    waiting = queue.queued_prints()
    queued: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    at, machine = store.now().isoformat(timespec="seconds"), this_machine()
    for proposal in proposals:
        found = find_secrets(f"{proposal.topic}\n{proposal.text}")
        if found:
            refused.append(_unwritten(proposal, f"refused: it looks like it holds a secret "
                                                f"({found[0].kind}); not queued for review"))
            continue
        print_ = fingerprint(proposal.text)
        if print_ in waiting:
            continue
        waiting.add(print_)
        item = _item(proposal, print_, at, machine)
        queue.items.append(item)
        queued.append(item)
    if queued:
        write_queue(store, txn, queue)
    return queued, refused


def _item(proposal: Proposal, print_: str, at: str, machine: str) -> dict[str, Any]:
    return {"id": item_id(print_, proposal.digest), "layer": proposal.layer, "scope": proposal.scope,
            "topic": proposal.topic, "text": proposal.text, "importance": proposal.importance,
            "volatility": proposal.volatility, "confidence": proposal.confidence,
            "digest": proposal.digest, "fingerprint": print_, "at": at, "machine": machine}


# -- the verbs -------------------------------------------------------------------------------
def review_list(store: Store) -> dict[str, Any]:
    """The waiting items (oldest first) and how many rejections are remembered."""
    store.require()
    queue = read_queue(store)
    return {"items": [_shown(i) for i in queue.items], "count": len(queue.items),
            "rejectedRemembered": len(queue.rejected), "rule": _rule_shown(store)}


def _shown(item: dict[str, Any]) -> dict[str, Any]:
    shown = {k: item.get(k) for k in ("id", "layer", "scope", "topic", "text", "importance",
                                      "volatility", "confidence", "digest", "at", "machine")}
    if is_runtime(item):  # a maintenance proposal: what it replaces, by what, and why
        shown.update({k: item.get(k) for k in ("kind", "target", "texts", "sources", "reason", "model")})
    return shown


def _rule_shown(store: Store) -> str | float:
    try:
        return consolidate_review(store.registry)
    except (InvalidInputError, StoreStateError):
        return REVIEW_EVERYTHING


def review_accept(store: Store, ident: str, *, text: str | None = None) -> dict[str, Any]:
    """Write the item (as queued, or with `text`) and take it off the queue in the same commit,
    remembering what it became: a fact through the verb consolidation uses, with its digest as
    the source; a runtime maintenance proposal by replacing the items it names
    (runtimereview.py). An item accepted already (here, or on a machine this one synced with)
    is answered with what it became, and nothing is written."""
    if text is not None and not text.strip():
        raise InvalidInputError("the accepted text is empty: nothing written")
    store.require()
    queue = read_queue(store)
    earlier = _accepted_before(queue, ident)
    if earlier is not None:
        return earlier
    item = queue.find(ident)
    at, machine = store.now().isoformat(timespec="seconds"), this_machine()

    def take_off(txn: WriteTxn, result: dict[str, Any]) -> None:
        current = _queue_for_write(store)
        current.accept(current.find(str(item["id"])), at, machine, result)
        write_queue(store, txn, current)

    if is_runtime(item):
        done = accept_runtime(store, item, texts_of(item, text), take_off)
        return {**done, "remaining": len(read_queue(store).items)}
    with store.batch("review accept") as txn:  # the entry and the queue: one commit
        body = text.strip() if text is not None else str(item["text"])
        refuse_secrets(body, "accepted text", overridable=False)
        fact = Fact(str(item["layer"]), str(item.get("scope") or "global"), str(item.get("topic") or "general"),
                    body, str(item.get("importance") or "normal"), _opt(item.get("volatility")),
                    f"digest:{item.get('digest')}" if item.get("digest") else None)
        result = write_fact(store, fact)
        take_off(txn, {"entry": result.id, "path": result.path})
        edited = " (edited)" if text is not None and body != item["text"] else ""
        txn.message = f"review accept {item['id']}{edited}: {result.id}"
    return {"item": item["id"], "id": result.id, "path": result.path, "changed": result.changed,
            "edited": bool(edited), "note": result.note, "remaining": len(read_queue(store).items)}


def _accepted_before(queue: Queue, ident: str) -> dict[str, Any] | None:
    """What an item no longer waiting became, when an accept of it is remembered."""
    wanted = ident.strip()
    if any(str(i.get("id", "")).startswith(wanted) for i in queue.items if wanted):
        return None
    record = queue.accepted_as(wanted)
    if record is None:
        return None
    became = str(record.get("entry") or ", ".join(record.get("items") or []))
    return {"item": record["id"], "id": became, "path": record.get("path"), "changed": False,
            "edited": False, "remaining": len(queue.items), "already": True,
            "note": f"accepted already on {record.get('machine') or 'a machine'} at {record.get('at')}; "
                    "nothing written"}


def review_reject(store: Store, ident: str, *, reason: str = "") -> dict[str, Any]:
    """Remove the item and remember its fingerprint, so the same fact is not proposed again."""
    reason = " ".join(reason.split())
    if reason:
        refuse_secrets(reason, "reason", overridable=False)  # the whole reason: a cut could hide a secret from the gate
    reason = reason[:200]
    store.require()
    with store.writing("review reject") as txn:
        queue = _queue_for_write(store)
        item = queue.find(ident)
        queue.remove(str(item["id"]))
        queue.reject(item, store.now().isoformat(timespec="seconds"), this_machine(), reason)
        write_queue(store, txn, queue)
        txn.message = f"review reject {item['id']}" + (f": {reason}" if reason else "")
    return {"item": item["id"], "fingerprint": item.get("fingerprint"), "reason": reason,
            "remaining": len(queue.items)}


def _queue_for_write(store: Store) -> Queue:
    queue = read_queue(store)
    store.refuse_stand_in(REVIEW_PATH)
    return queue


def _opt(value: Any) -> str | None:
    return str(value) if value else None
