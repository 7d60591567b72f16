"""`gitmem capture`, `gitmem consolidate`, `gitmem refresh`: memory that fills itself."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from gitmem.cli.options import emit, get_store, hook_option, json_option, run_hook, workspace_option

if TYPE_CHECKING:
    from gitmem.capture.folder import FolderReport
    from gitmem.capture.pipeline import CaptureReport
    from gitmem.consolidate.refresh import RefreshReport
    from gitmem.consolidate.run import ConsolidateReport


def _say(message: str) -> None:
    """Progress for a person at a terminal; nothing when the output is piped."""
    if sys.stderr.isatty():
        click.echo(f"gitmem: {message}…", err=True)


def memory_work_lines(data: dict[str, Any]) -> list[str]:
    """The memory-work lines of `gitmem status`: digests, last consolidation, ladder, counters."""
    lines = [f"digests: {data['pending']} pending consolidation"
             + (f", {len(data['needsReview'])} need review ({', '.join(data['needsReview'])})"
                if data["needsReview"] else "")]
    if data.get("reviewQueue"):
        lines.append(f"review queue: {data['reviewQueue']} proposed facts wait (`gitmem review`)")
    last = data.get("lastConsolidation")
    if last:
        lines.append(f"last consolidation: {last.get('at')} ({last.get('result')}, "
                     f"{last.get('entries', 0)} entries from {last.get('consolidated', 0)} digests)")
    ladder = data["ladder"]
    if ladder.get("rungs"):
        names = [r["name"] + (f" (benched until {r['benchedUntil']})" if r["benched"] else "")
                 for r in ladder["rungs"]]
        lines.append("models: " + ", ".join(names))
    else:
        lines.append("models: none (capture keeps clipped notes)")
    metrics = data.get("metrics") or {}
    if metrics:
        calls = (metrics.get("modelCalls") or {}).get("total", 0)
        saved = sum((metrics.get("savedCalls") or {}).values())
        lines.append(f"counts: {metrics.get('writes', 0)} writes, {metrics.get('captures', 0)} captures, "
                     f"{calls} model calls, {saved} saved, {_failures(metrics)} failures")
    return lines


def _failures(metrics: dict[str, Any]) -> int:
    def total(value: Any) -> int:
        if isinstance(value, dict):
            return sum(total(v) for v in value.values())
        return value if isinstance(value, int) else 0

    return total(metrics.get("failures"))


def _capture_text(report: CaptureReport) -> str:
    head = f"{report.format} session {report.session}"
    where = f" (workspace {report.workspace})" if report.workspace else ""
    lines = [f"{head}{where}: {report.result}"]
    if report.new_events:
        lines.append(f"  {report.new_events} new events: {report.turns} turns kept, "
                     f"{report.tool_calls} tool calls, {len(report.paths)} file paths, "
                     f"{report.signal} characters of signal")
    if report.digest:
        how = f"model {report.model}" if report.model and report.result == "captured" else "clipped notes"
        lines.append(f"  digest {report.digest}: {report.bullets} bullets ({how})")
    if report.message:
        lines.append(f"  {report.message}")
    return "\n".join(lines)


TRANSCRIPT_FORMATS = ["claude-code", "codex", "gemini", "opencode", "copilot", "aider", "jsonl"]


def _folder_text(report: FolderReport) -> str:
    results = ", ".join(f"{count} {result}" for result, count in sorted(report.results().items()))
    lines = [f"{report.folder}: {len(report.reports) + report.unchanged} transcripts read"
             + (f" ({results})" if results else "")
             + (f", {len(report.skipped)} skipped" if report.skipped else "")]
    for one in report.reports:
        if one.digest or one.failed:
            lines.append("  " + _capture_text(one).replace("\n", "\n  "))
    lines += [f"  skipped {s['transcript']}: {s['error']}" for s in report.skipped]
    return "\n".join(lines)


class _Progress:
    """One progress line on stderr, rewritten in place, when stderr is a terminal."""

    def __init__(self) -> None:
        self.last = 0.0

    def __call__(self, done: int, files: int, done_bytes: int, total: int) -> None:
        import time

        if not sys.stderr.isatty() or (done < files and time.monotonic() - self.last < 0.1):
            return
        self.last = time.monotonic()
        width = 24
        filled = width * done_bytes // total if total else width
        click.echo(f"\rgitmem: capture [{'#' * filled}{'.' * (width - filled)}] {done}/{files} "
                   f"transcripts, {done_bytes / 1e6:.1f}/{total / 1e6:.1f} MB", err=True, nl=False)
        if done == files:
            click.echo("", err=True)


def _capture_folder(ctx: click.Context, folder: str, fmt: str | None, no_model: bool,
                    min_signal: int | None, as_json: bool) -> None:
    from pathlib import Path

    from gitmem.capture.folder import capture_folder

    report = capture_folder(get_store(ctx), Path(folder), fmt=fmt, use_model=not no_model,
                            min_signal=min_signal, progress=_Progress())
    emit(report.as_json(), as_json, lambda: _folder_text(report))
    if report.failed:
        sys.exit(3)


@click.command()
@click.argument("transcript", type=click.Path(), required=False)
@click.option("--format", "fmt", type=click.Choice(TRANSCRIPT_FORMATS),
              help="Transcript format (default: detected from each file).")
@click.option("--no-model", is_flag=True, help="Keep clipped notes even when a model is configured.")
@click.option("--min-signal", type=int, help="Characters of signal below which the model is skipped (default 400).")
@hook_option
@click.option("--turn", is_flag=True, help="With --hook, at a turn's end (a Stop hook): at most once "
              "every capture.turnMinutes minutes (default 10) per session.")
@json_option
@workspace_option
@click.pass_context
def capture(ctx: click.Context, transcript: str | None, fmt: str | None, no_model: bool,
            min_signal: int | None, hook: bool, turn: bool, as_json: bool) -> None:
    """Read what is new in a session TRANSCRIPT and keep its durable part as a digest; given a
    folder (or OpenCode's database), every transcript under (or session in) it (`--hook`: the transcript a PreCompact, SessionEnd or, with
    --turn, Stop hook names, captured in the background)."""
    if turn and not hook:
        raise click.UsageError("--turn goes with --hook")
    if hook:
        from functools import partial

        from gitmem.integrate.hooks import capture_hook

        run_hook(ctx, partial(capture_hook, turn=turn), error_exit=1)
        return
    if transcript is None:
        raise click.UsageError("missing argument TRANSCRIPT")
    from pathlib import Path

    from gitmem.capture.folder import holds_sessions
    from gitmem.capture.pipeline import capture as run_capture

    if holds_sessions(Path(transcript)):
        _capture_folder(ctx, transcript, fmt, no_model, min_signal, as_json)
        return
    report = run_capture(get_store(ctx), Path(transcript), fmt=fmt, use_model=not no_model,
                         min_signal=min_signal, say=_say)
    emit(report.as_json(), as_json, lambda: _capture_text(report))
    if report.failed:
        sys.exit(3)


def _consolidate_text(report: ConsolidateReport) -> str:
    from gitmem.secrets.mask import clip

    if not report.digests:
        return "no pending digests" + (f" (pruned {len(report.pruned)} old ones)" if report.pruned else "")
    added = [e for e in report.entries if e["changed"]]
    waiting = f", {len(report.queued)} queued for review" if report.queued else ""
    lines = [f"{report.result} with {report.model}: {len(added)} new entries{waiting}, "
             f"{len(report.consolidated)} of {len(report.digests)} digests consolidated"]
    lines += [f"  {e['id']}  [{e['scope']}/{e['layer']}] {e['topic']}  (digest {e['digest']})" for e in added]
    lines += [f"  rejected: {clip(r['line'], 100)} — {r['reason']}" for r in report.rejected]
    lines += [f"  not written: {clip(f['text'], 80)} — {f['reason']}" for f in report.write_failed]
    lines += [f"  queued for review: {q['id']}  [{q['scope']}/{q['layer']}] {q['topic']}"
              + (f"  (confidence {q['confidence']:g})" if q.get("confidence") is not None else "")
              for q in report.queued]
    lines += [f"  dropped: {clip(d['text'], 80)} — {d['reason']}" for d in report.dropped]
    if report.still_pending:
        lines.append(f"  still pending (not attributed): {', '.join(report.still_pending)}")
    if report.needs_review:
        lines.append(f"  needs review (never attributed): {', '.join(report.needs_review)}")
    if report.failed_file:
        lines.append(f"  nothing in the reply could be read; kept in {report.failed_file}")
    return "\n".join(lines)


@click.command()
@click.option("--limit", type=click.IntRange(min=1), help="Digests per pass (default 10).")
@json_option
@click.pass_context
def consolidate(ctx: click.Context, limit: int | None, as_json: bool) -> None:
    """Turn pending digests into entries with the model ladder (one commit per pass)."""
    from gitmem.consolidate.run import consolidate as run_consolidate

    report = run_consolidate(get_store(ctx), limit=limit)
    emit(report.as_json(), as_json, lambda: _consolidate_text(report))
    if report.parse_failed:
        sys.exit(3)


def _refresh_text(report: RefreshReport) -> str:
    from gitmem.secrets.mask import clip

    if not report.candidates:
        return "no stale or expired entries"
    if report.result == "listed":
        lines = [f"{len(report.candidates)} entries to review (no model configured):"]
        lines += [f"  {r['id']}  {r['label'] or '[' + r['status'].upper() + ']'}  {r['title']}  "
                  f"({r['path']}:{r['line']})" for r in report.candidates]
        lines.append("keep one with `gitmem verify ID`, replace it with `gitmem remember ... --supersedes ID`, "
                     "or drop it with `gitmem forget ID`")
        return "\n".join(lines)
    lines = [f"{report.result} with {report.model}: kept {len(report.kept)}, updated "
             f"{len(report.updated)}, forgot {len(report.forgotten)}, untouched {len(report.untouched)}"]
    lines += [f"  updated {old} -> {new}" for old, new in report.updated.items()]
    lines += [f"  rejected: {clip(r['line'], 100)} — {r['reason']}" for r in report.rejected]
    lines += [f"  failed: {f['id']} {f['action']} — {f['reason']}" for f in report.failed]
    if report.failed_file:
        lines.append(f"  nothing in the reply could be read; kept in {report.failed_file}")
    return "\n".join(lines)


@click.command()
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True,
              help="Entries per pass.")
@click.option("--no-model", is_flag=True, help="Only list the entries to review.")
@json_option
@click.pass_context
def refresh(ctx: click.Context, limit: int, no_model: bool, as_json: bool) -> None:
    """Stale and expired entries: the model keeps, updates or forgets each (or they are listed)."""
    from gitmem.consolidate.refresh import refresh as run_refresh

    report = run_refresh(get_store(ctx), limit=limit, use_model=not no_model)
    emit(report.as_json(), as_json, lambda: _refresh_text(report))
    if report.result == "parse-failed":
        sys.exit(3)


COMMANDS = (capture, consolidate, refresh)
