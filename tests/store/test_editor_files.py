"""Editors' swap, backup and lock files beside the topic files are never memory: not committed
(so never pushed), not scanned (one holding an unsaved secret stops nothing), and an Emacs lock,
a dangling link, neither stops a write nor is a `check` error. A store made before gets the
.gitignore lines at its next write."""

from __future__ import annotations

import os
from pathlib import Path

from fixtures.tokens import SHAPES
from gitmem.store.generated import GITIGNORE
from support import Cli, git

TOKEN = next(s for s in SHAPES if s.name == "GitHub classic token").secret
EDITOR_FILES = (".staging.md.swp", ".staging.md.swo", "staging.md~", "4913", "#staging.md#",
                ".staging.md.kate-swp", "staging.md___jb_tmp___", ".DS_Store")


def _leave_editor_files(folder: Path) -> None:
    for name in EDITOR_FILES:
        (folder / name).write_text(f"b0VIM 9.0 unsaved buffer: CI pushes with {TOKEN}\n")
    os.symlink("me@laptop.4242:1733400000", folder / ".#staging.md")  # Emacs' lock: dangling


def test_editor_files_are_neither_committed_nor_blocking(gm: Cli) -> None:
    assert gm("remember", "Staging listens on 5433", "-l", "semantic", "-t", "staging").exit_code == 0
    folder = gm.root / "global/semantic"
    _leave_editor_files(folder)
    for args in (("remember", "Deploy with make deploy", "-l", "procedural", "-t", "deploy"),
                 ("runtime", "add", "Prefers short answers", "--target", "user"),
                 ("remember", "Shop uses pnpm", "-l", "semantic", "--scope", "workspace", "-w", "shop")):
        done = gm(*args)
        assert done.exit_code == 0, (args, done.output)
    assert gm("check").exit_code == 0
    committed = git(gm.root, "ls-files").split()
    assert not [p for p in committed if p.rsplit("/", 1)[-1] in (*EDITOR_FILES, ".#staging.md")]
    assert TOKEN not in git(gm.root, "log", "-p", "--all")
    assert all((folder / name).exists() for name in EDITOR_FILES)  # never removed either
    assert git(gm.root, "status", "--porcelain") == ""


def test_a_store_made_before_gets_the_lines_at_its_next_write(gm: Cli) -> None:
    gitignore = gm.root / ".gitignore"
    old = "".join(line + "\n" for line in GITIGNORE.splitlines() if line.startswith(("/", ".*.tmp")))
    gitignore.write_text(old)
    git(gm.root, "commit", "-qam", "an earlier gitmem's .gitignore")
    _leave_editor_files(gm.root / "global")
    assert gm("remember", "A fact", "-l", "semantic").exit_code == 0
    assert gitignore.read_text().splitlines()[-1] == ".DS_Store" and "\\#*#" in gitignore.read_text()
    assert TOKEN not in git(gm.root, "log", "-p", "--all")
    assert not [p for p in git(gm.root, "ls-files").split() if p.startswith("global/") and "staging" in p]
