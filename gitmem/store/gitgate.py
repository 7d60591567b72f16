"""gitmem writers and plain git in one repository: who may move HEAD, and which git lock files
are stale. The reasoning is in docs/decisions/0011-crash-safety-and-concurrency.md.

Lock order: the store lock first, git's own locks (index.lock, ref locks) second. A gitmem writer
takes git's locks only while it holds the store lock, and only after `prepare_git_write` has
(1) waited until no plain git command that moves HEAD is running in the work tree, handing its
store lock to the pre-commit hook of a waiting `git commit` (a grant), and (2) removed the lock
files nobody can hold any more.

The pre-commit hook announces its `git commit` (state/commits/<pid>.json) and waits for the
store lock or a grant for that pid; a writer that sees the announcement (or, on Linux, the git
process itself) waits until that `git commit` has exited before it moves HEAD.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from gitmem.errors import ConflictError, GitLayerError, GitmemError, LockTimeoutError
from gitmem.eventlog import log_event
from gitmem.fsio import load_json_object, pid_alive, remove_file, write_json_atomic
from gitmem.git.locks import (
    INDEX_OWNER,
    GitProcess,
    git_processes,
    head_oid,
    lock_files,
    process_start,
    under_git,
)
from gitmem.store.lock import open_store_lock

COMMITS_DIR = "state/commits"
HOOKS_STATE = "state/hooks.json"  # written by `gitmem hooks install`, removed by uninstall
PLAIN_GIT_WAIT_SECONDS = 60.0  # a writer waits this long for a plain `git commit` to finish
LIVE_LOCK_WAIT_SECONDS = 10.0  # ... and this long for a lock file some git process may hold
UNKNOWN_HOLDER_AGE_SECONDS = 10.0
OWNER_SPAN_SECONDS = 30.0  # an index.lock taken this long after a gitmem owner record is not its  # without /proc: a lock this old and older than the write is stale
POLL_SECONDS = 0.005
# Git commands that never take a lock: running, they cannot be what holds a lock file.
READ_ONLY_GIT = frozenset({"log", "show", "diff", "grep", "blame", "cat-file", "ls-files", "ls-tree",
                           "rev-parse", "rev-list", "describe", "shortlog", "help", "version",
                           "for-each-ref", "show-ref", "var", "check-ignore", "hash-object"})


@dataclass(frozen=True)
class Announcement:
    """A plain `git commit` whose pre-commit hook asked for the store; `head`: HEAD then."""

    pid: int
    path: Path
    head: str | None


# -- the pre-commit hook's side ----------------------------------------------------------------
def announce(root: Path, git_pid: int, head: str | None) -> None:
    """Tell writers that `git commit` (git_pid) is running and its hook wants the store."""
    write_json_atomic(root / COMMITS_DIR / f"{git_pid}.json",
                      {"pid": git_pid, "start": process_start(git_pid), "head": head}, durable=False)


@contextlib.contextmanager
def hook_turn(root: Path, git_pid: int | None, timeout: float) -> Iterator[None]:
    """The store for the hook of `git commit` (git_pid): its lock, or a writer's grant."""
    lock = open_store_lock(root)
    grant = root / COMMITS_DIR / f"{git_pid}.go" if git_pid is not None else None
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        if lock.try_acquire():
            try:
                yield
            finally:
                lock.release()
            return
        if grant is not None and grant.exists():
            os.close(lock.fd)
            yield
            return
        if time.monotonic() >= deadline:
            os.close(lock.fd)
            raise LockTimeoutError(f"the store was busy for over {timeout:.0f}s (a gitmem write or "
                                   "sync held it); nothing was committed: run the same `git commit` again")
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


def head_moved_under(root: Path, git_pid: int | None, head_before: str | None,
                     head_now: str | None) -> bool:
    """Whether a gitmem write moved HEAD after `git commit` (git_pid) may have read it: while
    the hook waited, or (as the writer noted) just as git started. git's own update of HEAD
    would then fail with `cannot lock ref 'HEAD'`."""
    if head_before != head_now:
        return True
    return git_pid is not None and (root / COMMITS_DIR / f"{git_pid}.moved").exists()


# -- the writer's side -------------------------------------------------------------------------
def announcements(root: Path) -> list[Announcement]:
    """The announced `git commit`s still running (the files of finished ones are removed)."""
    folder = root / COMMITS_DIR
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    found = []
    for name in names:
        stem, _, suffix = name.partition(".")
        if not stem.isdigit():
            continue
        pid, path = int(stem), folder / name
        if not pid_alive(pid):
            remove_file(path)
            continue
        if suffix != "json":
            continue
        data = load_json_object(path)
        if data.get("start") in (None, process_start(pid)):
            found.append(Announcement(pid, path, data.get("head")))
        else:  # the pid now names another process
            remove_file(path)
    return found


def head_movers(root: Path, git_dir: Path, *, processes: bool = True
                ) -> tuple[list[GitProcess], list[Announcement]]:
    """Plain git commands running in the work tree that may still move HEAD, and the announced
    commits among them. A `git commit` whose hook announced it is past moving HEAD once HEAD
    differs from what it was then (it landed, or a gitmem write came first and the hook refuses
    it): what git still does (post-commit hook, maintenance) does not stand in our way."""
    head = head_oid(git_dir)
    announced = announcements(root)
    done = {a.pid for a in announced if a.head != head}
    found = git_processes(root) if processes else None
    running = [p for p in found or [] if p.moves_head and p.pid not in done]
    return running, [a for a in announced if a.pid not in done]


def wait_for_plain_git(root: Path, git_dir: Path, *, processes: bool = True,
                       timeout: float = PLAIN_GIT_WAIT_SECONDS) -> bool:
    """Under the store lock: return once no plain git command that moves HEAD is running,
    granting the store to the pre-commit hook of each waiting `git commit` in turn. Returns
    whether there was anything to wait for. `processes=False` looks only at the commits the
    hooks announced (cheap); True also at the git processes themselves (Linux)."""
    deadline = time.monotonic() + timeout
    waited_for: set[int] = set()
    while True:
        running, announced = head_movers(root, git_dir, processes=processes)
        if not running and not announced:
            if waited_for:
                log_event(root, {"event": "waited-for-git", "pids": sorted(waited_for)})
            return bool(waited_for)
        waited_for.update(p.pid for p in running)
        waited_for.update(a.pid for a in announced)
        grant_next(root, announced)
        if time.monotonic() >= deadline:
            who = running[0].describe() if running else f"pid {announced[0].pid}: git commit"
            raise LockTimeoutError(
                f"a plain git command has been running in the store for over {timeout:.0f}s ({who}); "
                "gitmem does not move HEAD under it: let it finish (or abort it), then retry"
            )
        time.sleep(POLL_SECONDS)


def grant_next(root: Path, announced: list[Announcement]) -> None:
    """Let the hook of the oldest announced commit work under our lock, one commit at a time."""
    if announced and not any((root / COMMITS_DIR / f"{a.pid}.go").exists() for a in announced):
        oldest = min(announced, key=lambda a: a.path.stat().st_mtime if a.path.exists() else 0.0)
        (root / COMMITS_DIR / f"{oldest.pid}.go").touch()


def note_head_moved(root: Path) -> None:
    """Just after a gitmem write moved HEAD: a `git commit` that started since the last look
    may have read the old HEAD; its hook is told so (state/commits/<pid>.moved) and refuses it
    with a message to retry, as git would fail it anyway. Without the hooks nobody reads it."""
    if not (root / HOOKS_STATE).exists():
        return
    for process in git_processes(root) or []:
        if process.subcommand == "commit":
            folder = root / COMMITS_DIR
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{process.pid}.moved").touch()


def clear_stale_locks(root: Path, git_dir: Path, since: float,
                      wait: float = LIVE_LOCK_WAIT_SECONDS) -> list[str]:
    """Under the store lock: remove git lock files no process can hold any more (logged);
    wait for the others to go. Returns the removed files (relative to the store)."""
    removed: list[str] = []
    deadline = time.monotonic() + wait
    locks = lock_files(git_dir)
    while locks:
        holders = _possible_holders(root)
        grant_next(root, announcements(root))  # a `git commit -a` holds the index for its hook
        for lock in locks:
            if _is_stale(lock, since, holders) and (gone := _remove_stale(root, lock)):
                removed.append(gone)
        locks = lock_files(git_dir)
        if not locks:
            break
        if time.monotonic() >= deadline:
            who = "; ".join(h.describe() for h in holders or []) or "a process gitmem cannot see"
            raise GitLayerError(f"{_rel(root, locks[0])} is held by a running git process ({who}); "
                                "retry when it has finished")
        time.sleep(POLL_SECONDS * 2)
    return removed


def _possible_holders(root: Path) -> list[GitProcess] | None:
    """Running processes that could hold a git lock here (None: cannot be told on this system)."""
    announced = [GitProcess(a.pid, ("git", "commit"), None) for a in announcements(root)]
    running = git_processes(root)
    if running is None:
        return announced or None
    holders = [p for p in running if p.subcommand not in READ_ONLY_GIT]
    pids = {p.pid for p in holders}
    return holders + [a for a in announced if a.pid not in pids]


def _is_stale(lock: Path, since: float, holders: list[GitProcess] | None) -> bool:
    """No live holder: we hold the store lock (so no gitmem process holds it), and no git
    process that could is running; the file predates our write (or has sat unchanged)."""
    try:
        mtime = os.lstat(lock).st_mtime
    except FileNotFoundError:
        return False
    age = time.time() - mtime
    if holders is None:  # nothing to look at: only a lock older than our write and than a while
        return mtime < since and age > UNKNOWN_HOLDER_AGE_SECONDS
    if holders:
        return False
    return mtime < since or age > 2.0


def _remove_stale(root: Path, lock: Path) -> str | None:
    """Remove and log a stale lock file; None when it went away by itself meanwhile."""
    relpath = _rel(root, lock)
    try:
        age = time.time() - os.lstat(lock).st_mtime
    except FileNotFoundError:
        return None
    if not remove_file(lock):
        return None
    log_event(root, {"event": "stale-lock-removed", "path": relpath, "age_seconds": round(age, 1)})
    return relpath


def _rel(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def leftover_locks(root: Path, git_dir: Path, older_than: float = 60.0) -> list[str]:
    """Git lock files that look abandoned (for status and check; nothing is removed here)."""
    holders = _possible_holders(root)
    if holders:
        return []
    now = time.time()
    found = []
    for lock in lock_files(git_dir):
        with contextlib.suppress(OSError):
            if now - os.lstat(lock).st_mtime > (2.0 if holders is not None else older_than):
                found.append(_rel(root, lock))
    return sorted(found)


# -- an index.lock a killed gitmem left behind ---------------------------------------------------
def clear_orphaned_index_lock(root: Path, git_dir: Path) -> str | None:
    """At every gitmem command (any verb, read or write, and the hooks): when the gitmem process
    recorded as holding git's index lock (see git/worktree.index_writing) is gone, the
    index.lock it may have left is removed (logged), so a plain `git commit` works again.
    Returns the removed lock (relative to the store), None when there was none.

    Not under a git command (a hook: its git holds the lock), not while a gitmem writer holds
    the store lock (it clears stale locks itself), never a lock some running git may hold."""
    owner = git_dir / INDEX_OWNER
    try:
        recorded = owner.read_text(encoding="utf-8")
        since = os.lstat(owner).st_mtime
    except (OSError, UnicodeDecodeError):
        return None
    if _owner_alive(recorded) or under_git():
        return None
    try:
        lock = open_store_lock(root)
    except (OSError, GitmemError):
        return None
    if not lock.try_acquire():
        os.close(lock.fd)
        return None
    try:
        return _clear_owned(root, git_dir, owner, recorded, since)
    finally:
        lock.release()


def _owner_alive(recorded: str) -> bool:
    pid_text, _, start = recorded.strip().partition(" ")
    if not pid_text.isdigit():
        return False
    pid = int(pid_text)
    return pid_alive(pid) and start in ("None", "", str(process_start(pid)))


def _clear_owned(root: Path, git_dir: Path, owner: Path, recorded: str, since: float) -> str | None:
    """Under the store lock: remove the dead owner's record, and its index.lock when no running
    git could hold it and it was taken while that owner may have held it."""
    try:
        if owner.read_text(encoding="utf-8") != recorded:
            return None  # another gitmem process took the index meanwhile
    except (OSError, UnicodeDecodeError):
        return None
    index_lock = git_dir / "index.lock"
    removed = None
    try:
        mtime = os.lstat(index_lock).st_mtime
    except FileNotFoundError:
        mtime = None
    if mtime is not None and since - 1.0 <= mtime <= since + OWNER_SPAN_SECONDS:
        holders = _possible_holders(root)
        nobody = holders == [] or (holders is None and time.time() - mtime > UNKNOWN_HOLDER_AGE_SECONDS)
        if nobody:
            removed = _remove_stale(root, index_lock)
    if mtime is None or removed is not None:
        remove_file(owner)
    return removed


def rebase_in_progress(git_dir: Path) -> bool:
    """A `git rebase` (merge or apply backend) has started and not finished in this repository."""
    return (git_dir / "rebase-merge").exists() or (git_dir / "rebase-apply").exists()


def refuse_off_branch(git_dir: Path, verb: str) -> None:
    """A write while HEAD is detached (a rebase stopped on a conflict, a checkout of a commit)
    would commit where the branch never sees it (`git rebase --abort` or a checkout of the
    branch drops the commit and its text): refused, as sync refuses. `resolve` settles the
    conflict a rebase stopped on; the hooks that run once a rebase is done find HEAD on the
    branch again."""
    if verb == "resolve":
        return
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8")
    except OSError:
        return  # no repository yet, or one git reads differently: the commit says what is wrong
    if head.startswith("ref:"):
        return
    if rebase_in_progress(git_dir):
        raise ConflictError("a git rebase is in progress in the store: finish it (`gitmem resolve` "
                            "settles a conflict it stopped on, then `git rebase --continue`) or "
                            "`git rebase --abort`, then write again; nothing was written")
    raise ConflictError("HEAD is detached in the store (a checkout of a commit): check out its "
                        "branch again (`git switch -`), then write; nothing was written")
