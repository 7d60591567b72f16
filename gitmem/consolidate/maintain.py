"""The runtime tier's maintenance pass: merges of near-duplicate USER.md items, and a compaction
of a MEMORY.md over its threshold, proposed through the model ladder and never applied here.

Near-duplicates are found lexically first (runtime/similar.py); only those groups go to a
model. A MEMORY.md whose items use more than `runtime.compactAtPercent` of its budget is sent
for a compaction (its critical items and those shown on some branches only stay as they are;
an item two machines changed differently waits for `runtime resolve`). A model that fails, times out or
answers something unusable gives no proposal and a note, never an error nor a change; a
proposed text the secret gate refuses is dropped with a note. A proposal is shown (dry run) or
added to the review queue (`queue=True`); `gitmem review accept` applies it (runtimereview.py).
A group already waiting in the queue, or rejected there before, is not sent to a model again.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from gitmem.consolidate.maintainprompt import (
    Answer,
    compact_prompt,
    merge_prompt,
    read_compaction,
    read_merge,
)
from gitmem.consolidate.runtimereview import COMPACTION, MERGE, Proposal, queue_runtime
from gitmem.errors import GitmemError, InvalidInputError
from gitmem.format import layers as L
from gitmem.models.ladder import ask
from gitmem.models.reply import fresh_lines
from gitmem.observe.record import record
from gitmem.runtime.budget import size_of
from gitmem.runtime.model import Item
from gitmem.runtime.similar import near_duplicate_groups, sources_print
from gitmem.runtime.tier import limits_of, read_records, scopes_with_runtime
from gitmem.secrets.scan import find_secrets
from gitmem.store.review import read_queue
from gitmem.store.settings import runtime_compact_percent
from gitmem.store.txn import refuse_subagent

if TYPE_CHECKING:
    from gitmem.runtime.budget import Limits
    from gitmem.store.store import Store

PURPOSE = "runtime-maintain"


@dataclass
class MaintainReport:
    """What a pass found. mode: dry-run | queue."""

    mode: str = "dry-run"
    scopes: list[str] = field(default_factory=list)
    proposals: list[Proposal] = field(default_factory=list)
    queued: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        queued = {str(q["fingerprint"]): str(q["id"]) for q in self.queued}
        return {"mode": self.mode, "scopes": self.scopes,
                "proposals": [{**asdict(p), "queuedAs": queued.get(p.fingerprint)} for p in self.proposals],
                "queued": list(queued.values()), "notes": self.notes}


def maintain(store: Store, *, scope: str | None = None, queue: bool = False) -> MaintainReport:
    """One maintenance pass over `scope` (global, workspace, or every scope with runtime files)."""
    if queue:
        refuse_subagent("runtime maintain")  # before a model call is spent on a refused write
    store.require()
    report = MaintainReport("queue" if queue else "dry-run", _scopes(store, scope))
    limits = limits_of(store)
    waiting = read_queue(store)
    seen = {str(i.get("fingerprint")): str(i.get("id")) for i in waiting.items}
    rejected = waiting.rejected_prints()
    for key in report.scopes:
        try:
            records = read_records(store, key)
        except GitmemError as exc:
            report.notes.append(f"{key}: {exc}; not maintained")
            continue
        settled = [item for item in records.items if item.conflict is None]  # a conflict waits for a person
        users = [item for item in settled if item.target == "user"]
        candidates = [_merge_candidate(group) for group in near_duplicate_groups(users)]
        candidates += _compaction_candidate(store, key, [i for i in settled if i.target == "memory"], limits)
        for candidate in candidates:
            _propose(store, report, key, candidate, limits, seen, rejected)
    if queue and report.proposals:
        report.queued = queue_runtime(store, report.proposals)
    _record(store, report)
    return report


def _scopes(store: Store, scope: str | None) -> list[str]:
    if scope is None:
        return scopes_with_runtime(store)
    return [store.scope_for(scope)]


Candidate = tuple[str, str, list[Item], str]


def _merge_candidate(group: list[Item]) -> Candidate:
    return MERGE, "user", group, merge_prompt(group)


def _compaction_candidate(store: Store, key: str, items: list[Item], limits: Limits) -> list[Candidate]:
    """MEMORY.md's movable items when the file is over its threshold (none else)."""
    percent = _threshold(store)
    size, limit = size_of(items), limits.memory
    movable = [item for item in items if item.importance != "critical" and not item.branches]
    if size * 100 < limit * percent or len(movable) < 2:
        return []
    return [(COMPACTION, "memory", movable, compact_prompt(movable, size, limit))]


def _threshold(store: Store) -> int:
    try:
        return runtime_compact_percent(store.registry)
    except InvalidInputError as exc:
        store.notes.append(f"{exc}; the default is used")
        return runtime_compact_percent(None)


def _propose(store: Store, report: MaintainReport, key: str, candidate: Candidate, limits: Limits,
             seen: dict[str, str], rejected: set[str]) -> None:
    kind, target, items, prompt = candidate
    what = f"{key} {'USER.md' if target == 'user' else 'MEMORY.md'} {', '.join(i.id for i in items)}"
    print_ = sources_print([item.content for item in items])
    if print_ in rejected:
        report.notes.append(f"{kind} of {what}: rejected in review before; not proposed again")
        return
    if print_ in seen:
        report.notes.append(f"{kind} of {what}: already waiting for review as {seen[print_]}")
        return
    try:
        reply = ask(store.root, prompt, purpose=PURPOSE)
    except GitmemError as exc:  # a failing, slow or silent ladder: no proposal, never an error
        report.notes.append(f"{kind} of {what}: no proposal ({exc})")
        return
    answer = _read(kind, "\n".join(fresh_lines(reply.text, prompt)), items, limits.item)
    if not answer.texts:
        report.notes.append(f"{kind} of {what}: no proposal ({answer.reason})")
        return
    leaked = [found for text in answer.texts for found in find_secrets(text)]
    if leaked:
        report.notes.append(f"{kind} of {what}: refused, the proposed text looks like it holds a "
                            f"secret ({leaked[0].kind}); not proposed")
        return
    sources = [{"id": item.id, "content": item.content} for item in items]
    reason = (f"{len(items)} near-duplicate USER.md items" if kind == MERGE else
              f"{L.scope_dir(key)}/runtime/MEMORY.md over {_threshold(store)}% of its budget")
    report.proposals.append(Proposal(kind, key, target, sources, answer.texts, reason, print_, reply.rung))
    seen[print_] = "(this pass)"


def _read(kind: str, reply: str, items: list[Item], item_limit: int) -> Answer:
    return read_merge(reply, items, item_limit) if kind == MERGE else read_compaction(reply, items, item_limit)


def _record(store: Store, report: MaintainReport) -> None:
    activity = None
    if report.proposals:
        where = "queued for review" if report.mode == "queue" else "shown"
        activity = f"runtime maintain: {len(report.proposals)} proposal(s) {where}"
    record(store.root, "runtime-maintain", count=["runtimeMaintenance"], activity=activity,
           mode=report.mode, proposals=len(report.proposals), queued=len(report.queued),
           notes=len(report.notes))
