"""`gitmem mv` and `gitmem mv-topic` through the real CLI: every Id and field stays, one commit each,
one-line refusals that change nothing."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from gitmem.format.markdown import parse_topic_file
from support import GIT_ENV, Cli, commit_count, git

DB = "global/semantic/db.md"


def ok(gm: Cli, *args: str) -> str:
    result = gm(*args)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def entries(root: Path, relpath: str) -> dict[str, dict[str, str]]:
    topic = parse_topic_file((root / relpath).read_text(encoding="utf-8"))
    return {str(e.id): dict(e.fields) for e in topic.entries}


@pytest.fixture
def facts(gm: Cli) -> tuple[str, str]:
    first = ok(gm, "remember", "Postgres listens on 5433", "-l", "semantic", "-t", "db")
    second = ok(gm, "remember", "Backups run at 2am", "-l", "semantic", "-t", "db",
                "--supersedes", first, "--importance", "high")
    return first, second


def test_mv_moves_an_entry_with_its_id_and_fields_in_one_commit(gm: Cli, facts: tuple[str, str]) -> None:
    first, second = facts
    fields = entries(gm.root, DB)[second]
    commits = commit_count(gm.root)
    moved = gm.json("mv", second, "--topic", "Backups")
    assert moved == {"ids": [second], "source": DB, "target": "global/semantic/backups.md",
                     "commit": git(gm.root, "rev-parse", "HEAD").strip()}
    assert commit_count(gm.root) == commits + 1
    assert git(gm.root, "log", "-1", "--format=%s").strip() == f"mv: {second} (semantic/db -> semantic/backups)"
    assert entries(gm.root, "global/semantic/backups.md") == {second: fields}
    assert list(entries(gm.root, DB)) == [first]
    assert "global/semantic/backups.md" in ok(gm, "show", second)
    assert "[Backups](semantic/backups.md) — 1 entry" in (gm.root / "global/semantic.md").read_text()
    assert git(gm.root, "status", "--porcelain") == ""
    assert gm("check").exit_code == 0


def test_mv_to_another_layer_keeps_the_id_and_an_emptied_file_goes(gm: Cli, facts: tuple[str, str]) -> None:
    first, second = facts
    ok(gm, "mv", first, "--topic", "one")
    ok(gm, "mv", first, "--topic", "ops", "--layer", "procedural")
    assert not (gm.root / "global/semantic/one.md").exists()  # only what gitmem wrote was left
    assert entries(gm.root, "global/procedural/ops.md")[first]["Superseded-by"] == second
    assert ok(gm, "remember", "Deploy with make ship", "-l", "procedural", "-t", "ops") == "global-pro-0001"
    assert ok(gm, "remember", "Disks are SSDs", "-l", "semantic", "-t", "hw") == "global-sem-0003"
    check = gm("check")
    assert check.exit_code == 0 and f"Id {first} was given in global/semantic" in check.output


def test_mv_topic_renames_a_file_and_its_title(gm: Cli, facts: tuple[str, str]) -> None:
    first, second = facts
    commits = commit_count(gm.root)
    moved = gm.json("mv-topic", "semantic/db", "semantic/database")
    assert moved["ids"] == [first, second] and moved["target"] == "global/semantic/database.md"  # type: ignore[index]
    assert commit_count(gm.root) == commits + 1
    assert not (gm.root / DB).exists()
    text = (gm.root / "global/semantic/database.md").read_text()
    assert "topic: database" in text and "# database\n" in text
    assert list(entries(gm.root, "global/semantic/database.md")) == [first, second]
    assert "renamed: global/semantic/db.md -> global/semantic/database.md" in \
        git(gm.root, "show", "--stat", "-M", "--format=", "HEAD", "--summary") or \
        "database.md" in git(gm.root, "show", "--stat", "--format=", "HEAD")
    ok(gm, "mv-topic", "global/semantic/database.md", "procedural/database")
    assert "layer: procedural" in (gm.root / "global/procedural/database.md").read_text()
    assert gm("check").exit_code == 0


@pytest.mark.parametrize(("args", "code", "message"), [
    (("mv-topic", "semantic/db", "semantic/cache"), 2, "global/semantic/cache.md already exists"),
    (("mv-topic", "semantic/db", "semantic/db"), 2, "are the same file"),
    (("mv-topic", "semantic/nope", "semantic/x"), 1, "no topic file global/semantic/nope.md"),
    (("mv-topic", "semantic/db", "semantic/../x"), 2, "would escape the layer folder"),
    (("mv-topic", "semantic/db", "state/x"), 2, "has no topic files"),
    (("mv-topic", "semantic/db", "db"), 2, "name a topic as LAYER/TOPIC"),
    (("mv-topic", "semantic/db", "semantic/con"), 2, "reserved file name on Windows"),
    (("mv-topic", "semantic/db", "workspaces/proj/semantic/db.md"), 2, "is in another scope than"),
    (("mv", "global-sem-0001", "--topic", "db"), 2, "is already in global/semantic/db.md"),
    (("mv", "global-sem-0001", "--topic", "x", "--layer", "working"), 2, "has no topic files"),
    (("mv", "global-sem-0001", "--topic", "x", "--layer", "nope"), 2, "nope"),
    (("mv", "global-sem-0009", "--topic", "x"), 1, "no entry with Id global-sem-0009"),
    (("mv", "nonsense", "--topic", "x"), 2, "malformed Id"),
])
def test_refusals_are_one_line_and_change_nothing(gm: Cli, facts: tuple[str, str], args: tuple[str, ...],
                                                  code: int, message: str) -> None:
    ok(gm, "remember", "Redis holds sessions", "-l", "semantic", "-t", "cache")
    head = git(gm.root, "rev-parse", "HEAD")
    result = gm(*args)
    assert result.exit_code == code, result.output
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert git(gm.root, "rev-parse", "HEAD") == head and git(gm.root, "status", "--porcelain") == ""


def test_an_entry_in_a_conflict_block_is_not_moved(gm: Cli, facts: tuple[str, str]) -> None:
    first, second = facts
    text = (gm.root / DB).read_text()
    start = text.index("## Postgres")
    end = text.index("## Backups")
    entry = text[start:end]
    block = (f"<<<<<<< laptop-a 1111111\n{entry.replace('5433', '5434')}=======\n"
             f"{entry.replace('5433', '5435')}>>>>>>> laptop-b 2222222\n\n")
    (gm.root / DB).write_text(text[:start] + block + text[end:])
    subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "commit", "-qam", "merge"], cwd=gm.root,
                   check=True, env={**os.environ, **GIT_ENV})
    head = git(gm.root, "rev-parse", "HEAD")
    refused = gm("mv", first, "--topic", "elsewhere")
    assert refused.exit_code == 3 and f"gitmem resolve {first}" in refused.stderr
    assert gm("mv-topic", "semantic/db", "semantic/x").exit_code == 3
    assert git(gm.root, "rev-parse", "HEAD") == head
    ok(gm, "mv", second, "--topic", "backups")  # another entry of that file moves; the block stays
    assert block in (gm.root / DB).read_text()
    assert json.loads(ok(gm, "show", second, "--json"))["path"] == "global/semantic/backups.md"
