"""Asking the ladder: the first rung that returns text wins and is remembered (tried first next
time); a rung that replies empty, exits non-zero or times out is benched for 15 minutes and moved
last, never dropped. Benched rungs are still tried after the others, so a ladder whose every rung
is benched still answers when one recovers. All rungs failing is an error, never an empty success.
Every call is logged (rung, duration, bytes each way, outcome) and counted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from gitmem.errors import ModelError
from gitmem.models.config import BENCH_SECONDS, Ladder, Rung, editing, load_ladder, utc_now
from gitmem.models.reply import clean_reply
from gitmem.models.run import CallResult, run_command
from gitmem.observe.record import record

Runner = Callable[[str, str, float], CallResult]


@dataclass(frozen=True)
class Attempt:
    """One rung tried for one prompt."""

    rung: str
    outcome: str
    duration_ms: float
    bytes_in: int
    bytes_out: int
    detail: str = ""


@dataclass
class Reply:
    """The winning rung's answer, read as text, and every attempt it took to get it."""

    text: str
    rung: str
    attempts: list[Attempt] = field(default_factory=list)


def has_model(root: Path) -> bool:
    """True when a ladder is configured (or GITMEM_MODEL is set)."""
    return bool(load_ladder(root).rungs)


def try_order(ladder: Ladder, now: datetime) -> list[Rung]:
    """Rungs not benched, in ladder order, then the benched ones (still tried, last)."""
    free = [r for r in ladder.rungs if ladder.benched_until(r.name, now) is None]
    return free + [r for r in ladder.rungs if r not in free]


def call_rung(root: Path, rung: Rung, prompt: str, purpose: str,
              runner: Runner = run_command) -> tuple[str, Attempt]:
    """Run one rung; (answer text, what happened). An answer that is empty once read as text
    (only reasoning, only the echoed prompt) counts as an empty reply."""
    result = runner(rung.command, prompt, rung.timeout)
    text = clean_reply(result.stdout, prompt) if result.outcome == "ok" else ""
    outcome = "empty" if result.outcome == "ok" and not text else result.outcome
    attempt = Attempt(rung.name, outcome, round(result.duration_ms, 1), result.bytes_in,
                      result.bytes_out, result.stderr_tail)
    counters = ["modelCalls.total", f"modelCalls.{purpose}"]
    if outcome != "ok":
        counters.append(f"failures.model.{outcome.split('-')[0]}")
    record(root, "model-call", count=counters, purpose=purpose, rung=rung.name, outcome=outcome,
           duration_ms=attempt.duration_ms, bytes_in=attempt.bytes_in, bytes_out=attempt.bytes_out,
           detail=attempt.detail or None)
    return text, attempt


def ask(root: Path, prompt: str, *, purpose: str, runner: Runner = run_command,
        clock: Callable[[], datetime] = utc_now, cap: float | None = None) -> Reply:
    """Send `prompt` up the ladder until a rung returns text. ModelError when none does.

    `cap`: a quick, best-effort call (search rerank): each rung gets at most `cap` seconds, and
    a rung that fails it is not benched (its own time-out was not reached) nor moved."""
    ladder = load_ladder(root)
    if not ladder.rungs:
        raise ModelError("no model is configured: add one with `gitmem models add NAME 'COMMAND'` "
                         "or set GITMEM_MODEL")
    attempts: list[Attempt] = []
    for rung in try_order(ladder, clock()):
        if cap is not None:
            rung = Rung(rung.name, rung.command, min(rung.timeout, cap))
        text, attempt = call_rung(root, rung, prompt, purpose, runner)
        attempts.append(attempt)
        if text:
            if cap is None:
                _remember_winner(root, ladder, rung.name)
            return Reply(text, rung.name, attempts)
        if cap is None:
            _bench(root, ladder, rung.name, clock() + timedelta(seconds=BENCH_SECONDS))
    tried = "; ".join(f"{a.rung}: {a.outcome}" for a in attempts)
    record(root, "model-failed", count=("failures.ladder",), purpose=purpose, tried=tried,
           activity=f"{purpose}: no model returned text ({tried})")
    raise ModelError(f"no model returned text ({tried})")


def _remember_winner(root: Path, seen: Ladder, name: str) -> None:
    """The winner goes first and leaves the bench, so the normal case costs one call."""
    if seen.override:
        return
    with editing(root) as ladder:
        rung = ladder.find(name)
        if rung is None:
            return  # removed meanwhile
        ladder.rungs.remove(rung)
        ladder.rungs.insert(0, rung)
        ladder.benched.pop(name, None)
        ladder.last_winner = name


def _bench(root: Path, seen: Ladder, name: str, until: datetime) -> None:
    """Bench a failed rung until `until` and move it last; it is never dropped."""
    if seen.override:
        return
    with editing(root) as ladder:
        rung = ladder.find(name)
        if rung is None:
            return
        ladder.rungs.remove(rung)
        ladder.rungs.append(rung)
        ladder.benched[name] = until.isoformat(timespec="seconds")


TEST_PROMPT = "This is a connection test from gitmem. Reply with one short line of plain text.\n"


def test_rung(root: Path, name: str, runner: Runner = run_command) -> tuple[str, Attempt]:
    """Try one rung with a tiny prompt (`gitmem models test`); reported, not benched."""
    from gitmem.errors import NotFoundError

    ladder = load_ladder(root)
    rung = ladder.find(name)
    if rung is None:
        known = ", ".join(r.name for r in ladder.rungs) or "none"
        raise NotFoundError(f"no model named {name!r} (configured: {known})")
    return call_rung(root, rung, TEST_PROMPT, "test", runner)
