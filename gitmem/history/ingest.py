"""`gitmem history`: a code repository's commits in its workspace's history layer, one topic file
per day (`workspaces/<key>/history/<YYYY-MM-DD>.md`). Each entry: the subject and short hash as
heading, the message body and changed files as body, `**Commit:**` with the full hash and
`**Source:** git:<hash>`.

Incremental from the last recorded commit (state/history.json). When that commit is no longer an
ancestor of HEAD (a rebase or force-push rewrote history) the pass walks the newest commits
instead and says so. The layer is the authority: the Commit lines already in it are read back, so
a lost watermark, a fresh clone or a rewound head never records a commit twice."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem.errors import InvalidInputError, ParseError
from gitmem.format import layers as L
from gitmem.format.entry import Entry
from gitmem.format.markdown import (
    append_entry_text,
    new_topic_file,
    render_entry,
    render_topic_file,
    unclosed_fence,
)
from gitmem.fsio import load_json_object, write_json_atomic
from gitmem.git.gitlog import Commit, read_commits, rev_list
from gitmem.git.workrepo import head, is_ancestor, repository_top
from gitmem.observe.record import record
from gitmem.secrets.mask import hide_secrets
from gitmem.store.tree import read_memory_text
from gitmem.store.txn import refuse_subagent
from gitmem.verbs.base import safe_body, target_scope

if TYPE_CHECKING:
    from gitmem.store.store import Store, WriteTxn

DEFAULT_LIMIT = 1000
STATE_FILE = "state/history.json"
MAX_FILES = 40
MAX_BODY = 4000
_COMMIT_LINE = re.compile(r"^\*\*Commit:\*\* *([0-9a-f]{40})\s*$", re.MULTILINE)
_FIELD_LINE = re.compile(r"^(\*\*[A-Za-z][A-Za-z -]*:\*\*)", re.MULTILINE)


@dataclass
class HistoryReport:
    """What one pass did. result: recorded | up-to-date | no-commits | skipped (every new commit
    belongs to a day whose file cannot be read)."""

    repo: str
    workspace: str
    result: str = "up-to-date"
    recorded: int = 0
    already_recorded: int = 0
    fell_back: bool = False
    more: bool = False  # the range held more than `limit` commits: the next pass continues
    skipped: list[str] = field(default_factory=list)  # day files that cannot be read, and why
    head: str | None = None
    days: list[str] = field(default_factory=list)
    message: str = ""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def recorded_commits(store: Store, key: str, unreadable: dict[str, str] | None = None) -> set[str]:
    """Full hashes of every commit the workspace's history layer already holds; a day file that
    cannot be read goes into `unreadable` (path -> why) and its commits count as not recorded."""
    folder = L.topic_dir(key, "history")
    found: set[str] = set()
    for path in sorted(store.root.joinpath(folder).glob("*.md")):
        relpath = f"{folder}/{path.name}"
        try:
            found.update(_COMMIT_LINE.findall(read_memory_text(store.root, relpath)))
        except FileNotFoundError:
            continue
        except ParseError as exc:
            if unreadable is not None:
                unreadable[relpath] = str(exc)
    return found


def _load_state(root: Path) -> dict[str, Any]:
    return load_json_object(root / STATE_FILE)


def _plan(repo: Path, tip: str, mark: str | None, limit: int, report: HistoryReport) -> tuple[list[str], str]:
    """(commit ids to consider, oldest first; the watermark to keep after recording them)."""
    if mark and is_ancestor(repo, mark, tip):
        newer = list(reversed(rev_list(repo, [f"{mark}..{tip}"])))
        if len(newer) > limit:
            report.more = True
            return newer[:limit], newer[limit - 1]
        return newer, tip
    if mark:
        report.fell_back = True
        report.message = (f"the last recorded commit {mark[:12]} is no longer in the history of HEAD "
                          f"(rebased or force-pushed): walked the newest {limit} commits instead")
    return list(reversed(rev_list(repo, [tip], limit))), tip


def commit_entry(commit: Commit, entry_id: str) -> Entry:
    """The entry of one commit; its text is made safe for the entry format."""
    # A code repository's commit message may hold a token: the store records it masked (a
    # secret is never committed here, and a refusal would stop every later commit's record).
    subject = hide_secrets(" ".join(commit.subject.split()))[:120] or "(no subject)"
    body = hide_secrets(commit.body)
    body = body[:MAX_BODY] + ("\n…" if len(body) > MAX_BODY else "")
    body = _FIELD_LINE.sub(r"\\\1", safe_body(body)) if body else ""
    fence = unclosed_fence(body)
    if fence is not None:
        body += "\n" + fence
    shown = commit.files[:MAX_FILES]
    files = hide_secrets(", ".join(shown)) if shown else "(none)"
    if len(commit.files) > MAX_FILES:
        files += f" … and {len(commit.files) - MAX_FILES} more"
    text = f"{body}\n\nFiles: {files}" if body else f"Files: {files}"
    return Entry(f"{subject} ({commit.oid[:7]})", text, {
        "Id": entry_id, "Importance": "normal", "Volatility": "stable", "Created": commit.day,
        "Verified": commit.day, "Source": f"git:{commit.oid}", "Commit": commit.oid,
    })


def _write_day(store: Store, txn: WriteTxn, key: str, day: str, entries: list[Entry]) -> None:
    """Append a day's new entries to its topic file (created when missing), in one write.

    The catalog is told what was written, so the commit does not parse the files again."""
    relpath = L.topic_path(key, "history", day)
    try:
        existing: str | None = read_memory_text(store.root, relpath)
    except FileNotFoundError:
        existing = None
    if existing is not None:
        text = append_entry_text(existing, entries[0])
    else:
        document = new_topic_file({"topic": day, "layer": "history", "scope": key}, day)
        document.entries.append(entries[0])
        text = render_topic_file(document)
    # Each entry closes its own fences, so the rest append without re-scanning the file.
    for entry in entries[1:]:
        text += "\n" + render_entry(entry)
    store.write_file(txn, relpath, text)
    if existing is None:
        document.entries = list(entries)
        txn.parsed[relpath] = document
    elif store.catalog.has_file(relpath) and relpath not in txn.cataloged:
        for entry in entries:
            store.catalog.add_entry(relpath, entry)
        txn.cataloged.add(relpath)


def ingest(store: Store, repo: Path | None = None, *, limit: int = DEFAULT_LIMIT,
           workspace: str | None = None, say: Callable[[str], None] | None = None) -> HistoryReport:
    """Record the repository's new commits (see the module docstring)."""
    if limit < 1:
        raise InvalidInputError("--limit must be at least 1")
    refuse_subagent("history")
    store.require()
    top = repository_top((repo or store.cwd).absolute())
    if top.resolve() == store.root.resolve():
        raise InvalidInputError("that is the memory store itself: point --repo at a code repository")
    key = store.resolve_workspace(workspace, top)
    report = HistoryReport(str(top), key)
    tip = head(top)
    report.head = tip
    if tip is None:
        report.result, report.message = "no-commits", "the repository has no commits yet"
        return _finish(store, report)
    state = _load_state(store.root)
    mark = (state.get(key) or {}).get("head") if isinstance(state.get(key), dict) else None
    if mark == tip:
        return _finish(store, report)
    candidates, new_mark = _plan(top, tip, mark, limit, report)
    with store.locked():  # two passes at once (a hook and a person) must not both record a commit
        unreadable: dict[str, str] = {}
        known = recorded_commits(store, key, unreadable)
        report.skipped = [f"{why}: the commits of that day wait until it is fixed" for why in unreadable.values()]
        wanted = [oid for oid in candidates if oid not in known]
        report.already_recorded = len(candidates) - len(wanted)
        if wanted:
            if say:
                say(f"reading {len(wanted)} commits of {top.name}")
            _record_commits(store, report, key, read_commits(top, wanted), say, unreadable)
    if report.skipped:  # the next pass walks these commits again (recorded ones are known)
        new_mark = mark or ""
    state[key] = {"head": new_mark, "repo": str(top), "at": datetime.now(UTC).isoformat(timespec="seconds")}
    write_json_atomic(store.root / STATE_FILE, state, durable=False)
    return _finish(store, report)


def _record_commits(store: Store, report: HistoryReport, key: str, commits: list[Commit],
                    say: Callable[[str], None] | None, unreadable: dict[str, str]) -> None:
    by_day: dict[str, list[Commit]] = {}
    for commit in commits:
        by_day.setdefault(commit.day, []).append(commit)
    if say:
        say(f"writing {len(commits)} entries into {len(by_day)} day files")
    with store.writing("history") as txn:
        target_scope(store, txn, "history", "workspace", key)
        number = store.catalog.max_number(key, "history")
        for day in sorted(by_day):
            if L.topic_path(key, "history", day) in unreadable:
                continue  # its commits wait for the next pass rather than overwrite the file
            entries = []
            for commit in by_day[day]:
                number += 1
                entries.append(commit_entry(commit, L.format_id(key, "history", number)))
            _write_day(store, txn, key, day, entries)
        days = sorted(day for day in by_day if L.topic_path(key, "history", day) not in unreadable)
        recorded = sum(len(by_day[day]) for day in days)
        txn.message = f"history: {_count(recorded, 'commit')} of {key} ({_count(len(days), 'day')})"
    report.result = "recorded" if recorded else "skipped"
    report.recorded, report.days = recorded, days


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _finish(store: Store, report: HistoryReport) -> HistoryReport:
    counts = ["historyPasses"] + (["historyFallbacks"] if report.fell_back else [])
    activity = None
    if report.recorded or report.fell_back:
        activity = f"history: {_count(report.recorded, 'commit')} of {report.workspace} recorded"
        if report.fell_back:
            activity += " (history was rewritten: bounded walk)"
    record(store.root, "history", count=counts, activity=activity, repo=report.repo,
           workspace=report.workspace, result=report.result, recorded=report.recorded,
           already_recorded=report.already_recorded, fell_back=report.fell_back, head=report.head)
    if report.recorded:
        from gitmem.observe.metrics import bump

        bump(store.root, ["historyCommits"], report.recorded)
    return report
