"""why / log / as-of / revert on an entry created by gitmem, edited in three later commits (by
hand and through git, on other days) and moved to another topic file on the way."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from support import GIT_ENV, Cli, commit_count, git

STAGING = "global/semantic/staging.md"
DATABASES = "global/semantic/databases.md"


def commit_on(root: Path, message: str, day: str, hour: int = 12) -> str:
    """Commit everything with plain git, dated `day` at `hour` UTC; returns the oid."""
    stamp = f"{day}T{hour:02d}:00:00+00:00"
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=root, check=True, env=env)
    return git(root, "rev-parse", "HEAD").strip()


def entry_block(text: str, title: str) -> str:
    start = text.index(f"## {title}")
    following = text.find("\n## ", start + 3)
    return text[start:] if following < 0 else text[start:following + 1]


@pytest.fixture
def history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Cli, dict[str, str]]:
    monkeypatch.setenv("GITMEM_MACHINE", "laptop-1")
    gm = Cli(tmp_path / "store", CliRunner())
    gm("init")
    root = gm.root
    git(root, "config", "user.name", "Ada")
    git(root, "config", "user.email", "ada@example.com")
    created = gm("remember", "Staging database listens on port 5432", "-l", "semantic", "-t",
                 "staging", "--title", "Staging database port", "--source", "session:4f2a")
    assert created.stdout.strip() == "global-sem-0001"
    gm("remember", "Staging runs in eu-west-1", "-l", "semantic", "-t", "staging")
    commits = {"created": git(root, "rev-parse", "HEAD~1").strip()}
    path = root / STAGING
    path.write_text(path.read_text().replace("port 5432", "port 5433"))
    commits["edited"] = commit_on(root, "staging moved to 5433", "2030-01-02")
    (root / "global/semantic/cache.md").write_text("# cache\n\n## An unrelated note about caches\n"
                                                   "Redis holds sessions.\n\n**Id:** global-sem-0003\n"
                                                   "**Created:** 2030-01-02\n**Verified:** 2030-01-02\n")
    commits["unrelated"] = commit_on(root, "a note about caches", "2030-01-02", hour=15)
    text = path.read_text()
    block = entry_block(text, "Staging database port")
    path.write_text(text.replace(block, ""))
    (root / DATABASES).write_text("# databases\n\n" + block)
    commits["moved"] = commit_on(root, "move the port note to databases", "2030-01-03")
    moved = (root / DATABASES).read_text().replace("## Staging database port", "## Staging Postgres port")
    (root / DATABASES).write_text(moved)
    commits["retitled"] = commit_on(root, "say which database", "2030-01-04")
    return gm, commits


def test_why_names_creation_source_and_every_later_change(history: tuple[Cli, dict[str, str]]) -> None:
    gm, commits = history
    data = gm.json("why", "global-sem-0001")
    created = data["created"]
    assert created["commit"] == commits["created"]
    assert created["author"] == "Ada <ada@example.com>"
    assert created["machine"] == "laptop-1"
    assert created["message"].startswith("remember: global-sem-0001")
    assert created["path"] == STAGING
    assert data["source"] == [{"raw": "session:4f2a", "kind": "session", "ref": "4f2a",
                               "meaning": "agent session"}]
    assert data["path"] == DATABASES and data["title"] == "Staging Postgres port"
    changes = data["changes"]
    assert [c["commit"] for c in changes] == [commits["edited"], commits["moved"], commits["retitled"]]
    assert changes[0]["summary"] == "body +1 -1 lines"
    assert changes[0]["date"].startswith("2030-01-02") and changes[0]["machine"] is None
    assert changes[1]["summary"] == f"moved {STAGING} → {DATABASES}"
    assert changes[2]["summary"] == "title 'Staging database port' → 'Staging Postgres port'"
    text = gm("why", "global-sem-0001").stdout
    assert "on laptop-1" in text and "source: session:4f2a (agent session)" in text


def test_log_lists_each_version_with_its_text(history: tuple[Cli, dict[str, str]]) -> None:
    gm, commits = history
    versions = gm.json("log", "global-sem-0001")
    assert [v["commit"] for v in versions] == [commits["retitled"], commits["moved"],
                                               commits["edited"], commits["created"]]
    assert [v["kind"] for v in versions] == ["changed", "changed", "changed", "created"]
    assert versions[-1]["text"].startswith("## Staging database port\n")
    assert "port 5432" in versions[-1]["text"] and "port 5433" in versions[0]["text"]
    assert versions[1]["path"] == DATABASES and versions[2]["path"] == STAGING
    assert "## Staging Postgres port" in versions[0]["text"]
    assert "    Staging database listens on port 5432" in gm("log", "global-sem-0001").stdout
    assert [v["commit"] for v in gm.json("log", "global-sem-0001", "--limit", "2")] == \
        [commits["retitled"], commits["moved"]]
    assert gm("log").exit_code == 0  # without an ID: the machine's recent activity


def test_as_of_reads_the_past_without_touching_the_files(history: tuple[Cli, dict[str, str]]) -> None:
    gm, commits = history
    before = {p: (gm.root / p).read_bytes() for p in (STAGING, DATABASES)}
    first = gm.json("as-of", commits["created"], "show", "global-sem-0001")
    assert first["path"] == STAGING and "port 5432" in first["body"]
    assert first["as_of"]["commit"] == commits["created"]
    by_day = gm.json("as-of", "2030-01-02", "show", "global-sem-0001")
    # A day means its end: the last commit made that day, whatever entry it touched.
    assert by_day["as_of"]["commit"] == commits["unrelated"] and "port 5433" in by_day["body"]
    assert gm.json("as-of", "2030-01-03", "show", "global-sem-0001")["path"] == DATABASES

    assert gm.json("search", "postgres 5433")[0]["path"] == DATABASES  # the live index exists
    # The snapshot starts from a copy of it: what only HEAD holds must not leak into the past.
    assert gm("as-of", commits["created"], "search", "postgres").exit_code == 1
    assert gm("as-of", commits["created"], "search", "5433").exit_code == 1
    then = gm.json("as-of", commits["created"], "search", "staging port")
    assert then["as_of"]["commit"] == commits["created"]
    assert [(h["id"], h["path"]) for h in then["hits"]][0] == ("global-sem-0001", STAGING)
    assert "5432" in then["hits"][0]["snippet"]
    later = gm.json("as-of", "2030-01-03", "search", "staging port")["hits"][0]
    assert (later["path"], later["title"]) == (DATABASES, "Staging database port")
    # Nothing that the search needs is missing, and the caches stay out of git.
    assert gm("as-of", commits["created"], "search", "unrelated caches").exit_code == 1
    assert gm.json("as-of", "HEAD", "search", "unrelated caches")["hits"][0]["id"] == "global-sem-0003"
    assert {p: (gm.root / p).read_bytes() for p in before} == before
    assert git(gm.root, "status", "--porcelain") == ""
    missing = gm("as-of", "1999-01-01", "show", "global-sem-0001")
    assert missing.exit_code == 1 and "no commit on or before 1999-01-01" in missing.stderr
    absent = gm("as-of", commits["edited"], "show", "global-sem-0003")
    assert absent.exit_code == 1 and "did not exist" in absent.stderr
    bad = gm("as-of", "no-such-rev", "show", "global-sem-0001")
    assert bad.exit_code == 1 and "unknown revision" in bad.stderr


def test_revert_brings_the_text_back_in_one_commit(history: tuple[Cli, dict[str, str]]) -> None:
    gm, commits = history
    count = commit_count(gm.root)
    result = gm("revert", "global-sem-0001", "--to", commits["created"], "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["path"] == DATABASES  # stays where it lives now
    assert commit_count(gm.root) == count + 1
    assert git(gm.root, "log", "-1", "--format=%s").strip() == \
        f"revert: global-sem-0001 to {commits['created'][:7]}"
    shown = gm.json("show", "global-sem-0001")
    assert shown["title"] == "Staging database port" and "port 5432" in shown["body"]
    assert shown["fields"]["Source"] == "session:4f2a"
    assert "# databases" in (gm.root / DATABASES).read_text()  # the rest of the file is kept
    # Without --to: back to the version before the last change (the retitled one).
    assert gm("revert", "global-sem-0001").exit_code == 0
    assert gm.json("show", "global-sem-0001")["title"] == "Staging Postgres port"
    same = gm("revert", "global-sem-0001", "--to", "HEAD", "--json")
    assert json.loads(same.stdout)["changed"] is False
    assert gm.json("why", "global-sem-0001")["changes"][-1]["message"].startswith("revert:")


def test_a_removed_entry_keeps_its_history_and_can_be_brought_back(
        history: tuple[Cli, dict[str, str]]) -> None:
    gm, commits = history
    (gm.root / DATABASES).unlink()
    removed = commit_on(gm.root, "drop the databases notes", "2030-01-05")
    data = gm.json("why", "global-sem-0001")
    assert data["exists"] is False and data["path"] is None
    assert data["changes"][-1]["commit"] == removed
    assert data["changes"][-1]["summary"] == f"removed from {DATABASES}"
    assert gm("show", "global-sem-0001").exit_code == 1
    assert gm("revert", "global-sem-0001").exit_code == 0
    assert gm.json("show", "global-sem-0001")["path"] == DATABASES
    check = gm("check")
    assert check.exit_code == 0, check.output


def test_an_edit_merged_from_another_machine_is_credited_to_its_commit(tmp_path: Path) -> None:
    """A sync merge brings the edit; `why` names the commit that made it, not the merge."""
    from gitmem.store.store import Store
    from gitmem.sync.remote import init_store
    from gitmem.sync.run import sync
    from gitmem.verbs.entries import remember

    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "--bare", "-b", "main", str(remote))
    a = Store(tmp_path / "a", cwd=tmp_path)
    init_store(a, remote=str(remote), branch="main")
    remember(a, "Backups run nightly", "procedural", topic="ops")
    sync(a)
    b = Store(tmp_path / "b", cwd=tmp_path)
    init_store(b, remote=str(remote), branch="main")
    path = b.root / "global/procedural/ops.md"
    path.write_text(path.read_text().replace("nightly", "nightly at 02:00"))
    sync(b)
    edit = git(b.root, "log", "-1", "--format=%H", "--", "global/procedural/ops.md").strip()
    remember(a, "Restores are tested monthly", "procedural", topic="restore")
    sync(a)
    assert len(git(a.root, "log", "-1", "--format=%P").split()) == 2  # a merge commit
    changes = Cli(a.root, CliRunner()).json("why", "global-pro-0001")["changes"]
    assert [c["commit"] for c in changes] == [edit]
    a.close()
    b.close()


def test_bad_ids_and_unknown_entries(history: tuple[Cli, dict[str, str]]) -> None:
    gm, _commits = history
    assert gm("why", "not-an-id").exit_code == 2
    assert gm("log", "global-sem-0099").exit_code == 1
    single = gm("revert", "global-sem-0002")
    assert single.exit_code == 2 and "single version" in single.stderr
