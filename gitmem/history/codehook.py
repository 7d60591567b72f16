"""The post-commit hook of a code repository (`gitmem hooks install --repo DIR`): each new commit
reaches the history layer in the background, so `git commit` does not wait for it. A hook that
was there before is kept as `post-commit.gitmem-chained` and run first; uninstall puts it back."""

from __future__ import annotations

import os
import re
import shlex
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gitmem.errors import InvalidInputError
from gitmem.git import binary as gitcli
from gitmem.git.workrepo import repository_top

HOOK = "post-commit"
MARKER = "# gitmem-managed code hook"
CHAINED = HOOK + ".gitmem-chained"

_SCRIPT = """\
#!/bin/sh
{marker}: {hook}
# Written by `gitmem hooks install --repo`; `gitmem hooks uninstall --repo` removes it and puts
# back the hook that was here before (kept meanwhile as {chained} and run first).
# Records the new commit in the gitmem store below, in the background: git does not wait for it.
GITMEM_PYTHON={python}
GITMEM_STORE={root}
status=0
chained="${{0%/*}}/{chained}"
if [ -x "$chained" ]; then
    "$chained" "$@" || status=$?
fi
if [ "${{GITMEM_HOOKS:-1}}" != 0 ] && [ -x "$GITMEM_PYTHON" ]; then
    (
        unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_PREFIX GITMEM_SUBAGENT
        "$GITMEM_PYTHON" -P -m gitmem.history.hook --root "$GITMEM_STORE" --repo "$PWD"{workspace} \\
            </dev/null >/dev/null 2>&1 &
    )
fi
exit $status
"""


@dataclass
class CodeHookReport:
    repo: str
    hooks_dir: str
    state: str  # installed | missing | foreign | outdated
    chained: bool = False
    store: str | None = None
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def render_script(root: Path, python: str, workspace: str | None) -> str:
    extra = f" --workspace {shlex.quote(workspace)}" if workspace else ""
    return _SCRIPT.format(marker=MARKER, hook=HOOK, chained=CHAINED, python=shlex.quote(python),
                          root=shlex.quote(str(root)), workspace=extra)


def _is_ours(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return MARKER in handle.read(400)
    except OSError:
        return False


def _baked(text: str, name: str) -> str | None:
    """A value the script was written with (GITMEM_PYTHON=..., GITMEM_STORE=...)."""
    for line in text.splitlines():
        if line.startswith(f"{name}="):
            parts = shlex.split(line.partition("=")[2])
            return parts[0] if parts else None
    return None


def _baked_workspace(text: str) -> str | None:
    match = re.search(r"--workspace (\S+) \\$", text, re.MULTILINE)
    return shlex.split(match.group(1))[0] if match else None


def _repo(root: Path, repo: Path) -> Path:
    top = repository_top(repo.absolute())
    if top.resolve() == root.resolve():
        raise InvalidInputError("that is the memory store itself: `gitmem hooks install` without --repo "
                                "installs the store's own hooks")
    return top


def status(root: Path, repo: Path) -> CodeHookReport:
    """Whether the hook is installed, current (this version's script) or someone else's."""
    top = _repo(root, repo)
    folder = gitcli.hooks_dir(top)
    target = folder / HOOK
    report = CodeHookReport(str(top), str(folder), "missing", (folder / CHAINED).exists())
    if target.exists():
        if not _is_ours(target):
            report.state = "foreign"
        else:
            try:
                current = target.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):  # unreadable: reported as outdated
                current = ""
            report.store = _baked(current, "GITMEM_STORE")
            python = _baked(current, "GITMEM_PYTHON")
            fresh = (report.store is not None and python is not None and os.access(python, os.X_OK)
                     and current == render_script(Path(report.store), python, _baked_workspace(current)))
            report.state = "installed" if fresh and os.access(target, os.X_OK) else "outdated"
    return report


def install(root: Path, repo: Path, python: str | None = None, workspace: str | None = None) -> CodeHookReport:
    """Install (or refresh) the hook; an existing foreign hook is chained, never lost."""
    top = _repo(root, repo)
    folder = gitcli.hooks_dir(top)
    target, chained = folder / HOOK, folder / CHAINED
    foreign = (target.exists() or target.is_symlink()) and not _is_ours(target)
    if foreign and (chained.exists() or chained.is_symlink()):
        raise InvalidInputError(f"both {target} and {chained} exist: move one of them away, then install again")
    folder.mkdir(parents=True, exist_ok=True)
    notes = []
    if foreign:
        os.replace(target, chained)
        notes.append(f"kept your {HOOK} hook as {CHAINED}; it runs first")
    tmp = folder / f".{HOOK}.gitmem-tmp"
    tmp.write_text(render_script(root, python or sys.executable, workspace), encoding="utf-8")
    tmp.chmod(0o755)
    os.replace(tmp, target)
    report = status(root, top)
    report.notes = notes
    return report


def uninstall(root: Path, repo: Path) -> CodeHookReport:
    """Remove the hook and put back the one it chained."""
    top = _repo(root, repo)
    folder = gitcli.hooks_dir(top)
    target, chained = folder / HOOK, folder / CHAINED
    notes = []
    if target.exists() and not _is_ours(target):
        notes.append(f"{HOOK} is not gitmem's; left it as it is")
    else:
        target.unlink(missing_ok=True)
        if chained.exists() or chained.is_symlink():
            os.replace(chained, target)
            notes.append(f"restored your {HOOK} hook")
    report = status(root, top)
    report.notes = notes
    return report
