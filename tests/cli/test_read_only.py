"""A store the user can only read: every read verb answers, writes say why they cannot.

Run as a user without write access: the files' owner with write bits removed, and when the tests
run as root (who may write anyway) a subprocess as `nobody` owning the read-only store."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from support import run_gitmem

NOBODY = 65534
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _nobody_can_run_gitmem() -> bool:
    """Whether `nobody` can start this interpreter and import gitmem from this checkout (a
    checkout inside a folder only its owner may enter cannot be run as another user)."""
    if not AS_ROOT or shutil.which("setpriv") is None:
        return True
    probe = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                            sys.executable, "-c", "import gitmem.cli"], capture_output=True, cwd="/")
    return probe.returncode == 0


def _chmod_tree(root: Path, writable: bool) -> None:
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            if not path.is_symlink():
                mode = path.stat().st_mode
                path.chmod(mode | 0o200 if writable else mode & ~0o222)
    mode = root.stat().st_mode
    root.chmod(mode | 0o200 if writable else mode & ~0o222)


@pytest.fixture
def readonly(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(store, a home folder the reader may write) with entries, a hand-written file and an index
    of all of them; the store then made read-only."""
    if not _nobody_can_run_gitmem():
        pytest.skip("as root, the read-only reader runs as nobody, who cannot enter this checkout's "
                    "folder: move the checkout where other users can read it")
    base = Path(tempfile.mkdtemp(prefix="gitmem-ro-", dir="/tmp"))
    base.chmod(0o755)
    root, home = base / "store", base / "home"
    home.mkdir()
    for args in (["init"], ["remember", "The cache lives in redis", "-l", "semantic", "-t", "cache"],
                 ["remember", "Deploys need a green build", "-l", "procedural"]):
        assert run_gitmem("--root", str(root), *args).returncode == 0
    late = root / "global" / "semantic" / "late.md"
    late.write_text("# late\n\n## Written by hand\nThe queue is rabbitmq.\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "by hand"],
                   cwd=root, check=True)
    assert run_gitmem("--root", str(root), "search", "rabbitmq").returncode == 0  # index/ is current
    if AS_ROOT:
        shutil.chown(home, NOBODY, NOBODY)
        for folder, dirs, files in os.walk(root):
            for name in [folder, *[os.path.join(folder, n) for n in dirs + files]]:
                os.lchown(name, NOBODY, NOBODY)
    _chmod_tree(root, writable=False)
    yield root, home
    _chmod_tree(root, writable=True)
    shutil.rmtree(base, ignore_errors=True)


def reader(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] if AS_ROOT else []
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}
    env.pop("GITMEM_ROOT", None)
    return subprocess.run([*prefix, sys.executable, "-m", "gitmem", "--root", str(root), *args],
                          capture_output=True, text=True, env=env, cwd=home)


@pytest.mark.skipif(AS_ROOT and shutil.which("setpriv") is None, reason="as root, needs setpriv to read as nobody")
def test_read_verbs_work_on_a_store_the_user_can_only_read(readonly: tuple[Path, Path]) -> None:
    root, home = readonly
    status = reader(root, home, "status", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["entries"] == 3
    listed = reader(root, home, "list", "--json")
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == 3, listed.stderr
    shown = reader(root, home, "show", "global-sem-0001")
    assert shown.returncode == 0 and "redis" in shown.stdout, shown.stderr
    found = reader(root, home, "search", "redis")  # index/ is current: read as it is
    assert found.returncode == 0 and "global-sem-0001" in found.stdout and found.stderr == ""
    newer = root / "global" / "procedural" / "newer.md"
    _chmod_tree(root, writable=True)  # the owner (or root) adds a file the index has not seen
    newer.write_text("# newer\n\n## Backups\nBackups run at 3am.\n")
    _chmod_tree(root, writable=False)
    late = reader(root, home, "search", "backups")  # index/ is out of date and cannot be written
    assert late.returncode == 0 and "global/procedural/newer.md" in late.stdout, late.stderr
    assert "could not be used (it is read-only for this user and out of date)" in late.stderr
    card = reader(root, home, "context", "--workspace", "alpha")
    assert card.returncode == 0 and "gitmem memory" in card.stdout, card.stderr
    checked = reader(root, home, "check")
    assert checked.returncode in (0, 2) and "Error" not in checked.stderr, checked.stderr
    for result in (status, listed, shown, found, late, card, checked):
        assert "PermissionError" not in result.stderr and "internal error" not in result.stderr


@pytest.mark.skipif(AS_ROOT and shutil.which("setpriv") is None, reason="as root, needs setpriv to read as nobody")
def test_a_write_on_a_read_only_store_says_why_in_one_line(readonly: tuple[Path, Path]) -> None:
    root, home = readonly
    result = reader(root, home, "remember", "cannot land", "-l", "semantic")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and f"the store at {root} is read-only for this user" in result.stderr


@pytest.mark.skipif(AS_ROOT and shutil.which("setpriv") is None, reason="as root, needs setpriv to read as nobody")
def test_an_unreadable_root_is_a_one_line_exit_2(readonly: tuple[Path, Path]) -> None:
    root, home = readonly
    root.chmod(0o000)
    try:
        result = reader(root, home, "status")
    finally:
        root.chmod(0o555)
    assert result.returncode == 2 and result.stderr == f"gitmem: error: --root {root}: cannot be read (permission denied)\n"
