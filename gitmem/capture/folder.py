"""`gitmem capture FOLDER`: every transcript under a folder, each read from where its last capture
stopped. Which files are transcripts is told by name first (cheap, so a session folder of
thousands of files is walked quickly) and by content when each is opened:

- `*.jsonl`: Claude Code, Codex CLI, Gemini CLI and generic JSONL, detected from the first lines;
- `.aider.chat.history.md` (or any `*.aider.chat.history.md`);
- `session-*.json`: the older Gemini CLI chat file (skipped when its `.jsonl` successor is there);
- `session/<project>/<id>.json` in an OpenCode storage folder (its message/ and part/ folders are
  read through the session, never walked);
- `opencode.db` (or `opencode-<channel>.db`): OpenCode's database, each of its sessions a
  transcript (the rest of OpenCode's data folder, snapshots and logs, is not walked).

A database may also be given instead of a folder: it is a folder of sessions in one file.

A file that ends where its last capture stopped is counted as unchanged without being opened
(no log line either), so capturing a large folder again costs little. A file that cannot be read
is reported and skipped; the others go on."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem.capture import opencode_db
from gitmem.capture.aider import HISTORY_NAME
from gitmem.capture.formats import SessionMeta
from gitmem.capture.opencode import sessions_folder
from gitmem.capture.pipeline import CaptureReport, capture
from gitmem.capture.sessions import Watermark, marks_by_path, marks_by_session
from gitmem.capture.source import Transcript, head_bytes
from gitmem.errors import GitmemError, InvalidInputError, NotFoundError

if TYPE_CHECKING:
    from gitmem.store.store import Store

SKIPPED_FOLDERS = {".git", "node_modules", ".venv", "__pycache__"}
Progress = Callable[[int, int, int, int], None]  # files done, files, bytes done, bytes


@dataclass
class FolderReport:
    """What a folder capture did: one report per transcript read, and the files skipped."""

    folder: str
    reports: list[CaptureReport] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    bytes: int = 0
    unchanged: int = 0  # transcripts not opened: nothing after their watermark

    @property
    def failed(self) -> bool:
        return any(r.failed for r in self.reports)

    def results(self) -> dict[str, int]:
        counts: dict[str, int] = {"unchanged": self.unchanged} if self.unchanged else {}
        for report in self.reports:
            counts[report.result] = counts.get(report.result, 0) + 1
        return counts

    def as_json(self) -> dict[str, Any]:
        return {"folder": self.folder, "transcripts": len(self.reports) + len(self.skipped) + self.unchanged,
                "bytes": self.bytes, "results": self.results(),
                "digests": [r.digest for r in self.reports if r.digest],
                "reports": [r.as_json() for r in self.reports], "skipped": self.skipped}


def is_candidate(path: Path) -> bool:
    """A file whose name says it may be a transcript gitmem reads."""
    name = path.name
    if name.endswith(".jsonl") or name.endswith(HISTORY_NAME) or opencode_db.is_database_name(path):
        return True
    if name.endswith(".json"):
        if name.startswith("session-"):
            return not path.with_suffix(".jsonl").exists()  # Gemini moved it to JSONL
        return path.parent.parent.name == "session"  # OpenCode: session/<project>/<id>.json
    return False


def transcripts_under(folder: Path, store_root: Path | None = None) -> Iterator[Path]:
    """The candidate files under `folder`, in a stable order (folders sorted, files sorted); the
    store's own folder is never walked."""
    skip = store_root.resolve() if store_root else None

    def walked(path: Path) -> bool:
        return (path.name not in SKIPPED_FOLDERS and not sessions_folder(path)
                and not opencode_db.outside_sessions(path) and path.resolve() != skip)

    for current, folders, files in os.walk(folder):
        here = Path(current)
        folders[:] = sorted(f for f in folders if walked(here / f))
        for name in sorted(files):
            path = here / name
            if is_candidate(path) and path.is_file():
                yield path


def holds_sessions(path: Path) -> bool:
    """True for what `gitmem capture` reads as a folder: a folder, or a file of many sessions
    (an SQLite database: OpenCode's, else it is refused by name)."""
    if path.is_dir():
        return True
    try:
        return path.is_file() and opencode_db.is_sqlite(head_bytes(path, 16))
    except OSError:
        return False


def capture_folder(store: Store, folder: Path, *, fmt: str | None = None, use_model: bool = True,
                   min_signal: int | None = None, progress: Progress | None = None) -> FolderReport:
    """Capture every transcript under `folder`, or every session of a database (see the module
    docstring)."""
    options = _Options(fmt, use_model, min_signal)
    if folder.is_file() and holds_sessions(folder):
        report = FolderReport(str(folder), bytes=_size(folder))
        _capture_database(store, folder, report, options)  # its failure is the command's
        return report
    if not folder.is_dir():
        raise NotFoundError(f"no folder at {folder}")
    files = list(transcripts_under(folder, store.root))
    sizes = [_size(path) for path in files]
    total = sum(sizes)
    report = FolderReport(str(folder), bytes=total)
    marks = marks_by_path(store.root)
    done = 0
    for index, (path, size) in enumerate(zip(files, sizes, strict=True)):
        if progress:
            progress(index, len(files), done, total)
        try:
            if opencode_db.is_database_name(path):
                _capture_database(store, path, report, options)
            elif _unchanged(path, size, marks.get(str(path.absolute()))):
                report.unchanged += 1
            else:
                report.reports.append(capture(store, path, fmt=fmt, use_model=use_model,
                                              min_signal=min_signal))
        except Exception as exc:  # noqa: BLE001 - one unreadable transcript never stops the others
            report.skipped.append({"transcript": str(path), "error": _reason(exc)})
        done += size
    if progress:
        progress(len(files), len(files), total, total)
    return report


@dataclass(frozen=True)
class _Options:
    fmt: str | None
    use_model: bool
    min_signal: int | None


def _capture_database(store: Store, path: Path, report: FolderReport, options: _Options) -> None:
    """Every session of an OpenCode database, each from where its last capture stopped; a
    session with nothing after its watermark is counted as unchanged."""
    if options.fmt not in (None, "opencode"):
        raise InvalidInputError(f"{path.name} is an OpenCode database, not a {options.fmt} transcript")
    marks = marks_by_session(store.root)
    with opencode_db.Database(path) as database:
        for source in opencode_db.session_transcripts(database):
            mark = marks.get(source.meta.session)
            if mark is not None and mark.offset > 0 and mark.offset == source.size() \
                    and source.tail(mark.offset) == mark.tail:
                report.unchanged += 1
                continue
            report.reports.append(capture(store, path, use_model=options.use_model,
                                          min_signal=options.min_signal, source=source))


def _unchanged(path: Path, size: int, mark: Watermark | None) -> bool:
    """True when a file written as lines ends exactly where its last capture stopped, the bytes
    before that the ones read then: nothing to open, nothing to record."""
    if mark is None or mark.offset <= 0 or mark.offset != size or path.name.endswith(".json"):
        return False  # a .json transcript's offset counts messages, not bytes
    return Transcript(path, "", SessionMeta()).tail(size) == mark.tail


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _reason(exc: Exception) -> str:
    if isinstance(exc, GitmemError):
        return exc.message
    if isinstance(exc, OSError):
        return f"cannot read it ({exc.strerror or type(exc).__name__})"
    return f"{type(exc).__name__}: {exc}"
