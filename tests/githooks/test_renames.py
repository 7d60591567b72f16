"""A topic file renamed with plain git (`git mv` and `git commit`, the store's hooks installed):
its front matter and title name the new place, exactly as `gitmem mv-topic` writes them, and
every entry keeps its Id."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitmem.store.store import Store
from support import GIT_ENV, Cli, git

OLD = "global/semantic/db.md"


def sh_git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real git binary, run as a person runs it: no virtualenv on PATH, so the hooks find
    gitmem by themselves."""
    git_dir = str(Path(shutil.which("git") or "/usr/bin/git").parent)
    env = {"PATH": os.pathsep.join(dict.fromkeys([git_dir, "/usr/bin", "/bin"])),
           "HOME": os.environ["HOME"], "GIT_CONFIG_NOSYSTEM": "1", "LANG": "C.UTF-8", **GIT_ENV}
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env)


@pytest.fixture
def stores(tmp_path: Path) -> tuple[Cli, Cli]:
    """Two stores holding the same topic file: one renames it with git, one with mv-topic."""
    made = []
    for name in ("plain", "verb"):
        store = Store(tmp_path / name, cwd=tmp_path)
        store.init()
        store.close()
        cli = Cli(store.root, CliRunner())
        assert cli("remember", "Postgres runs on port 5432", "-l", "semantic", "-t", "db").exit_code == 0
        assert cli("remember", "Backups run nightly", "-l", "semantic", "-t", "db").exit_code == 0
        made.append(cli)
    result = made[0]("hooks", "install")
    assert result.exit_code == 0, result.output
    return made[0], made[1]


def _renamed_by_git(root: Path, old: str, new: str) -> str:
    (root / new).parent.mkdir(parents=True, exist_ok=True)
    moved = sh_git(root, "mv", old, new)
    assert moved.returncode == 0, moved.stderr
    committed = sh_git(root, "commit", "-q", "-m", "rename by hand")
    assert committed.returncode == 0, committed.stderr
    assert git(root, "status", "--porcelain").strip() == ""
    return git(root, "show", f"HEAD:{new}")


@pytest.mark.parametrize(("new", "to"), [("global/semantic/database.md", "semantic/database"),
                                         ("global/procedural/database.md", "procedural/database")])
def test_git_mv_writes_what_mv_topic_writes(stores: tuple[Cli, Cli], new: str, to: str) -> None:
    plain, verb = stores
    committed = _renamed_by_git(plain.root, OLD, new)
    assert verb("mv-topic", "semantic/db", to).exit_code == 0
    assert committed == (verb.root / new).read_text() == (plain.root / new).read_text()
    assert "topic: database" in committed and "# database\n" in committed
    assert f"layer: {to.split('/')[0]}" in committed
    assert "global-sem-0001" in committed and "global-sem-0002" in committed
    assert plain("check").exit_code == 0
    assert [h["path"] for h in plain.json("search", "Postgres")] == [new]  # type: ignore[union-attr, index]


def test_a_title_the_person_gave_stays(stores: tuple[Cli, Cli]) -> None:
    plain, _verb = stores
    text = (plain.root / OLD).read_text().replace("# db\n", "# Database notes\n").replace("topic: db", "topic: Our DB")
    (plain.root / OLD).write_text(text)
    sh_git(plain.root, "commit", "-qam", "titled by hand")
    committed = _renamed_by_git(plain.root, OLD, "global/semantic/database.md")
    assert "topic: Our DB" in committed and "# Database notes\n" in committed
