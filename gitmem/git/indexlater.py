"""The git index write a commit leaves until its caller has the answer (the warm server only).

A commit stages its paths in the index libgit2 holds in memory, builds its tree from them and
moves HEAD; writing the index file back is for git status and plain git, not for the commit,
and libgit2 writes the whole file (~15 ms at 200,000 entries). In the warm server the write is
left (`leave`) and done once the answer is on its way. Until then nobody in this process may
look at the index through another repository object: every status read and every write of the
git layer first writes what was left for its repository (`settle`, `settle_for`), so no caller
of this process ever sees the index behind HEAD.

A process killed before the write leaves the index behind HEAD on exactly those paths, with
the work tree as committed: git status shows them changed, and the next write stages them
again, which changes no tree, so no commit follows (nothing is lost, nothing is committed
twice). The write itself puts each path back as the commit has it (`worktree.index_as_committed`),
also when another git process rewrote the index meanwhile.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

_left: dict[str, tuple[object, Callable[[], None]]] = {}  # git dir -> (owner, its index write)
_guard = threading.RLock()  # re-entrant: the write itself reads git status (settle_for)


def leave(git_dir: str, owner: object, write: Callable[[], None]) -> None:
    """Record the index write `owner` (a repository object) left for `git_dir`; one left
    earlier for it is done first."""
    settle(git_dir)
    with _guard:
        _left[git_dir] = (owner, write)


def settle(git_dir: str) -> None:
    """Do the index write left for `git_dir`, if any (errors are the caller's)."""
    with _guard:
        found = _left.pop(git_dir, None)
        if found is not None:
            found[1]()


def settle_for(git_dir: str, reader: object) -> None:
    """Before `reader` (a repository object) reads or changes the index of `git_dir`: do the
    write another object left for it. The owner's own index is current in its memory. A write
    that fails is dropped: the index then lags HEAD on its paths, as after a kill."""
    with _guard:
        found = _left.get(git_dir)
        if found is None or found[0] is reader:
            return
        del _left[git_dir]
        try:
            found[1]()
        except Exception:  # noqa: BLE001 - see the docstring: the next write repairs it
            return


def pending(git_dir: str) -> bool:
    """Whether an index write is left for `git_dir` (for tests and status)."""
    with _guard:
        return git_dir in _left
