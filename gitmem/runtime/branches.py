"""The branch a workspace folder has checked out, read from its git files (no git library: the
context card asks on every session start and must stay fast)."""

from __future__ import annotations

from pathlib import Path

from gitmem.runtime.model import Item


def _git_dir(folder: Path) -> Path | None:
    """The git directory of the repository holding `folder` (worktrees and submodules too)."""
    for candidate in (folder, *folder.parents):
        dot_git = candidate / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            try:
                line = dot_git.read_text(encoding="utf-8").strip()
            except OSError:
                return None
            if line.startswith("gitdir:"):
                target = Path(line.removeprefix("gitdir:").strip())
                return target if target.is_absolute() else (candidate / target).resolve()
            return None
    return None


def current_branch(folder: Path) -> str | None:
    """The checked-out branch; None outside git, on a detached HEAD, or when unreadable."""
    git_dir = _git_dir(folder.absolute())
    if git_dir is None:
        return None
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    prefix = "ref: refs/heads/"
    return head[len(prefix):] if head.startswith(prefix) else None


def visible(item: Item, branch: str | None) -> bool:
    """A memory item with branches shows only on those branches; everything shows when the
    branch is unknown (no git repository, detached HEAD)."""
    if item.target != "memory" or not item.branches or branch is None:
        return True
    return branch in item.branches
