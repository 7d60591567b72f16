"""Topic files renamed and entries moved by hand, committed or not: every Id stays, nothing blocks.

The catalog follows the working tree, so the path a file or an entry left holds nothing: no
"duplicate Id (also in <old path>)" about a file that is gone, and `show` finds a moved entry."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from gitmem.format.markdown import parse_topic_file
from gitmem.githooks.install import install as install_hooks
from support import GIT_ENV, Cli, git

DB = "global/semantic/db.md"
DATABASE = "global/semantic/database.md"


def ok(gm: Cli, *args: str) -> str:
    result = gm(*args)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def ids_in(root: Path, relpath: str) -> list[str | None]:
    return [e.id for e in parse_topic_file((root / relpath).read_text(encoding="utf-8")).entries]


def sh_git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV})


def two_facts(gm: Cli) -> tuple[str, str]:
    first = ok(gm, "remember", "Postgres listens on 5433", "-l", "semantic", "-t", "db")
    second = ok(gm, "remember", "Backups run at 2am", "-l", "semantic", "-t", "db")
    return first, second


def clean_check(gm: Cli) -> None:
    result = gm("check")
    assert result.exit_code == 0 and "duplicate" not in result.output, result.output


def test_a_renamed_topic_file_keeps_its_ids_and_blocks_nothing(gm: Cli) -> None:
    first, second = two_facts(gm)
    os.rename(gm.root / DB, gm.root / DATABASE)
    clean_check(gm)
    assert ok(gm, "show", first).startswith("Postgres listens on 5433")
    third = ok(gm, "remember", "Replicas lag a second", "-l", "semantic", "-t", "other")
    assert third == "global-sem-0003"
    assert ids_in(gm.root, DATABASE) == [first, second]
    assert "global/semantic/database.md" in git(gm.root, "ls-files")
    assert DB not in git(gm.root, "ls-files")
    clean_check(gm)
    assert gm("check", "--fix").exit_code == 0


def test_a_file_renamed_twice_before_any_commit(gm: Cli) -> None:
    first, _second = two_facts(gm)
    os.rename(gm.root / DB, gm.root / DATABASE)
    assert ok(gm, "show", first).endswith("database.md:8  [global/semantic, live, fresh]") or \
        "database.md" in ok(gm, "show", first)
    os.rename(gm.root / DATABASE, gm.root / "global/semantic/data.md")
    assert "data.md" in ok(gm, "show", first)
    clean_check(gm)
    fixed = gm("check", "--fix")
    assert fixed.exit_code == 0, fixed.output
    assert ok(gm, "remember", "x is y", "-l", "semantic", "-t", "db") == "global-sem-0003"


def test_an_entry_moved_by_cut_and_paste_is_found_where_it_is(gm: Cli) -> None:
    first, second = two_facts(gm)
    ok(gm, "remember", "Redis holds sessions", "-l", "semantic", "-t", "cache")
    text = (gm.root / DB).read_text(encoding="utf-8")
    cut = text.index("## Backups run at 2am")
    (gm.root / DB).write_text(text[:cut].rstrip("\n") + "\n", encoding="utf-8")
    with open(gm.root / "global/semantic/cache.md", "a", encoding="utf-8") as handle:
        handle.write("\n" + text[cut:])
    shown = ok(gm, "show", second)  # not committed yet
    assert "global/semantic/cache.md" in shown
    clean_check(gm)
    assert ok(gm, "remember", "Caches expire hourly", "-l", "semantic", "-t", "cache") == "global-sem-0004"
    assert ids_in(gm.root, "global/semantic/cache.md") == ["global-sem-0003", second, "global-sem-0004"]
    assert ids_in(gm.root, DB) == [first]


def test_a_topic_file_moved_to_another_layer_keeps_its_ids(gm: Cli) -> None:
    first, second = two_facts(gm)
    (gm.root / "global/procedural").mkdir(exist_ok=True)
    os.rename(gm.root / DB, gm.root / "global/procedural/db.md")
    check = gm("check")
    assert check.exit_code == 0, check.output
    assert f"Id {first} was given in global/semantic: the entry keeps it here" in check.output
    assert ok(gm, "remember", "Deploy with make ship", "-l", "procedural", "-t", "deploy") == "global-pro-0001"
    assert ok(gm, "remember", "Disks are SSDs", "-l", "semantic", "-t", "hw") == "global-sem-0003"
    assert ids_in(gm.root, "global/procedural/db.md") == [first, second]
    assert "global/procedural/db.md" in ok(gm, "show", second)


def test_the_hook_commits_a_rename_made_with_git_mv_or_with_mv(gm: Cli) -> None:
    install_hooks(gm.root)
    first, _ = two_facts(gm)
    assert sh_git(gm.root, "mv", DB, DATABASE).returncode == 0
    done = sh_git(gm.root, "commit", "-qam", "rename db")
    assert done.returncode == 0, done.stderr
    os.rename(gm.root / DATABASE, gm.root / DB)
    sh_git(gm.root, "add", "-A")
    done = sh_git(gm.root, "commit", "-qm", "rename back")
    assert done.returncode == 0, done.stderr
    assert git(gm.root, "status", "--porcelain") == ""
    assert ids_in(gm.root, DB)[0] == first
    clean_check(gm)


def test_the_hook_commits_an_entry_moved_between_files(gm: Cli) -> None:
    install_hooks(gm.root)
    _first, second = two_facts(gm)
    ok(gm, "remember", "Redis holds sessions", "-l", "semantic", "-t", "cache")
    text = (gm.root / DB).read_text(encoding="utf-8")
    cut = text.index("## Backups run at 2am")
    (gm.root / DB).write_text(text[:cut].rstrip("\n") + "\n", encoding="utf-8")
    with open(gm.root / "global/semantic/cache.md", "a", encoding="utf-8") as handle:
        handle.write("\n" + text[cut:])
    done = sh_git(gm.root, "commit", "-qam", "move the backup fact")
    assert done.returncode == 0, done.stderr
    assert second in git(gm.root, "show", "HEAD:global/semantic/cache.md")
    clean_check(gm)
