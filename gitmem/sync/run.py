"""`gitmem sync`: commit pending changes, fetch, merge entry by entry, push (bounded retry when
the remote moved meanwhile); and the conflicts a merge left behind.

A merge that leaves conflict markers is still committed and pushed: both machines then hold the
same tree with both versions of each colliding entry, either can resolve it, and nothing one of
them wrote is only on its disk. While markers remain `gitmem sync` still exchanges commits (so a
resolution made on the other machine arrives) but exits 3, and `state/CONFLICT.md` says where the
markers are and which version came from where. A file being resolved (edited, markers still in
it) stops the sync before anything is committed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from gitmem.errors import ConflictError, GitmemError, SyncError
from gitmem.format import layers as L
from gitmem.fsio import read_text
from gitmem.git.repo import PushRejectedError
from gitmem.observe.record import record
from gitmem.redaction import redact
from gitmem.store.store import refuse_subagent
from gitmem.sync.state import (
    CONFLICT_FILE,
    ConflictRecord,
    has_markers,
    load_sync_state,
    log_event,
    marker_blocks,
    record_sync,
    write_conflicts,
)

if TYPE_CHECKING:
    from gitmem.merge.entries import MergeConflict
    from gitmem.store.store import Store

MAX_ATTEMPTS = 3
REMOTE = "origin"


@dataclass
class SyncReport:
    """What one `gitmem sync` did."""

    remote: str = ""
    branch: str = ""
    result: str = "up-to-date"  # up-to-date | pushed | fast-forward | merged | conflicts
    head: str | None = None
    ahead: int = 0
    behind: int = 0
    attempts: int = 0
    committed: list[str] = field(default_factory=list)  # local files committed before syncing
    incoming: list[str] = field(default_factory=list)  # files changed here by the remote's side
    pushed: bool = False
    merged: bool = False
    fast_forwarded: bool = False
    renumbered: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    conflicts: list[ConflictRecord] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["conflicts"] = [c.as_json() for c in self.conflicts]
        return data

    def text(self) -> str:
        where = f"{self.remote} ({self.branch})"
        lines = {
            "up-to-date": f"up to date with {where}",
            "pushed": f"pushed to {where}",
            "fast-forward": f"fast-forwarded to {where}: {len(self.incoming)} file(s) changed",
            "merged": f"merged {where} ({len(self.incoming)} file(s) changed here) and pushed",
            "conflicts": f"merged {where} with {len(self.conflicts)} conflict(s) and pushed; both "
                         f"versions are kept; see {CONFLICT_FILE}",
        }
        out = [lines.get(self.result, self.result)]
        if self.committed:
            out.append(f"committed {len(self.committed)} pending file(s) first")
        out += [f"renumbered {old} -> {new}" for old, new in sorted(self.renumbered.items())]
        out += [f"note: {n}" for n in self.notes]
        out += [f"conflict: {c.path} {c.entry_id or ''} {c.title}".rstrip() for c in self.conflicts]
        return "\n".join(out)


# -- sync -----------------------------------------------------------------------------------
def sync(
    store: Store, *, max_attempts: int = MAX_ATTEMPTS, progress: Callable[[str], None] | None = None
) -> SyncReport:
    """Sync the store with its remote; every attempt is logged and recorded in state/sync.json.

    Raises SyncError/AuthError (network, auth, remote, history) and ConflictError (markers left
    from an earlier merge). A merge that produced conflicts returns normally with `conflicts` set.
    """
    refuse_subagent("sync")
    store.require()
    report = SyncReport(branch=store.git.branch())
    say = progress or (lambda _msg: None)
    try:
        with store.locked():
            _sync_locked(store, report, max(1, max_attempts), say)
    except Exception as exc:
        error = str(exc) if isinstance(exc, GitmemError) else f"{type(exc).__name__}: {exc}"
        _ahead_behind(store, report)
        record_sync(store.root, error=redact(error), result="failed", remote=report.remote,
                    branch=report.branch, ahead=report.ahead, behind=report.behind,
                    conflicts=[c.as_json() for c in report.conflicts])
        record(store.root, "sync", count=("syncs", "failures.sync"),
               activity=f"sync failed: {error}", result="failed", remote=report.remote,
               branch=report.branch, error=error)
        raise
    record_sync(store.root, error=None, result=report.result, remote=report.remote,
                branch=report.branch, head=report.head, ahead=report.ahead, behind=report.behind,
                conflicts=[c.as_json() for c in report.conflicts])
    record(store.root, "sync", count=("syncs",), activity=f"sync: {report.result} ({report.remote})",
           result=report.result, remote=report.remote, branch=report.branch,
           attempts=report.attempts, incoming=len(report.incoming),
           conflicts=len(report.conflicts), renumbered=report.renumbered)
    return report


def _sync_locked(store: Store, report: SyncReport, attempts: int, say: Callable[[str], None]) -> None:
    git = store.git
    url = git.remote_url(REMOTE)
    if not url:
        raise SyncError("no remote is configured for this store: run `gitmem remote set URL`")
    report.remote = redact(url)
    if report.branch == "HEAD":
        raise SyncError("the store's HEAD is detached: check out a branch, then sync")
    refuse_unfinished(store)
    if git.upstream(report.branch) is None:  # stores made before init/remote set tracked it
        git.set_upstream(report.branch, REMOTE)
    _ = store.registry  # a broken memory.json stops the sync before anything changes
    store.recover_interrupted()
    report.committed = store.absorb_hand_edits()
    report.committed += import_runtime_edits(store)
    store.catch_up_catalog()
    report.committed += repair_layer_indexes(store)
    found: list[ConflictRecord] = []
    for attempt in range(1, attempts + 1):
        report.attempts = attempt
        say(f"fetching {report.remote}")
        theirs = git.fetch(remote=REMOTE, branch=report.branch)
        if not _integrate(store, report, theirs, found, say):
            break
        say(f"pushing to {report.remote}")
        try:
            git.push(remote=REMOTE, branch=report.branch)
        except PushRejectedError as exc:
            log_event(store.root, {"event": "sync-retry", "attempt": attempt, "error": str(exc)})
            if attempt == attempts:
                raise SyncError(f"push to {report.remote} was rejected {attempts} times because"
                                " the remote kept moving; run `gitmem sync` again") from exc
            continue
        report.pushed = True
        break
    report.head = git.head_oid()
    _ahead_behind(store, report)
    report.conflicts = current_conflicts(store, found + recorded_conflicts(store), report.incoming)
    write_conflicts(store.root, report.conflicts)
    report.result = _result(report)


def _result(report: SyncReport) -> str:
    if report.conflicts:
        return "conflicts"
    if report.merged:
        return "merged"
    if report.fast_forwarded:
        return "fast-forward"
    return "pushed" if report.pushed else "up-to-date"


def _integrate(store: Store, report: SyncReport, theirs: str | None,
               found: list[ConflictRecord], say: Callable[[str], None]) -> bool:
    """Bring the remote's commits in; True when there is something to push."""
    git = store.git
    head = git.head_oid()
    if theirs is None or head == theirs:
        return head is not None and theirs is None  # first push of the branch, or up to date
    if head is None:
        _fast_forward(store, report, head, theirs)
        return False
    base = git.merge_base(head, theirs)
    if base is None:
        raise SyncError(
            f"the store and {report.remote} have unrelated histories (no common commit);"
            " nothing was changed. To use the remote's memory on this machine, move this store"
            " away and run `gitmem init --remote URL` in an empty folder"
        )
    if base == theirs:
        return True  # only local commits: push them
    if base == head:
        say("fast-forwarding")
        _fast_forward(store, report, head, theirs)
        return False
    say("merging entry by entry")
    _merge(store, report, base, head, theirs, found)
    return True


def _fast_forward(store: Store, report: SyncReport, head: str | None, theirs: str) -> None:
    git = store.git
    git.fast_forward(theirs)
    changed = git.changed_between(head, theirs)
    store.catch_up_catalog()
    store.update_search_index(changed)
    report.incoming = sorted(set(report.incoming) | set(changed))
    report.fast_forwarded = True


def _merge(store: Store, report: SyncReport, base: str, head: str, theirs: str,
           found: list[ConflictRecord]) -> None:
    from gitmem.sync.commits import merge_commits

    git = store.git
    tracking = f"{REMOTE}/{report.branch}"
    try:
        merged = merge_commits(store, base, head, theirs)
        lines = [*(f"{old} -> {new}" for old, new in sorted(merged.renumbered.items())),
                 *merged.notes[:40]]
        message = f"sync: merge {tracking}\n" + ("\n" + "\n".join(f"- {n}" for n in lines) + "\n"
                                                if lines else "")
        new = git.commit_merge(merged.files, message, [head, theirs])
    except Exception:
        # The catalog may describe merged files that were not committed: rebuild it next time.
        store.catalog.set_meta("built", None)
        raise
    store.catalog.set_meta("head", new)
    changed = git.changed_between(head, new)
    store.update_search_index(changed)
    report.incoming = sorted(set(report.incoming) | set(changed))
    report.merged = True
    report.renumbered.update(merged.renumbered)
    report.notes.extend(merged.notes)
    ours_label = f"this machine (local commit {head[:12]})"
    theirs_label = f"{tracking} (remote commit {theirs[:12]})"
    found[:] = [_record(c, ours_label, theirs_label) for c in merged.conflicts]


def _record(conflict: MergeConflict, ours: str, theirs: str) -> ConflictRecord:
    return ConflictRecord(conflict.path, conflict.entry_id, conflict.title, conflict.kind, ours, theirs)


def _ahead_behind(store: Store, report: SyncReport) -> None:
    """Commits only here / only on the remote, as last fetched (0, 0 when unknown)."""
    try:
        git = store.git
        head = git.head_oid()
        if head is not None:
            tracking = f"refs/remotes/{REMOTE}/{report.branch}"
            report.ahead, report.behind = git.ahead_behind(head, tracking)
    except GitmemError:
        pass


# -- conflicts ------------------------------------------------------------------------------
def current_conflicts(
    store: Store, known: list[ConflictRecord], extra_paths: list[str] | None = None,
    *, scan_all: bool = True,
) -> list[ConflictRecord]:
    """Every block of conflict markers in the known paths, extra paths and (scan_all) memory files.

    A block a recorded conflict describes keeps its record (origin of each version); a block
    that arrived from another machine's merge is described from the commit that wrote it.
    """
    from gitmem.format.document import DOCUMENT_COPY_RE
    from gitmem.merge.records import record_conflicts
    from gitmem.store.tree import conflicted_files, document_conflicted

    records: dict[tuple[str, str | None], list[ConflictRecord]] = {}
    for rec in known:
        records.setdefault((rec.path, rec.entry_id), []).append(rec)
    paths = {rec.path for rec in known} | set(extra_paths or [])
    if scan_all:
        paths |= set(conflicted_files(store.root))
    out: list[ConflictRecord] = []
    for path in sorted(paths):
        full = store.path(path)
        try:
            text = read_text(full) if full.is_file() else ""
        except (OSError, UnicodeDecodeError):
            continue
        if is_record_file(path):
            blocks = [(0, ident, title) for ident, title in record_conflicts(text)]
        elif not has_markers(text) or (DOCUMENT_COPY_RE.match(path)
                                       and not document_conflicted(store.root, path, text)):
            continue
        else:
            blocks = marker_blocks(text) or [(1, None, "conflict markers")]
        for _line, entry_id, title in blocks:
            queue = records.get((path, entry_id))
            out.append(queue.pop(0) if queue else _described(store, path, entry_id, title))
    return out


def _described(store: Store, path: str, entry_id: str | None, title: str) -> ConflictRecord:
    """A conflict block nobody recorded here: name the merge commit that wrote it."""
    ours = theirs = "unknown (markers written outside gitmem sync)"
    try:
        last = store.git.log(limit=1, path=path)
    except GitmemError:
        last = []
    if last and len(last[0].parents) >= 2:
        merge = last[0].oid[:12]
        ours = f"first parent {last[0].parents[0][:12]} of merge {merge}"
        theirs = f"second parent {last[0].parents[1][:12]} of merge {merge}"
    elif last:
        ours = theirs = f"committed in {last[0].oid[:12]}"
    kind = "both-edited" if entry_id else "markers"
    return ConflictRecord(path, entry_id, title, kind, ours, theirs)


def recorded_conflicts(store: Store) -> list[ConflictRecord]:
    """The conflicts state/sync.json remembers from this machine's last sync."""
    out = []
    for item in load_sync_state(store.root).get("conflicts") or []:
        if isinstance(item, dict) and isinstance(item.get("path"), str):
            out.append(ConflictRecord(
                item["path"], item.get("entry_id"), str(item.get("title", "")),
                str(item.get("kind", "markers")), str(item.get("ours", "")), str(item.get("theirs", "")),
            ))
    return out


def list_conflicts(store: Store) -> list[ConflictRecord]:
    """What `gitmem conflicts` shows: every block of markers left in the store."""
    store.require()
    return current_conflicts(store, recorded_conflicts(store), store.git.dirty_paths())


def refuse_unfinished(store: Store) -> None:
    """ConflictError while a git merge is half done or an edited file still holds markers."""
    gitdir = store.root / ".git"
    for name in ("MERGE_HEAD", "rebase-merge", "rebase-apply"):
        if (gitdir / name).exists():
            raise ConflictError(
                "a git merge or rebase is in progress in the store: finish it (commit or"
                " `git rebase --continue`) or abort it, then run `gitmem sync`"
            )
    dirty = store.git.dirty_paths()
    known = [c for c in recorded_conflicts(store) if c.path in set(dirty)]
    left = [c for c in current_conflicts(store, known, dirty, scan_all=False)
            if not is_record_file(c.path)]  # a record in conflict stays valid JSON: sync goes on
    if left:
        write_conflicts(store.root, current_conflicts(store, recorded_conflicts(store), dirty))
        files = ", ".join(dict.fromkeys(c.path for c in left))
        raise ConflictError(
            f"conflict markers remain in {files}: finish resolving (see {CONFLICT_FILE}) and"
            " remove every marker line, then run `gitmem sync` again"
        )


def is_record_file(path: str) -> bool:
    """Runtime records and document indexes: conflicts live inside the JSON, not as markers."""
    return path.endswith(("/runtime/memories.json", "/documents/index.json"))


def import_runtime_edits(store: Store) -> list[str]:
    """Bring hand edits of USER.md / MEMORY.md into memories.json before commits are exchanged,
    so that a merge renders no projection over an edit; returns the files committed."""
    from gitmem.runtime.verbs import import_all

    with store.writing("sync") as txn:
        imported = import_all(store, txn)
        details = "".join(f"- {line}\n" for line in imported)
        txn.message = (f"sync: import hand edits of runtime memory\n\n{details}" if details
                       else "sync: render USER.md/MEMORY.md from memories.json")
        touched = list(txn.touched)
    return touched


def repair_layer_indexes(store: Store) -> list[str]:
    """Regenerate layer indexes that do not match their topic files (after a plain git merge)."""
    layers: set[str] = set()
    for scope in store.scope_keys():
        for layer in L.TOPIC_LAYERS:
            if store.path(L.layer_index_path(scope, layer)).exists() or store.catalog.topics(scope, layer):
                layers.add(L.topic_path(scope, layer, "x"))
    changed = store.regenerate_layer_indexes(sorted(layers))
    if changed:
        store.git.commit_paths(changed, "sync: regenerate layer indexes")
        store.catalog.set_meta("head", store.git.head_oid())
    return changed
