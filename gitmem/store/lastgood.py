"""Reading a JSON file of the store that does not parse: git's last good version stands in.

One mechanism for every JSON file gitmem reads from the store (memory.json, ids.json, each
scope's runtime/memories.json and documents/index.json). A file that parses is read as it is.
One that does not (a hand edit gone wrong, or a pull that brought one from another machine)
is never committed by gitmem (store/integrity.py); until it is fixed, reads use the newest
version committed in git that parses, and a `StandIn` records which one, for the note the
caller prints and for `status` and `check`. A write into that very file stays refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from gitmem.errors import GitmemError, ParseError
from gitmem.store.tree import read_memory_text

if TYPE_CHECKING:
    from gitmem.git.repo import GitRepo

T = TypeVar("T")
HISTORY_DEPTH = 50  # commits searched back for the last good version of a file
Parse = Callable[[str], T]  # a file's text -> its value; raises GitmemError when it does not parse


@dataclass(frozen=True)
class StandIn:
    """A store file that does not parse, and the commit whose version is read instead."""

    path: str
    problem: str  # why it does not parse, one line
    rev: str | None  # the commit (12 hex digits) read instead; None: no committed version parses

    def note(self) -> str:
        if self.rev is None:
            return f"{self.problem}; git holds no readable version: it is read as empty until it is fixed"
        return f"{self.problem}; gitmem reads the version committed in {self.rev} until it is fixed"


def revisions(git: GitRepo, relpath: str) -> list[str]:
    """HEAD, then the commits that changed `relpath` and their first parents, newest first."""
    head = git.head_oid()
    if head is None:
        return []
    revs: list[str] = [head]
    for commit in git.log(HISTORY_DEPTH, relpath):
        revs += [commit.oid, *commit.parents[:1]]
    return list(dict.fromkeys(revs))


def last_good(git: GitRepo, relpath: str, parse: Parse[T]) -> tuple[T, str] | None:
    """(the value, its commit) of the newest committed version of `relpath` that parses."""
    for rev in revisions(git, relpath):
        data = git.read_file_at(rev, relpath)
        if data is None:
            continue
        try:
            return parse(data.decode("utf-8")), rev[:12]
        except (GitmemError, UnicodeDecodeError, ValueError):
            continue
    return None


def _reason(exc: Exception, relpath: str) -> str:
    text = str(exc)
    return text if text.startswith(relpath) else f"{relpath}: {text}"


def read_json_file(root: Path, git: Callable[[], GitRepo | None], relpath: str, parse: Parse[T],
                   empty: Callable[[], T]) -> tuple[T, StandIn | None]:
    """The file's value (`empty()` when it is absent); when it does not parse, the last good
    version from git with a StandIn saying so (`empty()` when git holds none). `git` is called
    only then: a read of a well-formed file never opens the repository (pygit2 costs start-up)."""
    try:
        return parse(read_memory_text(root, relpath)), None
    except FileNotFoundError:
        return empty(), None
    except (GitmemError, ValueError) as exc:
        if isinstance(exc, ParseError) and exc.path != relpath:
            raise
        problem = _reason(exc, relpath)
    repo = git()
    found = last_good(repo, relpath, parse) if repo is not None else None
    if found is None:
        return empty(), StandIn(relpath, problem, None)
    return found[0], StandIn(relpath, problem, found[1])
