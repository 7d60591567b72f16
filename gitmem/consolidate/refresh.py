"""`gitmem refresh`: stale and expired entries go to the model with their text and age; each is
kept (re-verified today), updated (superseded by the corrected text) or forgotten. Without a
model, the list is printed for a person to review. One commit per pass."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from gitmem.consolidate.apply import Fact, write_fact
from gitmem.consolidate.jsonrecover import records, recover
from gitmem.errors import GitmemError
from gitmem.fsio import write_text_atomic
from gitmem.models.ladder import ask, has_model
from gitmem.models.reply import fresh_lines
from gitmem.observe.record import record
from gitmem.secrets.mask import clip
from gitmem.store.txn import refuse_subagent
from gitmem.verbs.entries import forget, update_entry
from gitmem.verbs.reads import list_entries

if TYPE_CHECKING:
    from gitmem.store.store import Store

DEFAULT_LIMIT = 20
SKIPPED_LAYERS = ("history",)  # commits do not go stale: they happened
_ACTION = re.compile(r"^\s*[-*•]?\s*\**(?P<verb>KEEP|UPDATE|FORGET)\**:?\s+`?(?P<id>[a-z0-9-]+)`?"
                     r"\s*(?:::\s*(?P<text>.*?))?\s*$", re.IGNORECASE)

INSTRUCTIONS = """\
You are reviewing entries of a long-term memory store that may be out of date. Each entry below
starts with a line "### entry" followed by its id, then its layer, age and text. Decide for each:

KEEP <id>                   it is still true as written (it is re-verified today)
UPDATE <id> :: <new text>   it holds in a changed form: the corrected fact, self-contained
FORGET <id>                 it is no longer true or no longer useful

Write one such line per entry you can judge and leave out the ones you cannot; when you can
judge none of them, reply with the single word NONE. Never invent a fact. Reply with these lines
only.
"""


@dataclass
class RefreshReport:
    """result: refreshed | listed (no model) | nothing-stale | parse-failed."""

    result: str = "nothing-stale"
    candidates: list[dict[str, Any]] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    updated: dict[str, str] = field(default_factory=dict)  # old id -> new id
    forgotten: list[str] = field(default_factory=list)
    untouched: list[str] = field(default_factory=list)
    rejected: list[dict[str, str]] = field(default_factory=list)
    failed: list[dict[str, str]] = field(default_factory=list)
    model: str | None = None
    failed_file: str | None = None

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def stale_entries(store: Store, limit: int = DEFAULT_LIMIT) -> list[dict[str, Any]]:
    """Live entries graded stale or expired (expired first, then the oldest), at most `limit`."""
    found = [r for r in list_entries(store, include_all=True)
             if r["layer"] not in SKIPPED_LAYERS
             and (r["status"] == "expired" or (r["status"] == "live" and r["freshness"] == "stale"))]
    found.sort(key=lambda r: (r["status"] != "expired", -(r["age_days"] or 0), r["id"] or ""))
    return found[:limit]


def entry_block(record_: dict[str, Any]) -> str:
    volatility = record_["fields"].get("Volatility") or "normal"
    state = "expired" if record_["status"] == "expired" else "stale"
    age = f"{record_['age_days']} days" if record_["age_days"] is not None else "unknown age"
    body = " ".join(str(record_["body"]).split())[:1500]
    return "\n".join([
        f"### entry {record_['id']}",
        f"layer: {record_['layer']}   topic: {record_['topic']}   age: {age} ({state}, volatility {volatility})",
        f"title: {record_['title']}", f"text: {body}",
    ])


def refresh(store: Store, *, limit: int = DEFAULT_LIMIT, use_model: bool = True) -> RefreshReport:
    """One refresh pass (see the module docstring)."""
    store.require()
    report = RefreshReport(candidates=stale_entries(store, limit))
    if not report.candidates:
        return _done(store, report)
    if not use_model or not has_model(store.root):
        report.result = "listed"
        return _done(store, report)
    refuse_subagent("refresh")  # listing is a read; acting on the list is a write
    prompt = INSTRUCTIONS + "\n" + "\n\n".join(entry_block(r) for r in report.candidates) + "\n"
    reply = ask(store.root, prompt, purpose="refresh")
    report.model = reply.rung
    stamp = datetime.now(UTC)
    exchange = f"=== {stamp.isoformat(timespec='seconds')} prompt\n{prompt}\n=== reply ({reply.rung})\n{reply.text}\n"
    write_text_atomic(store.root / "logs" / "refresh-last.txt", exchange, durable=False)
    by_id = {r["id"]: r for r in report.candidates}
    actions = _parse(reply.text, prompt, by_id, report)
    if actions is None:
        report.result = "parse-failed"
        name = f"refresh-failed-{stamp:%Y%m%dT%H%M%S%f}.txt"
        write_text_atomic(store.root / "logs" / name, exchange, durable=False)
        report.failed_file = f"logs/{name}"
        return _done(store, report)
    report.result = "refreshed"
    if actions:
        _apply(store, report, actions, by_id)
    report.untouched = [i for i in by_id if i not in {a[1] for a in actions}]
    return _done(store, report)


def _parse(reply: str, prompt: str, by_id: dict[str, dict[str, Any]],
           report: RefreshReport) -> list[tuple[str, str, str]] | None:
    """[(verb, id, text)] from the reply's lines, else its JSON; None when nothing is readable."""
    raw: list[tuple[str, str, str, str]] = []
    for line in fresh_lines(reply, prompt):
        match = _ACTION.match(line)
        if match:
            raw.append((match["verb"].upper(), match["id"], (match["text"] or "").strip(), line.strip()))
    if not raw and [line.strip().strip(".*`") for line in fresh_lines(reply, prompt)] == ["NONE"]:
        return []  # the model could judge none of them: all stay as they are
    if not raw:
        value, _level = recover(reply)
        if value is None:
            return None
        items, _done_ids = records(value)
        raw = [(str(i.get("action") or "").upper(), str(i.get("id") or ""), str(i.get("text") or ""), clip(str(i), 200))
               for i in items]
    actions: list[tuple[str, str, str]] = []
    for verb, entry_id, text, source in raw:
        if entry_id not in by_id:
            report.rejected.append({"line": source, "reason": f"not an entry of this pass: {entry_id!r}"})
        elif verb not in ("KEEP", "UPDATE", "FORGET"):
            report.rejected.append({"line": source, "reason": f"unknown action {verb!r}"})
        elif verb == "UPDATE" and not text:
            report.rejected.append({"line": source, "reason": "UPDATE without new text"})
        elif any(a[1] == entry_id for a in actions):
            report.rejected.append({"line": source, "reason": "a second action for the same entry"})
        else:
            actions.append((verb, entry_id, text))
    return actions


def _apply(store: Store, report: RefreshReport, actions: list[tuple[str, str, str]],
           by_id: dict[str, dict[str, Any]]) -> None:
    today = store.today().isoformat()
    with store.batch("refresh") as txn:
        for verb, entry_id, text in actions:
            entry = by_id[entry_id]
            try:
                if verb == "KEEP":
                    # Still true: verified today, and an expiry it outlived no longer applies.
                    update_entry(store, "verify", entry_id, Verified=today, Valid_until=None)
                    report.kept.append(entry_id)
                elif verb == "FORGET":
                    forget(store, entry_id)
                    report.forgotten.append(entry_id)
                else:
                    fields = entry["fields"]
                    scope = "global" if entry["scope"] == "global" else entry["scope"]
                    result = write_fact(store, Fact(
                        entry["layer"], scope, entry["topic"], text, fields.get("Importance") or "normal",
                        None, f"refresh:{entry_id}", supersedes=entry_id))
                    report.updated[entry_id] = result.id or ""
            except GitmemError as exc:
                report.failed.append({"id": entry_id, "action": verb, "reason": str(exc)})
        txn.message = (f"refresh: kept {len(report.kept)}, updated {len(report.updated)}, "
                       f"forgot {len(report.forgotten)}")


def _done(store: Store, report: RefreshReport) -> RefreshReport:
    counts = ["refreshes"] + (["failures.refresh"] if report.result == "parse-failed" else [])
    activity = None
    if report.result in ("refreshed", "parse-failed"):
        activity = (f"refresh: {report.result}, kept {len(report.kept)}, updated {len(report.updated)}, "
                    f"forgot {len(report.forgotten)} of {len(report.candidates)} stale entries")
    record(store.root, "refresh", count=counts, activity=activity, result=report.result,
           candidates=len(report.candidates), kept=len(report.kept), updated=len(report.updated),
           forgotten=len(report.forgotten), rejected=len(report.rejected), model=report.model)
    return report
