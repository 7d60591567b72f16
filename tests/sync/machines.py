"""Two machines sharing one bare remote, for the tests that merge them (sync or plain git)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from click.testing import CliRunner

from gitmem.format import layers as L
from gitmem.format.markdown import parse_topic_file
from gitmem.store.store import Store
from gitmem.sync.remote import init_store
from support import GIT_ENV, Cli, git


def ok(gm: Cli, *args: str) -> str:
    result = gm(*args)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def sh_git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV})


def two_machines(tmp_path: Path, bare_remote: Path, *facts: tuple[str, str]) -> tuple[Cli, Cli]:
    """a made the store with these (text, semantic topic) facts and synced; b cloned it."""
    clis = []
    for name in ("a", "b"):
        store = Store(tmp_path / name, cwd=tmp_path)
        init_store(store, remote=str(bare_remote), branch="main")
        store.close()
        clis.append(Cli(tmp_path / name, CliRunner()))
        if name == "a":
            for text, topic in facts:
                ok(clis[0], "remember", text, "-l", "semantic", "-t", topic)
            ok(clis[0], "sync")
    ok(clis[1], "sync")
    return clis[0], clis[1]


def id_places(root: Path) -> dict[str, list[str]]:
    """Every Id in the topic files of the working tree -> the files holding it (once per copy)."""
    found: dict[str, list[str]] = {}
    for path in sorted(root.glob("global/*/*.md")) + sorted(root.glob("workspaces/*/*/*.md")):
        relpath = path.relative_to(root).as_posix()
        if L.classify_path(relpath).kind != "topic":
            continue
        for entry in parse_topic_file(path.read_text(encoding="utf-8"), relpath).entries:
            if entry.id:
                found.setdefault(entry.id, []).append(relpath)
    return found


def duplicated(root: Path) -> dict[str, list[str]]:
    return {ident: paths for ident, paths in id_places(root).items() if len(paths) > 1}


def commit_by_hand(root: Path, message: str) -> None:
    """`git add -A && git commit` without the hooks (a person's commit on a machine without them)."""
    subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "commit", "-qm", message], cwd=root,
                   check=True, env={**os.environ, **GIT_ENV})


def tree_of(root: Path) -> str:
    return git(root, "rev-parse", "HEAD^{tree}").strip()
