"""Answers of the git binary about a code repository (its top folder, its origin URL), kept
between calls in a long-lived process (the warm server), where each call would otherwise start
two git processes.

An answer is reused only while everything git read for it looks the same to lstat: the
repository's `.git` and `.git/config`, the user's git config files, and the GIT_* environment.
Files changed less than SETTLE_NS ago are not trusted yet (the next call asks git again), so an
edit in the same clock tick is never missed. Off unless `enable()` is called.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from gitmem import caller, stamps

SETTLE_NS = stamps.SETTLE_NS
T = TypeVar("T")
_answers: dict[tuple[object, ...], tuple[tuple[object, ...], object]] | None = None
_guard = threading.Lock()


def enable() -> None:
    global _answers
    with _guard:
        if _answers is None:
            _answers = {}


def disable() -> None:
    global _answers
    with _guard:
        _answers = None


def _user_configs() -> list[Path]:
    home = (caller.env("HOME") or "")
    xdg = caller.env("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return [Path(home) / ".gitconfig", Path(xdg) / "git" / "config", Path("/etc/gitconfig")]


def _signature(paths: list[Path]) -> tuple[object, ...] | None:
    """What lstat says of each path, or None when one of them changed too recently to trust."""
    now = time.time_ns()
    found: list[object] = []
    for path in paths:
        stamp = stamps.file_stamp(path)
        if stamp is not None and not stamps.settled(stamp, now, SETTLE_NS):
            return None
        found.append(stamp)
    return tuple(found)


def answer(kind: str, repo: Path, ask: Callable[[], T]) -> T:
    """ask(), or its earlier answer for this repository folder while git's inputs are unchanged."""
    answers = _answers
    if answers is None:
        return ask()
    git_dir = repo / ".git"
    if not git_dir.is_dir():
        return ask()  # a worktree or submodule: .git points elsewhere, always ask git
    watched = [repo, git_dir, git_dir / "config", *_user_configs()]
    signature = _signature(watched)
    env = tuple(sorted((k, v) for k, v in caller.environ().items() if k.startswith("GIT_")))
    key = (kind, str(repo), env)
    known = answers.get(key)
    if signature is not None and known is not None and known[0] == signature:
        return known[1]  # type: ignore[return-value]
    result = ask()
    if signature is not None:
        with _guard:
            answers[key] = (signature, result)
    return result
