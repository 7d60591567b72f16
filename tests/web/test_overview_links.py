"""The overview's sync, review, model and suspect facts, each leading to its list: ahead / behind
against the remote-tracking branch, and the suspect entries page (code changed since verified)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from support import git, run_gitmem
from webpage import start_web, stop_web

OFF = {"GITMEM_SERVE": "off"}


def fact(page: str, name: str) -> str:
    found = re.search(rf"<dt>{re.escape(name)}</dt><dd>(.*?)</dd>", page)
    assert found, page[:800]
    return re.sub(r"<[^>]+>", "", found.group(1))


def code_commit(repo: Path, path: str, content: str, message: str) -> None:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(content)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


def test_ahead_behind_follows_local_commits_and_a_sync(web_store: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    page = start_web(web_store)
    try:
        page.sign_in()
        overview = page.get("/").text
        assert fact(overview, "Ahead / behind").startswith("— (no remote-tracking branch yet)")
        assert fact(overview, "Models").startswith("none")
        assert fact(overview, "Review queue") == "0"
        assert fact(overview, "Sync outcome") == "—"
        assert run_gitmem("--root", str(web_store), "remote", "set", str(remote), env=OFF).returncode == 0
        assert run_gitmem("--root", str(web_store), "sync", env=OFF).returncode == 0
        assert fact(page.get("/").text, "Ahead / behind") == "0 to push / 0 fetched, not merged"
        assert fact(page.get("/").text, "Sync outcome") == "pushed"  # as `gitmem status` says
        run_gitmem("--root", str(web_store), "remember", "The gateway is vpn3", "-l", "semantic", env=OFF)
        assert fact(page.get("/").text, "Ahead / behind") == "1 to push / 0 fetched, not merged"
    finally:
        stop_web(page)


def test_the_suspect_list_shows_an_entry_whose_code_changed(web_store: Path, tmp_path: Path) -> None:
    repo = tmp_path / "app"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    code_commit(repo, "src/db/schema.py", "USERS = 1\n", "schema")
    root = str(web_store)
    assert run_gitmem("--root", root, "associate", "app", "--path", str(repo), env=OFF).returncode == 0
    made = run_gitmem("--root", root, "-w", "app", "remember", "Users have a unique email index",
                      "-l", "semantic", "--scope", "workspace", "--paths", "src/db/schema.py", env=OFF)
    assert made.returncode == 0, made.stderr
    entry_id = made.stdout.strip()
    page = start_web(web_store)
    try:
        page.sign_in()
        assert 'href="/suspects"' in page.get("/").text
        before = page.get("/suspects").text
        assert "no suspect entries" in before and entry_id not in before
        code_commit(repo, "src/db/schema.py", "USERS = 2\n", "drop the index")
        listed = page.get("/suspects").text
        assert entry_id in listed and "Users have a unique email index" in listed
        assert "src/db/schema.py changed in" in listed and "<button" in listed  # its Verify is there
        assert run_gitmem("--root", root, "verify", entry_id, env=OFF).returncode == 0
        assert entry_id not in page.get("/suspects").text
    finally:
        stop_web(page)
