"""The hooks' secret check: the lines a commit adds to the store, looked at before git records
them (pre-commit): memory files, and every other staged text file too (runtime memory, document
copies, memory.json...); and the commit's message (commit-msg). GITMEM_ALLOW_SECRET=1 lets one
commit through: hooks take no flags."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gitmem.format.normalize import Problem
    from gitmem.git import binary as gitcli

WAY_OUT = "remove it, or commit it knowingly: GITMEM_ALLOW_SECRET=1 git commit ..."


def staged_secret_problems(root: Path, staged: dict[str, str],
                           changes: list[gitcli.StagedChange]) -> list[Problem]:
    """One problem (path:line, the kind, never the secret) per likely secret a commit adds."""
    from gitmem.format.normalize import Problem
    from gitmem.git import binary as gitcli
    from gitmem.secrets.scan import added_lines, allowed_by_environment, scan_lines

    if allowed_by_environment() or not staged:
        return []
    modified = [c.path for c in changes if c.status in ("M", "T") and c.path in staged]
    committed = gitcli.read_blobs(root, [f"HEAD:{path}" for path in modified]) if modified else {}
    problems = [Problem(c.path, 1, f"its name holds a likely secret ({f.kind}): {WAY_OUT}")
                for c in changes if c.status in ("A", "R", "C") for f in scan_lines([(1, c.path)])]
    for path, text in sorted(staged.items()):
        old = committed.get(f"HEAD:{path}")
        before = None if old is None else old.decode("utf-8", errors="replace")
        for finding in scan_lines(added_lines(before, text), path=path):
            problems.append(Problem(path, finding.line,
                                    f"holds a likely secret ({finding.kind}): {WAY_OUT}"))
    return problems


def other_staged_secret_problems(root: Path, changes: list[gitcli.StagedChange],
                                 covered: set[str]) -> list[Problem]:
    """The same for the staged files the memory-file check does not read (`covered`): runtime
    memory, document copies, any text file; a file that is not UTF-8 text is left alone."""
    from gitmem.git import binary as gitcli
    from gitmem.secrets.scan import allowed_by_environment

    if allowed_by_environment():
        return []
    others = [c for c in changes if c.status != "D" and c.path not in covered
              and c.mode in ("100644", "100755")]
    if not others:
        return []
    blobs = gitcli.read_blobs(root, [c.oid for c in others])
    staged = {}
    for change in others:
        try:
            staged[change.path] = blobs[change.oid].decode("utf-8")
        except (KeyError, UnicodeDecodeError):
            continue
    return staged_secret_problems(root, staged, others)


SCISSORS = "# ------------------------ >8 ------------------------"


def message_secret_problems(message: str) -> list[str]:
    """One line per likely secret in a commit message: every line above the scissors line (below
    it, `git commit -v` shows the staged diff, which pre-commit has checked). `#` lines are read
    too: git keeps them in a message given with -m or -F, and the hook cannot tell how git will
    clean the message up."""
    from gitmem.secrets.scan import allowed_by_environment, scan_lines

    if allowed_by_environment():
        return []
    lines = list(enumerate(message.split(SCISSORS, 1)[0].split("\n"), 1))
    return [f"the commit message line {finding.line} holds a likely secret ({finding.kind}): {WAY_OUT}"
            for finding in scan_lines(lines)]
