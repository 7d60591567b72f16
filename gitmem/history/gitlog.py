"""Reading a code repository's commits through the git binary (any repository git can read,
without loading pygit2): ranges, ancestry, and commits with their changed files."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gitmem import caller
from gitmem.errors import GitLayerError, InvalidInputError
from gitmem.git import binary as gitcli

_FORMAT = "--format=%x1e%H%x1f%P%x1f%aI%x1f%B%x1d"


@dataclass
class Commit:
    """One commit as the history layer records it."""

    oid: str
    parents: list[str]
    date: str  # author date, ISO 8601 with the author's offset
    message: str
    files: list[str] = field(default_factory=list)

    @property
    def subject(self) -> str:
        return self.message.strip().split("\n", 1)[0].strip()

    @property
    def body(self) -> str:
        return self.message.strip().partition("\n")[2].strip()

    @property
    def day(self) -> str:
        return self.date[:10]


def repository_top(folder: Path) -> Path:
    """The work tree root of the repository `folder` is in."""
    if not folder.is_dir():
        raise InvalidInputError(f"no such folder: {folder}")
    try:
        out = gitcli.run(folder, ["rev-parse", "--show-toplevel"])
    except GitLayerError:
        raise InvalidInputError(f"not a git repository: {folder}") from None
    return Path(out.decode("utf-8", "surrogateescape").strip())


def head(repo: Path) -> str | None:
    return gitcli.rev_parse(repo, "HEAD")


def is_ancestor(repo: Path, old: str, new: str) -> bool:
    """True when `old` exists and is reachable from `new` (false after a rebase or force-push)."""
    import subprocess

    if gitcli.rev_parse(repo, old) is None:
        return False
    done = subprocess.run(["git", "merge-base", "--is-ancestor", old, new], cwd=repo,
                          capture_output=True, check=False, env=caller.child_env())
    return done.returncode == 0


def rev_list(repo: Path, spec: list[str], limit: int | None = None) -> list[str]:
    """Commit ids of a range, newest first (`limit` newest at most)."""
    args = ["rev-list", *([f"--max-count={limit}"] if limit else []), *spec]
    return gitcli.run(repo, args).decode().split()


def read_commits(repo: Path, oids: list[str]) -> list[Commit]:
    """The commits with these ids, in the given order, each with the files it changed."""
    if not oids:
        return []
    out = gitcli.run(repo, ["-c", "core.quotePath=false", "log", "--no-walk=unsorted", "--stdin",
                            "--name-only", _FORMAT], data="\n".join(oids).encode() + b"\n")
    commits = []
    for chunk in out.decode("utf-8", "replace").split("\x1e")[1:]:
        header, _, names = chunk.partition("\x1d")
        oid, parents, date, message = (header.split("\x1f", 3) + ["", "", ""])[:4]
        files = [line for line in names.splitlines() if line.strip()]
        commits.append(Commit(oid.strip(), parents.split(), date.strip(), message, files))
    return commits
