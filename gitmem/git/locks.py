"""Git's own lock files and the git processes running in a work tree (no pygit2 here).

Git and libgit2 take a lock by creating `<file>.lock` next to the file they change and renaming
it over the file when done; a process killed in between leaves the `.lock` behind, and every
later git write fails until it is removed. Whether anyone still holds such a file cannot be read
from the file itself (git records no owner), so the store decides it from what is running: see
gitmem/store/gitgate.py and docs/decisions/0011-crash-safety-and-concurrency.md.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from gitmem.redaction import redact

# Subcommands that move HEAD or the current branch: a gitmem commit under one of them breaks it.
HEAD_MOVING = frozenset({
    "commit", "merge", "pull", "rebase", "cherry-pick", "revert", "am", "reset", "checkout",
    "switch", "stash", "restore",
})
# Global options of `git` that take a value as the next argument.
_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                            "--config-env", "--super-prefix", "--list-cmds"})
_TOP_LOCKS = ("index.lock", "HEAD.lock", "ORIG_HEAD.lock", "FETCH_HEAD.lock", "MERGE_HEAD.lock",
              "packed-refs.lock", "config.lock", "shallow.lock")


# Beside git's index lock while a gitmem process may hold it (its own, then libgit2's while the
# index is written): which process that is, so that a lock left by one killed meanwhile is
# known to be nobody's (gitmem/store/gitgate.py clears it at the next gitmem command).
INDEX_OWNER = "gitmem-index.owner"

_ANCESTORS: dict[int, list[int]] = {}  # per process id: a forked child has its own


@dataclass(frozen=True)
class GitProcess:
    """A git process whose current folder lies in the work tree."""

    pid: int
    argv: tuple[str, ...]
    start: float | None  # seconds since boot, to the clock tick; None when unknown

    @property
    def subcommand(self) -> str:
        return subcommand_of(self.argv)

    @property
    def moves_head(self) -> bool:
        return self.subcommand in HEAD_MOVING

    def describe(self) -> str:
        return f"pid {self.pid}: {redact(' '.join(self.argv))[:80]}"  # a URL's token: redacted, then cut


def subcommand_of(argv: tuple[str, ...] | list[str]) -> str:
    """`commit` for `git -C x -c a=b commit -m y`; '' when there is none."""
    args = list(argv[1:])
    while args:
        arg = args.pop(0)
        if arg in _VALUE_OPTIONS:
            if args:
                args.pop(0)
        elif not arg.startswith("-"):
            return arg
    return ""


def lock_files(git_dir: Path) -> list[Path]:
    """Every lock file git or libgit2 may leave in a repository (top level, refs/, logs/)."""
    found = [git_dir / name for name in _TOP_LOCKS if os.path.lexists(git_dir / name)]
    for sub in ("refs", "logs"):
        for folder, _dirs, files in os.walk(git_dir / sub):
            found.extend(Path(folder) / name for name in files if name.endswith(".lock"))
    return found


def git_processes(work_tree: Path) -> list[GitProcess] | None:
    """Git processes (other than this one) working in `work_tree`; None where that cannot be
    told (no /proc: not Linux)."""
    proc = Path("/proc")
    if not sys.platform.startswith("linux") or not proc.is_dir():
        return None
    base = os.path.realpath(work_tree)
    own = set(_ancestors())  # this process and those that started it (a hook's git is not in our way)
    found = []
    for name in os.listdir(proc):
        if not name.isdigit() or int(name) in own:
            continue
        try:
            # One system call for most processes: those working elsewhere go no further.
            cwd = os.readlink(f"/proc/{name}/cwd")
            if cwd != base and not cwd.startswith(base + "/"):
                continue
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                argv = tuple(part.decode("utf-8", "replace") for part in handle.read().split(b"\0") if part)
        except OSError:
            continue
        if argv and os.path.basename(argv[0]) == "git":
            found.append(GitProcess(int(name), argv, process_start(int(name))))
    return found


def _ancestors() -> list[int]:
    """This process and its parents, nearest first, up to init (Linux; else just this one)."""
    cached = _ANCESTORS.get(os.getpid())
    if cached is not None:
        return cached
    found, pid = [], os.getpid()
    while pid > 1 and pid not in found:
        found.append(pid)
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                pid = int(handle.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            break
    _ANCESTORS[os.getpid()] = found
    return found


def committing_git() -> int | None:
    """The `git commit` process this one runs under (as its hook), or None when there is none
    or it cannot be told (not Linux)."""
    for pid in _ancestors()[1:]:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                argv = [part.decode("utf-8", "replace") for part in handle.read().split(b"\0") if part]
        except OSError:
            return None
        if argv and os.path.basename(argv[0]) == "git":
            return pid if subcommand_of(argv) == "commit" else None
    return None


def under_git() -> bool:
    """Whether this process runs under a git command (a hook), on Linux; False elsewhere."""
    for pid in _ancestors()[1:]:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                argv0 = handle.read().split(b"\0", 1)[0]
        except OSError:
            return False
        if os.path.basename(argv0.decode("utf-8", "replace")) == "git":
            return True
    return False


def process_start(pid: int) -> float | None:
    """When a process started, in seconds since boot (Linux; to the clock tick), else None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def head_oid(git_dir: Path) -> str | None:
    """HEAD's commit id read from the files (loose ref, else packed-refs); None if unborn."""
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not head.startswith("ref:"):
        return head or None
    ref = head[4:].strip()
    try:
        return (git_dir / ref).read_text(encoding="utf-8").strip() or None
    except OSError:
        pass
    try:
        with open(git_dir / "packed-refs", encoding="utf-8") as handle:
            for line in handle:
                oid, _, name = line.strip().partition(" ")
                if name == ref:
                    return oid
    except OSError:
        pass
    return None
