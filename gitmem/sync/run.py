"""`gitmem sync`: commit pending changes, fetch, merge entry by entry, push (bounded retry when
the remote moved meanwhile); and the conflicts a merge left behind.

A merge that leaves conflict markers is still committed and pushed: both machines then hold the
same tree with both versions of each colliding entry, either can resolve it, and nothing one of
them wrote is only on its disk. While markers remain `gitmem sync` still exchanges commits (so a
resolution made on the other machine arrives) but exits 3, and `state/CONFLICT.md` says where the
markers are and which version came from where. A file being resolved (edited, markers still in
it) is left out of the sync's commits (a note says so) unless the remote changed it too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from gitmem.errors import GitmemError, SyncError
from gitmem.format import layers as L
from gitmem.git.machine import machine_name
from gitmem.git.repo import PushRejectedError
from gitmem.git.transport import REMOTE
from gitmem.merge.common import Labels
from gitmem.observe.record import record
from gitmem.redaction import redact
from gitmem.store.store import refuse_subagent
from gitmem.store.txn import commit_message
from gitmem.sync.conflicts import (  # noqa: F401 - list_conflicts, is_record_file: module API
    current_conflicts,
    is_record_file,
    list_conflicts,
    recorded_conflicts,
    refuse_incoming_held,
    refuse_unfinished,
)
from gitmem.sync.state import CONFLICT_FILE, ConflictRecord, log_event, record_sync, write_conflicts

if TYPE_CHECKING:
    from gitmem.store.store import Store

MAX_ATTEMPTS = 3


@dataclass
class SyncReport:
    """What one `gitmem sync` did."""

    remote: str = ""
    branch: str = ""
    # What happened: up-to-date | pushed | fast-forward | merged. `result` is the same, or
    # "conflicts" while marker blocks remain in the store (whatever this sync did).
    action: str = "up-to-date"
    result: str = "up-to-date"
    head: str | None = None
    ahead: int = 0
    behind: int = 0
    attempts: int = 0
    committed: list[str] = field(default_factory=list)  # local files committed before syncing
    incoming: list[str] = field(default_factory=list)  # files changed here by the remote's side
    pushed: bool = False
    pushed_commits: int = 0  # commits the remote did not have (0 when it had no branch yet)
    merged: bool = False
    fast_forwarded: bool = False
    other_machine: str | None = None  # the machine that made the remote's commit we merged
    renumbered: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    new_conflicts: int = 0  # blocks this sync's merge wrote (and pushed)
    arrived_conflicts: int = 0  # blocks that came in with the remote's commits
    conflicts: list[ConflictRecord] = field(default_factory=list)  # every block left in the store

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["conflicts"] = [c.as_json() for c in self.conflicts]
        return data

    def text(self) -> str:
        """One line per thing that happened, each saying exactly that."""
        out = [f"committed {len(self.committed)} pending file(s)"] if self.committed else []
        out.append(self._action_line())
        out += [f"renumbered {old} -> {new}" for old, new in sorted(self.renumbered.items())]
        out += [f"note: {n}" for n in self.notes]
        if self.new_conflicts:
            other = self.other_machine or "the remote"
            out.append(f"{self.new_conflicts} entr{'y was' if self.new_conflicts == 1 else 'ies were'}"
                       f" edited differently here and on {other}: both versions are kept between"
                       " markers in the merge commit, which was pushed")
        if self.conflicts:
            out.append(self._conflicts_line())
            out += [f"conflict: {c.ref} {c.title} in {c.path}:{c.line} "
                    f"(<<<<<<< {c.ours}; >>>>>>> {c.theirs})" for c in self.conflicts]
        return "\n".join(out)

    def _action_line(self) -> str:
        where = f"{self.remote} ({self.branch})"
        return {
            "up-to-date": f"up to date with {where}: nothing to fetch or push",
            "pushed": f"pushed {self._pushed_what()} to {where}",
            "fast-forward": f"fast-forwarded to {where}: {len(self.incoming)} file(s) changed here;"
                            " nothing to push",
            "merged": f"merged {where} ({len(self.incoming)} file(s) changed here) and pushed the merge",
        }.get(self.action, self.action)

    def _pushed_what(self) -> str:
        n = self.pushed_commits
        return f"{n} commit{'s' if n != 1 else ''}" if n else "this machine's commits"

    def _conflicts_line(self) -> str:
        new, arrived = self.new_conflicts, self.arrived_conflicts
        before = len(self.conflicts) - new - arrived
        parts = [f"{n} {what}" for n, what in ((new, "from this merge"),
                                                (arrived, f"arrived from {self.remote}"),
                                                (before, "left from before")) if n]
        return (f"{len(self.conflicts)} conflict(s) to resolve ({', '.join(parts)}); see"
                f" {CONFLICT_FILE}: `gitmem conflicts` lists them, `gitmem resolve ID"
                " --ours|--theirs|--both` settles one")


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
        failed = record_sync(store.root, error=redact(error), result="failed", remote=report.remote,
                             branch=report.branch, ahead=report.ahead, behind=report.behind,
                             conflicts=[c.as_json() for c in report.conflicts],
                             failure=type(exc).__name__)
        _record_failure(store, failed)
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


def _record_failure(store: Store, failed: dict[str, Any]) -> None:
    """state/CONFLICT.md says the sync failed and how to settle it (with the conflicts left)."""
    try:
        records = list_conflicts(store)
    except Exception:  # noqa: BLE001 - the failure itself must still be written down
        records = []
    write_conflicts(store.root, records, failure=failed)


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
    store.held = {}
    store.recover_interrupted()
    report.committed = store.absorb_hand_edits()
    report.committed += import_runtime_edits(store)
    store.catch_up_catalog()
    report.committed += repair_layer_indexes(store)
    _settle_unpublished_duplicates(store, report)
    start = git.head_oid()  # what was here before anything arrived
    found: list[ConflictRecord] = []
    for attempt in range(1, attempts + 1):
        report.attempts = attempt
        say(f"fetching {report.remote}")
        theirs = git.fetch(remote=REMOTE, branch=report.branch)
        if not _integrate(store, report, theirs, found, say):
            break
        say(f"pushing to {report.remote}")
        head = git.head_oid()
        report.pushed_commits = git.ahead_behind(head, theirs)[0] if head and theirs else 0
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
    report.notes += [f"duplicate Id {ident} in {', '.join(paths)}: `gitmem check --fix` settles it"
                     for ident, paths in sorted(store.catalog.duplicates().items())]
    conflicts = current_conflicts(store, found + recorded_conflicts(store), report.incoming)
    new = {(c.path, c.entry_id) for c in found}
    before = _conflicts_at(store, start, {c.path for c in conflicts})

    def origin(c: ConflictRecord) -> int:  # 0 written by this merge, 1 arrived, 2 was here
        key = (c.path, c.entry_id)
        return 0 if key in new else 2 if key in before else 1

    report.conflicts = sorted(conflicts, key=origin)  # stable: file order within each group
    report.new_conflicts = sum(1 for c in report.conflicts if origin(c) == 0)
    report.arrived_conflicts = sum(1 for c in report.conflicts if origin(c) == 1)
    write_conflicts(store.root, report.conflicts, failure=None)  # this sync went through
    report.action = _action(report)
    report.result = "conflicts" if report.conflicts else report.action


def _settle_unpublished_duplicates(store: Store, report: SyncReport) -> None:
    """A plain git merge whose post-merge hook never ran (killed, or no hooks installed) can
    leave this machine's entries under an Id the published commit gives another entry: they
    are renumbered, as the hook would have, before anything is pushed."""
    from gitmem.githooks.collisions import published_ref, settle_collisions

    if not store.catalog.duplicates():
        return
    settled = settle_collisions(store, published_ref(store), absorb=False)
    report.renumbered.update(settled.renumbered)
    report.notes += settled.notes


def _conflicts_at(store: Store, commit: str | None, paths: set[str]) -> set[tuple[str, str | None]]:
    """(path, entry Id) of the conflict blocks these files held at `commit`."""
    from gitmem.format.conflicts import conflict_blocks

    found: set[tuple[str, str | None]] = set()
    for path in sorted(paths) if commit else []:
        data = store.git.read_file_at(commit or "", path)
        text = data.decode("utf-8", errors="replace") if data else ""
        found |= {(path, block.entry_id) for block in conflict_blocks(text)} if "<<<<<<<" in text else set()
    return found


def _action(report: SyncReport) -> str:
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
    refuse_incoming_held(store, head, theirs)
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
    report.other_machine = git.commit_info(theirs).machine
    # The marker lines name each side's machine and commit, so every machine that later holds
    # the file (fast-forward, plain git pull) reads where each version came from.
    labels = Labels(f"{machine_name()} {head[:12]}",
                    f"{report.other_machine or tracking} {theirs[:12]}")
    try:
        merged = merge_commits(store, base, head, theirs, labels)
        lines = [*(f"{old} -> {new}" for old, new in sorted(merged.renumbered.items())),
                 *merged.notes[:40]]
        message = f"sync: merge {tracking}\n" + ("\n" + "\n".join(f"- {n}" for n in lines) + "\n"
                                                if lines else "")
        new = git.commit_merge(merged.files, commit_message(message), [head, theirs])
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
    found[:] = [ConflictRecord(c.path, c.entry_id, c.title, c.kind, "", "") for c in merged.conflicts]


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
