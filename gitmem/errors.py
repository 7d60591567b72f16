"""The single exception hierarchy of gitmem; each class carries its CLI exit code.

Exit codes: 0 success; 1 not found (an id, a file, no search hit); 2 bad input or a store that
cannot be used as it is; 3 a conflict, a git or network failure, a lock held too long, or a
disk that refuses a write (full, read-only); 4 an internal error (a bug in gitmem: please
report it with the line it printed); 141 the reader of the output went away (as a shell reports
a process a closed pipe ended).
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

INTERNAL_ERROR_EXIT = 4
CLOSED_PIPE_EXIT = 141
# A write the machine refused: no bug of gitmem's, said in one line with exit 3.
_REFUSED_WRITES = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EACCES, errno.EPERM}


def os_failure(exc: BaseException) -> tuple[str | None, int] | None:
    """How an OSError that reached the top is told: (the one line, or None to say nothing;
    the exit code), or None when it is no refused write or closed pipe (a bug)."""
    if isinstance(exc, BrokenPipeError):
        mute_stdout()
        return None, CLOSED_PIPE_EXIT
    if isinstance(exc, OSError) and exc.errno in _REFUSED_WRITES:
        where = f" ({exc.filename})" if exc.filename else ""
        return f"gitmem: error: {exc.strerror}{where}", 3
    return None


def mute_stdout() -> None:
    """Point stdout at /dev/null: its flush at exit would fail again on a closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


class GitmemError(Exception):
    """Base of every error gitmem raises on purpose. `exit_code` follows SPEC §15."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        # Errors are shown on one line; collapse any newline a caller let through.
        super().__init__(" ".join(str(message).split()))

    @property
    def message(self) -> str:
        return str(self)


class NotFoundError(GitmemError):
    """An id, workspace, topic or file that does not exist (exit 1)."""

    exit_code = 1


class InvalidInputError(GitmemError):
    """Bad input or usage: unknown layer, empty text, unsafe key, malformed entry (exit 2)."""

    exit_code = 2


class ParseError(InvalidInputError):
    """A memory file that cannot be parsed; names `path:line` and the reason."""

    def __init__(self, path: str, line: int, reason: str) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        super().__init__(f"{path}:{line}: {reason}")


class StoreStateError(GitmemError):
    """The store is missing, not initialised, or its committed files are inconsistent (exit 2)."""

    exit_code = 2


class UnsafePathError(StoreStateError):
    """A symbolic link where gitmem would write: gitmem never writes through a link (exit 2)."""

    def __init__(self, link: str, relpath: str) -> None:
        self.link = link
        self.relpath = relpath
        where = "" if link == relpath else f" (writing {relpath})"
        super().__init__(
            f"{link} is a symbolic link{where}: gitmem does not write through links; replace it "
            "with a real file or folder (`gitmem check` lists every link in the store)"
        )


class ReadOnlyStoreError(StoreStateError):
    """A write on a store this user can only read (exit 2)."""

    def __init__(self, root: Path, reason: str) -> None:
        self.root = root
        super().__init__(f"the store at {root} is read-only for this user ({reason}): "
                         "reading works, writing needs write access to the store folder")


class SubagentWriteError(GitmemError):
    """A write verb was called while GITMEM_SUBAGENT=1 (exit 2)."""

    exit_code = 2


class ConflictError(GitmemError):
    """Conflict markers remain, or a merge could not complete cleanly (exit 3)."""

    exit_code = 3


class GitLayerError(GitmemError):
    """A git operation failed: repository, remote, network, authentication (exit 3)."""

    exit_code = 3


class SyncError(GitLayerError):
    """Fetch, merge or push of `gitmem sync` failed (exit 3)."""


class AuthError(SyncError):
    """The remote refused the credentials (exit 3). Never carries the secret."""


class LockTimeoutError(GitmemError):
    """The store lock could not be taken in time (exit 3)."""

    exit_code = 3


class ModelError(GitmemError):
    """No model returned usable text: every rung of the ladder failed, or a reply could not be
    read (exit 3). The material it was given is kept for a retry."""

    exit_code = 3


class SearchFault(RuntimeError):
    """A search failed on an index just rebuilt for it from the files: a fault of the search
    itself (a bug, reported as an internal error), which no further rebuild would mend."""
