"""Code-bound freshness: an entry whose Paths changed in its workspace repository after it was
verified is marked suspect in search, show and the context card; `verify` clears it."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import date, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitmem.provenance.codefresh import CACHE_FILE
from support import GIT_ENV, Cli, git

TOPIC = "workspaces/app/semantic/schema.md"
PAST = (date.today() - timedelta(days=30)).isoformat()  # verified a month ago: still fresh


def code_commit(repo: Path, path: str, content: str, message: str) -> str:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, check=True, env=env)
    return git(repo, "rev-parse", "HEAD").strip()


def backdate(store: Path, relpath: str, day: str) -> None:
    """Pretend the entries of a file were verified on `day`, before gitmem recorded the code's
    commit with them (a hand edit, absorbed later): the day rule applies to them."""
    path = store / relpath
    lines = [f"**Verified:** {day}" if line.startswith("**Verified:**") else line
             for line in path.read_text().splitlines() if not line.startswith("**Code-Commit:**")]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def app(tmp_path: Path) -> tuple[Cli, Path]:
    """A store with workspace `app` associated with a code repository on this machine."""
    repo = tmp_path / "app"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    code_commit(repo, "src/db/schema.py", "USERS = 1\n", "schema")
    code_commit(repo, "src/api/routes.py", "ROUTES = []\n", "routes")
    gm = Cli(tmp_path / "store", CliRunner())
    gm("init")
    assert gm("associate", "app", "--path", str(repo)).exit_code == 0
    made = gm("remember", "Users have a unique email index", "-l", "semantic", "-t", "schema",
              "--scope", "workspace", "--paths", "src/db/schema.py, src/api/", workspace="app")
    assert made.stdout.strip() == "app-sem-0001", made.output
    gm("remember", "Nothing about code here", "-l", "semantic", "-t", "schema", "--scope",
       "workspace", workspace="app")
    backdate(gm.root, TOPIC, PAST)
    return gm, repo


def test_a_commit_to_an_entrys_path_makes_it_suspect_until_verified(app: tuple[Cli, Path]) -> None:
    gm, repo = app
    oid = code_commit(repo, "src/db/schema.py", "USERS = 2\n", "add email index")
    shown = gm.json("show", "app-sem-0001")
    assert shown["fields"]["Paths"] == "src/db/schema.py, src/api/"
    assert shown["suspect"][0].startswith(f"src/db/schema.py changed in {oid[:7]}, ")
    assert shown["suspect"][0].endswith(" days after this was verified")
    assert len(shown["suspect"]) == 3  # the two set-up commits came later too
    assert "SUSPECT: src/db/schema.py changed in" in gm("show", "app-sem-0001").stdout
    assert gm.json("show", "app-sem-0002")["suspect"] == []  # no paths: never suspect

    hits = gm.json("search", "unique email index", workspace="app")
    assert hits[0]["id"] == "app-sem-0001" and hits[0]["suspect"] == shown["suspect"]
    line = gm("search", "unique email index", workspace="app").stdout
    assert "[SUSPECT]" in line and "30 days after this was verified" in line and f"suspect: src/db/schema.py changed in {oid[:7]}" in line
    assert "(and 2 earlier commits)" in line

    card = gm("context", workspace="app").stdout
    assert "### Suspect: code changed since verified" in card
    assert f"Users have a unique email index (app-sem-0001): src/db/schema.py changed in {oid[:7]}" in card
    assert "`gitmem verify app-sem-0001`" in card

    assert gm("verify", "app-sem-0001").exit_code == 0
    assert gm.json("show", "app-sem-0001")["suspect"] == []
    assert "Suspect" not in gm("context", workspace="app").stdout


def test_only_commits_touching_the_paths_count_and_folders_match_below(app: tuple[Cli, Path]) -> None:
    gm, repo = app
    gm("verify", "app-sem-0001")
    code_commit(repo, "README.md", "hello\n", "docs only")
    assert gm.json("show", "app-sem-0001")["suspect"] == []
    backdate(gm.root, TOPIC, PAST)
    for entry in gm.json("list", workspace="app"):
        assert entry["fields"]["Verified"] == PAST
    oid = code_commit(repo, "src/api/v2/users.py", "x = 1\n", "new api module")
    assert gm.json("show", "app-sem-0001")["suspect"][0].startswith(f"src/api/v2/users.py changed in {oid[:7]}")


def test_codebase_topics_are_bound_to_their_path(app: tuple[Cli, Path]) -> None:
    gm, repo = app
    made = gm("codebase", "src/db", "Database layer: schema and migrations", workspace="app")
    entry_id = made.stdout.strip()
    gm("codebase", "caching", "No cache layer yet", workspace="app")  # not a path of the repo
    backdate(gm.root, "workspaces/app/codebase/src-db.md", PAST)
    backdate(gm.root, "workspaces/app/codebase/caching.md", PAST)
    code_commit(repo, "src/db/migrations/0001.py", "up = 1\n", "first migration")
    assert gm.json("show", entry_id)["suspect"][0].startswith("src/db/migrations/0001.py changed in")
    assert gm.json("show", "app-cod-0002")["suspect"] == []


def test_no_known_repository_means_nothing_is_suspect(app: tuple[Cli, Path], tmp_path: Path) -> None:
    gm, repo = app
    code_commit(repo, "src/db/schema.py", "USERS = 3\n", "change")
    (gm.root / "state" / "associations.json").unlink()
    assert gm.json("show", "app-sem-0001")["suspect"] == []
    assert "Suspect" not in gm("context", workspace="app").stdout


def test_the_log_is_cached_by_head(app: tuple[Cli, Path]) -> None:
    gm, repo = app
    gm.json("show", "app-sem-0001")
    cache = json.loads((gm.root / CACHE_FILE).read_text())
    record = cache[str(repo.resolve())]
    assert record["head"] == git(repo, "rev-parse", "HEAD").strip()
    assert record["since"] == PAST
    # A cached answer is used as long as HEAD stays: a planted commit list proves it is read.
    record["commits"] = [["f" * 40, record["commits"][0][1], ["src/db/schema.py"]]]
    (gm.root / CACHE_FILE).write_text(json.dumps(cache))
    assert gm.json("show", "app-sem-0001")["suspect"][0].startswith("src/db/schema.py changed in fffffff")
    oid = code_commit(repo, "src/db/schema.py", "USERS = 4\n", "moves HEAD")
    assert gm.json("show", "app-sem-0001")["suspect"][0].startswith(f"src/db/schema.py changed in {oid[:7]}")


def test_paths_outside_the_repository_are_refused(app: tuple[Cli, Path]) -> None:
    gm, _repo = app
    for bad in ("/etc/passwd", "../other/x.py"):
        result = gm("remember", "x", "-l", "semantic", "--scope", "workspace", "--paths", bad,
                    workspace="app")
        assert result.exit_code == 2 and "not a path inside the repository" in result.stderr
    path = gm.root / TOPIC
    path.write_text(path.read_text().replace("**Paths:** src/db/schema.py, src/api/",
                                             "**Paths:** src/db/schema.py, /etc/hosts"))
    check = gm("check")
    assert check.exit_code == 2 and "Paths: '/etc/hosts' is not a path inside" in check.stdout


def test_marks_cost_no_pygit2_on_the_search_path(tmp_path: Path) -> None:
    """A search run inside the workspace's repository finds it through the git binary: the
    search process still does not load pygit2 (~100 ms of start-up)."""
    import sys

    repo = tmp_path / "code"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", "https://example.com/acme/app.git")  # key: acme-app
    code_commit(repo, "src/db/schema.py", "USERS = 1\n", "schema")
    gm = Cli(tmp_path / "store", CliRunner())
    gm("init")
    gm("remember", "Users have a unique email index", "-l", "semantic", "--scope", "workspace",
       "--paths", "src/db/schema.py", workspace="acme-app")
    backdate(gm.root, "workspaces/acme-app/semantic/general.md", PAST)
    oid = code_commit(repo, "src/db/schema.py", "USERS = 2\n", "change")
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "gitmem", "--root", str(gm.root),
                           "search", "unique email index", "--json"], cwd=repo / "src",
                          capture_output=True, text=True, env={**os.environ, **GIT_ENV})
    assert done.returncode == 0, done.stderr[-500:]
    hits = json.loads(done.stdout)
    assert hits[0]["id"] == "acme-app-sem-0001"
    assert hits[0]["suspect"][0].startswith(f"src/db/schema.py changed in {oid[:7]}")
    assert " pygit2" not in done.stderr


# -- the code's commit, recorded at write and verify -----------------------------------------------
def test_a_change_the_same_day_after_the_write_makes_the_entry_suspect(tmp_path: Path) -> None:
    repo = tmp_path / "app"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    first = code_commit(repo, "src/db/schema.py", "USERS = 1\n", "schema")
    gm = Cli(tmp_path / "store", CliRunner())
    gm("init")
    gm("associate", "app", "--path", str(repo))
    gm("remember", "Users have a unique email index", "-l", "semantic", "--scope", "workspace",
       "--paths", "src/db/schema.py", workspace="app")
    shown = gm.json("show", "app-sem-0001")
    assert shown["fields"]["Code-Commit"] == first and shown["suspect"] == []
    later = code_commit(repo, "src/db/schema.py", "USERS = 2\n", "drop the index")  # minutes later
    assert gm.json("show", "app-sem-0001")["suspect"] == [
        f"src/db/schema.py changed in {later[:7]}, after this was verified"]
    assert gm("verify", "app-sem-0001").exit_code == 0
    verified = gm.json("show", "app-sem-0001")
    assert verified["fields"]["Code-Commit"] == later and verified["suspect"] == []
    code_commit(repo, "README.md", "docs\n", "docs only")
    assert gm.json("show", "app-sem-0001")["suspect"] == []


def test_a_branch_merged_after_verification_counts_even_with_older_commits(app: tuple[Cli, Path]) -> None:
    gm, repo = app
    git(repo, "checkout", "-q", "-b", "feature")
    old = code_commit(repo, "src/api/routes.py", "ROUTES = ['/v2']\n", "v2 routes, made before the check")
    git(repo, "checkout", "-q", "main")
    assert gm("verify", "app-sem-0001").exit_code == 0  # checked against main, without the branch
    assert gm.json("show", "app-sem-0001")["suspect"] == []
    git(repo, "-c", "user.name=t", "-c", "user.email=t@x", "merge", "-q", "--no-ff", "-m", "merge", "feature")
    marks = gm.json("show", "app-sem-0001")["suspect"]
    assert marks == [f"src/api/routes.py changed in {old[:7]}, after this was verified"]


def test_a_commit_this_clone_does_not_have_falls_back_to_days(app: tuple[Cli, Path]) -> None:
    gm, repo = app
    assert gm("verify", "app-sem-0001").exit_code == 0
    path = gm.root / TOPIC
    text = path.read_text()
    recorded = gm.json("show", "app-sem-0001")["fields"]["Code-Commit"]
    path.write_text(text.replace(recorded, "0" * 40))  # made on a machine whose clone is ahead
    code_commit(repo, "src/db/schema.py", "USERS = 5\n", "today")
    assert gm.json("show", "app-sem-0001")["suspect"] == []  # verified today: the day rule is quiet
    backdate(gm.root, TOPIC, PAST)
    assert gm.json("show", "app-sem-0001")["suspect"]


def test_codebase_entries_record_their_code_commit(app: tuple[Cli, Path]) -> None:
    gm, repo = app
    entry_id = gm("codebase", "src/db", "Database layer", workspace="app").stdout.strip()
    head = git(repo, "rev-parse", "HEAD").strip()
    assert gm.json("show", entry_id)["fields"]["Code-Commit"] == head
    newer = code_commit(repo, "src/db/pool.py", "SIZE = 5\n", "pool")
    assert gm.json("show", entry_id)["suspect"][0].startswith(f"src/db/pool.py changed in {newer[:7]}")
    gm("codebase", "src/db", "Database layer with a pool", workspace="app")
    assert gm.json("show", entry_id)["fields"]["Code-Commit"] == newer
    assert gm.json("show", "app-sem-0002")["fields"].get("Code-Commit") is None  # not about code
