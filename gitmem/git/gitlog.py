"""The one parser of `git log`: a code repository's commits with the files each changed (history
ingest, code-bound freshness), and the day lines first appeared in the store's memory files
(Created dates of hand-written entries). Through the git binary (git/binary.py), so neither the
post-commit hook nor a search loads pygit2. The store's own history walk (why, log, as-of) is
pygit2's revwalk in git/history.py, reached through GitRepo.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from gitmem.git.binary import run
from gitmem.git.workrepo import code_env

_FORMAT = "--format=%x1e%H%x1f%P%x1f%aI%x1f%ct%x1f%B%x1d"


@dataclass
class Commit:
    """One commit of a code repository and the files it changed (renames as old and new path)."""

    oid: str
    parents: list[str] = field(default_factory=list)
    date: str = ""  # author date, ISO 8601 with the author's offset
    message: str = ""
    files: tuple[str, ...] = ()
    time: int = 0  # committer time, epoch seconds

    @property
    def subject(self) -> str:
        return self.message.strip().split("\n", 1)[0].strip()

    @property
    def body(self) -> str:
        return self.message.strip().partition("\n")[2].strip()

    @property
    def day(self) -> str:
        return self.date[:10]


def rev_list(repo: Path, spec: list[str], limit: int | None = None) -> list[str]:
    """Commit ids of a range, newest first (`limit` newest at most)."""
    args = ["rev-list", *([f"--max-count={limit}"] if limit else []), *spec]
    return run(repo, args, env=code_env()).decode().split()


def read_commits(repo: Path, oids: list[str]) -> list[Commit]:
    """The commits with these ids, in the given order, each with the files it changed."""
    if not oids:
        return []
    return _log(repo, ["--no-walk=unsorted", "--stdin"], "\n".join(oids).encode() + b"\n")


def commits_since(repo: Path, since: date) -> list[Commit]:
    """Commits reachable from HEAD made on or after `since`, newest first, with their files."""
    return _log(repo, [f"--since={since.isoformat()} 00:00:00", "HEAD", "--"], None)


def commits_after(repo: Path, anchor: str) -> list[Commit]:
    """Commits reachable from HEAD and not from `anchor`, newest first, with their files."""
    return _log(repo, [f"{anchor}..HEAD", "--"], None)


def _log(repo: Path, args: list[str], data: bytes | None) -> list[Commit]:
    out = run(repo, ["-c", "core.quotePath=false", "log", "--no-renames", "--name-only", _FORMAT,
                     *args], data=data, env=code_env())
    commits = []
    for chunk in out.decode("utf-8", "replace").split("\x1e")[1:]:
        header, _, names = chunk.partition("\x1d")
        oid, parents, when, stamp, message = (header.split("\x1f", 4) + ["", "", "", ""])[:5]
        files = tuple(line for line in names.splitlines() if line.strip())
        commits.append(Commit(oid.strip(), parents.split(), when.strip(), message, files,
                              int(stamp or 0)))
    return commits


def first_added_lines(root: Path, wanted: Iterable[str], paths: Sequence[str]) -> dict[tuple[str, str], str]:
    """{(path, line): YYYY-MM-DD} of the first commit (author date) that added each wanted line
    to each file under `paths`, oldest history first; lines compare without their ending."""
    lines = set(wanted)
    out = run(root, ["log", "--reverse", "--no-renames", "--no-color", "--format=%x00%as", "-p",
                     "-U0", "--", *paths], check=False)
    found: dict[tuple[str, str], str] = {}
    day, path = "", ""
    for raw in out.split(b"\n"):
        if raw.startswith(b"\x00"):
            day = raw[1:].decode("ascii", "replace").strip()
        elif raw.startswith(b"+++ "):
            name = raw[4:].decode("utf-8", "surrogateescape")
            path = name[2:] if name.startswith("b/") else ""
        elif raw.startswith(b"+"):
            line = raw[1:].decode("utf-8", "replace").rstrip("\r")
            if line in lines and path:
                found.setdefault((path, line), day)
    return found


def path_commits(root: Path, path: str, limit: int) -> list[str]:
    """Ids of the newest `limit` commits of HEAD that changed `path`, newest first (the git
    environment is kept: a hook of this repository reads its own index)."""
    return run(root, ["log", f"-{limit}", "--format=%H", "--", path]).decode().split()


def first_touching(root: Path, text: str, path: str) -> tuple[str, int] | None:
    """(oid, committer time) of the oldest commit of HEAD that added or removed `text` in
    `path` (git's pickaxe, `-S`), or None when none did."""
    out = run(root, ["log", "--format=%H %ct", "-S", text, "--", path])
    lines = [line for line in out.decode("ascii", "replace").split("\n") if line.strip()]
    if not lines:
        return None
    oid, stamp = lines[-1].split()
    return oid, int(stamp)
