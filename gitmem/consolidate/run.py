"""`gitmem consolidate`: pending digests become entries in one pass and one commit.

A digest the reply attributes (an entry, or its DONE line) is consolidated; one it never
attributes stays pending and is retried by later passes, and after the maximum number of attempts
is marked needs-review for a person, never dropped. A reply with nothing recoverable is kept with
its prompt in logs/consolidate-failed-<stamp>.txt; the last exchange is always in
logs/consolidate-last.txt."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from gitmem.capture.digests import (
    CONSOLIDATED,
    NEEDS_REVIEW,
    PENDING,
    Digest,
    digests_lock,
    list_digests,
    prune_digests,
    save_last_pass,
    update_digest,
)
from gitmem.consolidate.apply import write_proposals
from gitmem.consolidate.prompt import consolidation_prompt
from gitmem.consolidate.protocol import ParsedReply, parse_reply
from gitmem.consolidate.review import queue_proposals, triage
from gitmem.fsio import file_lock, write_text_atomic
from gitmem.models.ladder import ask
from gitmem.observe.record import record
from gitmem.secrets.mask import hide_secrets
from gitmem.store.settings import CONSOLIDATE_DEFAULTS, consolidate_settings
from gitmem.store.txn import refuse_subagent

if TYPE_CHECKING:
    from gitmem.store.store import Store

DEFAULTS = CONSOLIDATE_DEFAULTS


@dataclass
class ConsolidateReport:
    """What one pass did. result: consolidated | nothing-pending | parse-failed."""

    result: str = "nothing-pending"
    model: str | None = None
    recovery: str = ""
    digests: list[str] = field(default_factory=list)
    consolidated: list[str] = field(default_factory=list)
    still_pending: list[str] = field(default_factory=list)
    needs_review: list[str] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, str]] = field(default_factory=list)
    write_failed: list[dict[str, Any]] = field(default_factory=list)
    queued: list[dict[str, Any]] = field(default_factory=list)  # waiting in the review queue
    dropped: list[dict[str, str]] = field(default_factory=list)  # rejected in review before
    held: list[str] = field(default_factory=list)  # digests kept pending: their queue does not parse
    pruned: list[str] = field(default_factory=list)
    commit: str | None = None
    failed_file: str | None = None

    @property
    def parse_failed(self) -> bool:
        return self.result == "parse-failed"

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "parseFailed": self.parse_failed}


def settings(store: Store) -> dict[str, int]:
    return consolidate_settings(store.registry)


def consolidate(store: Store, *, limit: int | None = None) -> ConsolidateReport:
    """One consolidation pass over the oldest pending digests (at most `limit`)."""
    refuse_subagent("consolidate")  # before a model call is spent on writes that would be refused
    store.require()
    conf = settings(store)
    report = ConsolidateReport()
    with file_lock(store.root / "state" / "consolidate.lock", 0.5, "another consolidation pass"):
        pending = list_digests(store.root, PENDING)[: limit or conf["batchSize"]]
        if pending:
            _pass(store, report, pending, conf)
        with digests_lock(store.root):
            report.pruned = prune_digests(store.root, conf["keepDigests"])
    _record(store, report)
    return report


def _pass(store: Store, report: ConsolidateReport, pending: list[Digest], conf: dict[str, int]) -> None:
    prompt, batch = consolidation_prompt(pending, conf["maxPromptBytes"], conf["maxDigestBytes"])
    report.digests = [d.id for d in batch]
    reply = ask(store.root, prompt, purpose="consolidate")  # ModelError: digests stay untouched
    report.model = reply.rung
    stamp = datetime.now(UTC)
    exchange = hide_secrets(f"=== {stamp.isoformat(timespec='seconds')} prompt\n{prompt}\n"
                            f"=== reply ({reply.rung})\n{reply.text}\n")  # logs/ never hold one
    write_text_atomic(store.root / "logs" / "consolidate-last.txt", exchange, durable=False)
    parsed = parse_reply(reply.text, prompt, {d.id: d.workspace for d in batch})
    report.recovery = parsed.recovery
    report.rejected = [{"line": hide_secrets(line), "reason": hide_secrets(reason)}
                       for line, reason in parsed.rejected]
    if parsed.recovery == "none":
        report.result = "parse-failed"
        name = f"consolidate-failed-{stamp:%Y%m%dT%H%M%S%f}.txt"
        write_text_atomic(store.root / "logs" / name, exchange, durable=False)
        report.failed_file = f"logs/{name}"
    else:
        report.result = "consolidated"
        _write(store, report, parsed, len(batch))
    _settle(store, report, batch, parsed, conf["maxAttempts"], stamp)


def _write(store: Store, report: ConsolidateReport, parsed: ParsedReply, digests: int) -> None:
    """Every proposal through the normal write path or into the review queue (as the setting
    consolidate.review says), one commit for the pass; a fact rejected in review is dropped."""
    if not parsed.proposals:
        return
    with store.batch("consolidate") as txn:  # the catalog caught up: triage sees what is written
        sorted_out = triage(store, parsed.proposals)
        report.dropped = sorted_out.dropped
        report.held = sorted({p.digest for p in sorted_out.blocked})
        report.entries, failed = write_proposals(store, sorted_out.write)
        report.queued, refused = queue_proposals(store, txn, sorted_out.queue)
        report.write_failed = sorted_out.blocked_note(store) + failed + refused
        added = sum(1 for e in report.entries if e["changed"])
        waiting = f", {len(report.queued)} queued for review" if report.queued else ""
        txn.message = f"consolidate: {added} entries{waiting} from {digests} digests"
    changed = any(e["changed"] for e in report.entries) or bool(report.queued)
    report.commit = store.git.head_oid() if changed else None


def _settle(store: Store, report: ConsolidateReport, batch: list[Digest], parsed: ParsedReply,
            max_attempts: int, stamp: datetime) -> None:
    """Attributed digests are consolidated; the others count an attempt (needs-review at the max).
    A digest one of whose facts could not be written is not attributed: it stays for a retry
    (what was written from it is found again then, and not written twice)."""
    unwritten = {str(f["digest"]) for f in report.write_failed if f.get("digest")}
    attributed = parsed.attributed - set(report.held) - unwritten if not report.parse_failed else set()
    with digests_lock(store.root):
        for digest in batch:
            if digest.id in attributed:
                update_digest(store.root, digest.id, status=CONSOLIDATED,
                              consolidated=stamp.isoformat(timespec="seconds"))
                report.consolidated.append(digest.id)
                continue
            attempts = digest.attempts + 1
            status = NEEDS_REVIEW if attempts >= max_attempts else PENDING
            update_digest(store.root, digest.id, status=status, attempts=str(attempts))
            (report.needs_review if status == NEEDS_REVIEW else report.still_pending).append(digest.id)
    save_last_pass(store.root, {
        "at": stamp.isoformat(timespec="seconds"), "result": report.result, "model": report.model,
        "digests": len(report.digests), "consolidated": len(report.consolidated),
        "entries": sum(1 for e in report.entries if e["changed"]), "rejected": len(report.rejected),
        "writeFailed": len(report.write_failed), "needsReview": len(report.needs_review),
        "queued": len(report.queued), "dropped": len(report.dropped),
    })


def _record(store: Store, report: ConsolidateReport) -> None:
    counts = ["consolidations"]
    if report.parse_failed:
        counts.append("failures.consolidate")
    added = sum(1 for e in report.entries if e["changed"])
    activity = None
    if report.digests:
        activity = (f"consolidate: {report.result}, {added} entries from {len(report.consolidated)} of "
                    f"{len(report.digests)} digests")
        if report.queued:
            activity += f", {len(report.queued)} queued for review"
        if report.needs_review:
            activity += f", {len(report.needs_review)} need review"
    record(store.root, "consolidate", count=counts, activity=activity, result=report.result,
           model=report.model, recovery=report.recovery, digests=len(report.digests),
           consolidated=len(report.consolidated), entries=added, rejected=len(report.rejected),
           write_failed=len(report.write_failed), needs_review=report.needs_review,
           queued=len(report.queued), dropped=len(report.dropped),
           pruned=len(report.pruned), failed_file=report.failed_file)
