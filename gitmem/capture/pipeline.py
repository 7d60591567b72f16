"""`gitmem capture TRANSCRIPT`: read what is new in a session transcript, filter it, and keep its
durable part as a digest — summarized by the model ladder, or as clipped notes without a model.

Cost control decides before any model call: a subagent's session is skipped entirely; a delta with
no signal at all is trivial; a delta under the signal threshold is thin and waits, unsummarized,
until later events make it worth a call. A failed summary is not a conclusion: its material stays
behind the watermark and is tried again by the next capture, and only after the last attempt is it
kept as clipped notes marked as a failed summary, so nothing is lost either way."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem.capture.digests import PENDING, Digest, digests_lock, new_digest_id, write_digest
from gitmem.capture.formats import SessionMeta
from gitmem.capture.relevance import Limits, Material, filter_events
from gitmem.capture.sessions import Watermark, load_watermark, save_watermark
from gitmem.capture.source import Transcript, head_bytes
from gitmem.capture.summarize import Summary, clipped_notes, parse_summary, summary_prompt
from gitmem.capture.transcript import open_transcript
from gitmem.errors import InvalidInputError, ModelError
from gitmem.fsio import write_text_atomic
from gitmem.models.ladder import ask, has_model
from gitmem.observe.record import record
from gitmem.secrets.mask import hide_secrets
from gitmem.store.txn import refuse_subagent

if TYPE_CHECKING:
    from gitmem.store.registry import Registry
    from gitmem.store.store import Store

DEFAULT_MIN_SIGNAL = 400
DEFAULT_ATTEMPTS = 2


@dataclass
class CaptureReport:
    """What one capture did. `result` is one of: captured, notes, nothing-durable, thin, trivial,
    no-new-events, subagent, failed (material kept for a retry), failed-notes (kept as notes)."""

    transcript: str
    format: str
    session: str
    result: str = "no-new-events"
    workspace: str | None = None
    digest: str | None = None
    new_events: int = 0
    turns: int = 0
    tool_calls: int = 0
    paths: list[str] = field(default_factory=list)
    signal: int = 0
    bullets: int = 0
    model: str | None = None
    attempts: int = 0
    message: str = ""
    dropped: dict[str, int] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.result in ("failed", "failed-notes")

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CaptureSettings:
    limits: Limits = Limits()
    min_signal: int = DEFAULT_MIN_SIGNAL
    attempts: int = DEFAULT_ATTEMPTS


def capture_settings(store: Store, min_signal: int | None = None) -> CaptureSettings:
    """Settings `capture` in memory.json (camelCase keys), with `--min-signal` on top."""
    return capture_settings_of(store.registry, min_signal)


def capture_settings_of(registry: Registry, min_signal: int | None = None) -> CaptureSettings:
    """The reader of settings `capture`: a value that is not a number >= 0 keeps its default
    (capture never stops on a setting; `gitmem config set` refuses what this would ignore)."""
    raw = registry.setting("capture") or {}
    base = Limits()

    def number(key: str, default: int) -> int:
        value = raw.get(key, default) if isinstance(raw, dict) else default
        return int(value) if isinstance(value, int | float) and value >= 0 else default

    limits = Limits(number("maxTurnChars", base.max_turn_chars), number("maxGistChars", base.max_gist_chars),
                    number("maxTurns", base.max_turns), number("maxBytes", base.max_bytes),
                    number("maxPaths", base.max_paths))
    if min_signal is not None and min_signal < 0:
        raise InvalidInputError("--min-signal must not be negative")
    return CaptureSettings(limits, min_signal if min_signal is not None else number("minSignalChars", DEFAULT_MIN_SIGNAL),
                           max(1, number("summaryMaxAttempts", DEFAULT_ATTEMPTS)))


def session_workspace(store: Store, meta: SessionMeta) -> str | None:
    """The workspace of the session's own folder (its association or repository), else the
    repository URL the transcript names; None when neither says (the digest is global)."""
    from gitmem.store.paths import key_from_remote_url

    if store.workspace_flag:
        return store.resolve_workspace()  # --workspace names it outright
    if meta.cwd and Path(meta.cwd).is_dir():
        try:
            return store.resolve_workspace(None, Path(meta.cwd))
        except InvalidInputError:
            pass
    if meta.repository_url:
        try:
            return key_from_remote_url(meta.repository_url)
        except InvalidInputError:
            return None
    return None


def capture(store: Store, transcript: Path, *, fmt: str | None = None, use_model: bool = True,
            min_signal: int | None = None, say: Callable[[str], None] | None = None,
            source: Transcript | None = None) -> CaptureReport:
    """Capture what is new in `transcript` (see the module docstring); `source`, when given, is
    the transcript already open (one session of a file that holds many)."""
    refuse_subagent("capture")
    store.require()
    settings = capture_settings(store, min_signal)
    if source is None and transcript.is_file() and not head_bytes(transcript, 4096).strip():
        # A session that has only just started: nothing to read yet, and no format to tell.
        report = CaptureReport(str(transcript), fmt or "unknown", transcript.stem)
        report.message = "the transcript is empty"
        return _finish(store, report, model_ready=False)
    source = source or open_transcript(transcript, fmt)
    meta = source.meta
    report = CaptureReport(str(transcript), source.format, meta.session)
    if meta.delegated:
        report.result, report.message = "subagent", "a subagent's session: not captured (its caller records)"
        return _finish(store, report, model_ready=False)
    with digests_lock(store.root):
        mark = load_watermark(store.root, meta.session)
        start = _resume_offset(source, mark)
        delta = source.delta(start)
        events = delta.events
        if start == 0 and mark.offset and mark.last_ts:  # the file was replaced: skip what was seen
            events = (e for e in delta.events if e.ts > mark.last_ts)
        material = filter_events(events, meta.cwd, settings.limits)
        material.dropped.update({k: v + material.dropped.get(k, 0) for k, v in meta.dropped.items()})
        if delta.bad_lines:
            material.dropped["unreadable lines"] = delta.bad_lines
        report.workspace = session_workspace(store, meta)
        _describe(report, material, material.events)
        model_ready = use_model and has_model(store.root)
        advance = _decide(store, report, material, meta, settings, mark, model_ready, say)
        if advance:
            mark = Watermark(offset=delta.end, tail=source.tail(delta.end),
                             last_ts=material.last_ts or mark.last_ts, events=mark.events + delta.lines)
        mark.updated = datetime.now(UTC).isoformat(timespec="seconds")
        mark.path = str(transcript.absolute())
        save_watermark(store.root, meta.session, mark)
    return _finish(store, report, model_ready)


def _resume_offset(source: Transcript, mark: Watermark) -> int:
    """Where to start reading: the watermark, when the file still holds what was read before."""
    if mark.offset <= 0:
        return 0
    if source.size() < mark.offset or source.tail(mark.offset) != mark.tail:
        return 0
    return mark.offset


def _describe(report: CaptureReport, material: Material, events: int) -> None:
    report.new_events = events
    report.turns = len(material.turns)
    report.tool_calls = material.tool_calls
    report.paths = material.paths
    report.signal = material.signal
    report.dropped = dict(material.dropped)


def _decide(store: Store, report: CaptureReport, material: Material, meta: SessionMeta,
            settings: CaptureSettings, mark: Watermark, model_ready: bool,
            say: Callable[[str], None] | None) -> bool:
    """Set the report's result (writing a digest when there is one); True to move the watermark."""
    if not report.new_events:
        report.message = "no new events since the last capture"
        return True
    if material.signal == 0:
        report.result, report.message = "trivial", "nothing but tool mechanics and injected context"
        return True
    if material.signal < settings.min_signal:
        report.result = "thin"
        report.message = (f"{material.signal} characters of signal (< {settings.min_signal}): "
                          "kept for the next capture, no digest yet")
        return False
    if not model_ready:
        _write(store, report, material, meta, clipped_notes(material), "notes")
        report.result = "notes"
        return True
    if say:
        say(f"summarizing {report.turns} turns with the model ladder")
    prompt = summary_prompt(material, _context_line(report, meta))
    summary, error, rung = _summarize(store, prompt)
    report.model = rung
    if summary is not None and summary.nothing_durable:
        report.result, report.message = "nothing-durable", "the model found nothing durable"
        return True
    if summary is not None:
        _write(store, report, material, meta, [(_day(material), summary.bullets)], f"model:{rung}")
        report.result, report.bullets = "captured", len(summary.bullets)
        return True
    mark.attempts += 1
    report.attempts = mark.attempts
    if mark.attempts < settings.attempts:
        report.result = "failed"
        report.message = (f"summary failed ({error}); attempt {mark.attempts} of {settings.attempts}, "
                          "the material is kept and the next capture tries again")
        return False
    _write(store, report, material, meta, clipped_notes(material),
           f"notes (summary failed after {mark.attempts} attempts)")
    report.result = "failed-notes"
    report.message = (f"summary failed ({error}) after {mark.attempts} attempts: "
                      "kept as clipped notes, marked as a failed summary")
    return True


def _summarize(store: Store, prompt: str) -> tuple[Summary | None, str, str | None]:
    """(summary or None, why it failed, the rung that answered)."""
    try:
        reply = ask(store.root, prompt, purpose="summarize")
    except ModelError as exc:
        return None, str(exc), None
    summary = parse_summary(reply.text, prompt)
    if summary is None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        write_text_atomic(store.root / "logs" / f"capture-failed-{stamp}.txt",
                          f"=== prompt\n{prompt}\n=== reply ({reply.rung})\n{reply.text}\n", durable=False)
        return None, "the reply held neither bullets nor NO_DURABLE_CONTENT", reply.rung
    return summary, "", reply.rung


def _context_line(report: CaptureReport, meta: SessionMeta) -> str:
    parts = [report.session, f"workspace {report.workspace or 'none (global)'}"]
    if meta.branch:
        parts.append(f"branch {meta.branch}")
    return ", ".join(parts)


def _day(material: Material) -> str:
    return material.last_ts[:10] if len(material.last_ts) >= 10 else datetime.now(UTC).date().isoformat()


def _write(store: Store, report: CaptureReport, material: Material, meta: SessionMeta,
           sections: list[tuple[str, list[str]]], summary: str) -> None:
    now = datetime.now(UTC)
    today = now.date().isoformat()
    digest = Digest(new_digest_id(store.root, meta.session, now), {
        "session": meta.session, "format": report.format, "workspace": report.workspace or "",
        "branch": meta.branch, "first": material.first_ts, "last": material.last_ts,
        "captured": now.isoformat(timespec="microseconds"), "summary": summary,
        "status": PENDING, "attempts": "0", "consolidated": "",
    }, [hide_secrets(path) for path in material.paths],
        [(day or today, [hide_secrets(b) for b in bullets]) for day, bullets in sections])
    write_digest(store.root, digest)
    report.digest = digest.id
    report.bullets = len(digest.bullets())


def _finish(store: Store, report: CaptureReport, model_ready: bool) -> CaptureReport:
    counts = ["captures", f"captureResults.{report.result}"]
    if model_ready and report.result in ("thin", "trivial"):
        counts.append(f"savedCalls.{report.result}")
    if report.failed:
        counts.append("failures.summary")
    activity = None
    if report.digest or report.failed:
        what = f"digest {report.digest} ({report.bullets} bullets)" if report.digest else report.message
        activity = f"capture {report.session[:8]}: {report.result}, {what}"
    record(store.root, "capture", count=counts, activity=activity, session=report.session,
           format=report.format, result=report.result, digest=report.digest,
           workspace=report.workspace, new_events=report.new_events, turns=report.turns,
           tool_calls=report.tool_calls, signal=report.signal, model=report.model)
    return report
