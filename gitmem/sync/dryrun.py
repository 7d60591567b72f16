"""`gitmem sync --dry-run`: fetch, then say what a sync would do, changing nothing else.

The fetch updates only refs/remotes/origin/* (as `git fetch` does). The work tree, the index and
the branch stay as they are; no commit is made, state/sync.json is not touched. When both sides
have commits, the entry-by-entry merge runs in memory on the two commits, so the conflicts and
renumberings it reports are the ones a sync would produce. Files not yet committed are listed
apart, and since a sync commits them first, the prediction starts from a commit of HEAD with the
pending files as the work tree holds them (made with a separate index and referenced by nothing:
git's object store gains objects no ref names, which git's own gc removes).
"""

from __future__ import annotations

import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem.errors import GitmemError, SyncError
from gitmem.eventlog import log_event
from gitmem.format import layers as L
from gitmem.git.transport import REMOTE
from gitmem.redaction import redact

if TYPE_CHECKING:
    from gitmem.format.entry import TopicFile
    from gitmem.git.history import CommitInfo
    from gitmem.store.store import Store

MAX_COMMITS = 50

_ACTIONS = {
    "up-to-date": "up to date: a sync would change nothing",
    "push": "would push {ahead} local commit(s)",
    "first-push": "would push the branch for the first time ({ahead} commit(s))",
    "fast-forward": "would fast-forward {behind} incoming commit(s)",
    "merge": "would merge {behind} incoming with {ahead} local commit(s), commit the merge and push",
    "unrelated": "would fail: the store and the remote have unrelated histories",
    "nothing": "nothing to sync: neither side has commits",
}


@dataclass
class Commit:
    oid: str
    subject: str


@dataclass
class DryRunReport:
    """What `gitmem sync` would do now."""

    remote: str = ""
    branch: str = ""
    action: str = "up-to-date"  # one of _ACTIONS
    head: str | None = None
    remote_head: str | None = None
    base: str | None = None
    ahead: int = 0
    behind: int = 0
    outgoing_commits: list[Commit] = field(default_factory=list)
    incoming_commits: list[Commit] = field(default_factory=list)
    outgoing_files: list[str] = field(default_factory=list)
    incoming_files: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)  # uncommitted: a sync commits them first
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    renumbered: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    changed: bool = False  # always False: nothing but the remote-tracking refs was touched

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    def text(self) -> str:
        out = [f"dry run against {self.remote} ({self.branch}): nothing was changed",
               _ACTIONS[self.action].format(ahead=self.ahead, behind=self.behind)]
        if self.pending:
            out.append(f"would first commit {len(self.pending)} pending file(s): "
                       + ", ".join(self.pending[:10]) + (" ..." if len(self.pending) > 10 else ""))
        for title, commits in (("incoming", self.incoming_commits), ("outgoing", self.outgoing_commits)):
            out += [f"{title} commit {c.oid[:12]} {c.subject}" for c in commits]
        out += [f"incoming file {p}" for p in self.incoming_files]
        out += [f"outgoing file {p}" for p in self.outgoing_files]
        out += [f"would renumber {old} -> {new}" for old, new in sorted(self.renumbered.items())]
        out += [f"would conflict: {c['path']} {c['entry_id'] or ''} {c['title']}".rstrip()
                for c in self.conflicts]
        out += [f"note: {n}" for n in self.notes]
        return "\n".join(out)


def dry_run(store: Store) -> DryRunReport:
    """Fetch and report what a sync would do; SyncError/AuthError when the fetch fails."""
    store.require()
    git = store.git
    url = git.remote_url(REMOTE)
    if not url:
        raise SyncError("no remote is configured for this store: run `gitmem remote set URL`")
    report = DryRunReport(remote=redact(url), branch=git.branch())
    if report.branch == "HEAD":
        raise SyncError("the store's HEAD is detached: check out a branch, then sync")
    with store.locked():
        head = git.head_oid()
        theirs = git.fetch(remote=REMOTE, branch=report.branch)
        report.head, report.remote_head = head, theirs
        report.pending = git.dirty_paths()
        pending = _pending_commit(store, head, report.pending, report.notes)
        _compare(store, report, pending or head, theirs)
    if report.pending and report.action == "up-to-date":
        report.action = "push"
    log_event(store.root, {"event": "sync-dry-run", "remote": report.remote, "branch": report.branch,
                           "action": report.action, "ahead": report.ahead, "behind": report.behind,
                           "conflicts": len(report.conflicts)})
    return report


def _pending_commit(store: Store, head: str | None, pending: list[str], notes: list[str]) -> str | None:
    """A commit of HEAD with the pending files as they are now: what a sync's first commit would
    be (normalized by it, and without a file it cannot commit). None without pending files."""
    from gitmem import caller
    from gitmem.fsio import is_temp_name
    from gitmem.git import binary as gitcli

    paths = [p for p in pending if not is_temp_name(p)]
    if head is None or not paths:
        return None
    try:
        with tempfile.TemporaryDirectory(prefix="gitmem-dry-run-") as tmp:
            env = {**caller.environ(), "GIT_INDEX_FILE": str(Path(tmp) / "index")}
            gitcli.run(store.root, ["read-tree", head], env=env)
            gitcli.run(store.root, ["add", "-A", "--", *paths], env=env)
            tree = gitcli.run(store.root, ["write-tree"], env=env).decode().strip()
        return gitcli.run(store.root, ["commit-tree", tree, "-p", head, "-m", "pending files"],
                          env=caller.child_env()).decode().strip()
    except GitmemError as exc:
        notes.append(f"predicted from the committed state only ({exc})")
        return None


def _commits(items: list[CommitInfo]) -> list[Commit]:
    """The newest MAX_COMMITS commits, each as oid and subject line."""
    return [Commit(c.oid, (c.message.strip().splitlines() or [""])[0]) for c in items[:MAX_COMMITS]]


def _compare(store: Store, report: DryRunReport, head: str | None, theirs: str | None) -> None:
    """Fill in the action, commits and files from HEAD and the fetched remote branch."""
    git = store.git
    if head is None and theirs is None:
        report.action = "nothing"
        return
    if theirs is None or head is None:
        tip = head if theirs is None else theirs
        assert tip is not None
        commits = git.commits_between(None, tip, 10**9)
        files = git.changed_between(None, tip)
        if theirs is None:
            report.action, report.ahead = "first-push", len(commits)
            report.outgoing_commits, report.outgoing_files = _commits(commits), files
        else:
            report.action, report.behind = "fast-forward", len(commits)
            report.incoming_commits, report.incoming_files = _commits(commits), files
        return
    if head == theirs:
        return
    base = git.merge_base(head, theirs)
    report.base = base
    if base is None:
        report.action = "unrelated"
        report.notes.append("sync changes nothing in this case; see `gitmem sync` for the way out")
        return
    report.ahead, report.behind = git.ahead_behind(head, theirs)
    report.outgoing_commits = _commits(git.commits_between(base, head, MAX_COMMITS))
    report.incoming_commits = _commits(git.commits_between(base, theirs, MAX_COMMITS))
    report.outgoing_files = git.changed_between(base, head)
    report.incoming_files = git.changed_between(base, theirs)
    if base == theirs:
        report.action = "push"
    elif base == head:
        report.action = "fast-forward"
    else:
        report.action = "merge"
        _predict_merge(store, report, base, head, theirs)


def _predict_merge(store: Store, report: DryRunReport, base: str, head: str, theirs: str) -> None:
    """Run the entry-level merge in memory; record its conflicts and renumberings."""
    from gitmem.sync.commits import merge_commits

    store.catch_up_catalog()
    merged = None
    try:
        merged = merge_commits(store, base, head, theirs)
    except GitmemError as exc:
        report.notes.append(f"the merge could not be predicted: {exc}")
    finally:
        _restore_catalog(store, list(merged.files) if merged else None)
    if merged is None:
        return
    report.conflicts = [{"path": c.path, "entry_id": c.entry_id, "title": c.title, "kind": c.kind}
                        for c in merged.conflicts]
    report.renumbered = dict(merged.renumbered)
    report.notes.extend(merged.notes)


def _restore_catalog(store: Store, paths: list[str] | None) -> None:
    """The merge taught the catalog the merged files; teach it the work tree's again."""
    if paths is None:
        store.catalog.set_meta("built", None)  # unknown damage: rebuild on next use
        return

    def read(relpath: str) -> TopicFile | None:
        try:
            return store.read_file(relpath)
        except GitmemError:
            from gitmem.format.entry import TopicFile

            return TopicFile()

    store.catalog.refresh([p for p in paths if L.classify_path(p).kind == "topic"], read)
