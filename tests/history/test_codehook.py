"""The post-commit hook of a code repository, driven by the real git binary in a temporary code
repository: each commit reaches the history layer in the background; a previous hook still runs."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from gitmem.store.store import Store
from gitmem.verbs.reads import list_entries
from support import GIT_ENV, Cli, git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "code" / "shop"
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "remote", "add", "origin", "https://github.com/acme/shop.git")
    return path


def git_commit(repo: Path, name: str, message: str, **env: str) -> str:
    (repo / name).write_text(message + "\n", encoding="utf-8")
    run = {**os.environ, **GIT_ENV, **env}
    subprocess.run(["git", "add", name], cwd=repo, check=True, env=run)
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, check=True, env=run, capture_output=True)
    return git(repo, "rev-parse", "HEAD").strip()


def wait_for(root: Path, count: int, timeout: float = 20.0) -> list[str]:
    """Commit hashes in the history layer once `count` are there (the hook works in the background)."""
    deadline = time.monotonic() + timeout
    found: list[str] = []
    while time.monotonic() < deadline:
        folder = root / "workspaces" / "acme-shop" / "history"
        text = "".join(p.read_text() for p in folder.glob("*.md")) if folder.is_dir() else ""
        found = [line.split()[-1] for line in text.splitlines() if line.startswith("**Commit:**")]
        if len(found) >= count and not list((root / "state").glob("history-hook-*.again")):
            return found
        time.sleep(0.1)
    return found


def test_each_commit_is_recorded_and_a_previous_hook_still_runs(gm: Cli, repo: Path, tmp_path: Path) -> None:
    previous = repo / ".git" / "hooks" / "post-commit"
    marker = tmp_path / "previous-ran.log"
    previous.write_text(f"#!/bin/sh\necho ran >> '{marker}'\n")
    previous.chmod(0o755)
    installed = gm("hooks", "install", "--repo", str(repo), "--json")
    assert installed.exit_code == 0, installed.output
    data = json.loads(installed.stdout)
    assert data["state"] == "installed" and data["chained"] and data["store"] == str(gm.root)
    first = git_commit(repo, "a.txt", "Add the cart")
    assert wait_for(gm.root, 1) == [first]
    assert marker.read_text() == "ran\n"
    # A burst of commits: every one arrives, none twice.
    burst = [git_commit(repo, f"b{n}.txt", f"Change {n}") for n in range(3)]
    assert sorted(wait_for(gm.root, 4)) == sorted([first, *burst])
    events = [json.loads(line) for line in (gm.root / "logs" / "memory.log").read_text().splitlines()]
    assert any(e["event"] == "hook" and e["hook"] == "code-post-commit" for e in events)
    assert not [e for e in events if e["event"] == "hook-failed"]
    store = Store(gm.root)
    assert len(list_entries(store, layer="history")) == 4
    store.close()


def test_uninstall_restores_the_previous_hook_and_status_tells(gm: Cli, repo: Path) -> None:
    assert json.loads(gm("hooks", "status", "--repo", str(repo), "--json").stdout)["state"] == "missing"
    previous = repo / ".git" / "hooks" / "post-commit"
    previous.write_text("#!/bin/sh\nexit 0\n")
    previous.chmod(0o755)
    assert gm("hooks", "install", "--repo", str(repo)).exit_code == 0
    assert gm("hooks", "install", "--repo", str(repo)).exit_code == 0  # idempotent: nothing lost
    assert (repo / ".git" / "hooks" / "post-commit.gitmem-chained").read_text() == "#!/bin/sh\nexit 0\n"
    assert json.loads(gm("hooks", "status", "--repo", str(repo), "--json").stdout)["state"] == "installed"
    assert gm("hooks", "uninstall", "--repo", str(repo)).exit_code == 0
    assert previous.read_text() == "#!/bin/sh\nexit 0\n"
    assert not (repo / ".git" / "hooks" / "post-commit.gitmem-chained").exists()
    assert gm("hooks", "install", "--repo", str(gm.root)).exit_code == 2  # the store is not a code repo


def hook_runs(root: Path, count: int, timeout: float = 20.0) -> list[dict[str, object]]:
    """The code hook's finished runs in logs/memory.log, once `count` are there."""
    deadline = time.monotonic() + timeout
    runs: list[dict[str, object]] = []
    log = root / "logs" / "memory.log"
    while time.monotonic() < deadline:
        events = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        runs = [e for e in events if e.get("hook") == "code-post-commit"]
        if len(runs) >= count:
            return runs
        time.sleep(0.1)
    return runs


def test_gitmem_hooks_0_skips_the_recording(gm: Cli, repo: Path) -> None:
    assert gm("hooks", "install", "--repo", str(repo)).exit_code == 0
    skipped = git_commit(repo, "a.txt", "Skipped", GITMEM_HOOKS="0")
    second = git_commit(repo, "b.txt", "Recorded")
    found = wait_for(gm.root, 2)
    assert sorted(found) == sorted([skipped, second])  # the next run catches up on the skipped one
    # The second commit's run has finished (its log line is there): had the skipped commit started
    # a run of its own, that run would have recorded it first and logged a line of its own.
    runs = hook_runs(gm.root, 1)
    assert [(run["event"], run["recorded"]) for run in runs] == [("hook", 2)]


def test_two_repositories_commit_at_once_into_one_store(gm: Cli, repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "code" / "billing"
    other.mkdir(parents=True)
    git(other, "init", "-q", "-b", "main")
    git(other, "remote", "add", "origin", "https://github.com/acme/billing.git")
    for path in (repo, other):
        assert gm("hooks", "install", "--repo", str(path)).exit_code == 0
    made = {"shop": [], "billing": []}  # type: dict[str, list[str]]
    for n in range(3):
        made["shop"].append(git_commit(repo, f"s{n}.txt", f"Shop change {n}"))
        made["billing"].append(git_commit(other, f"b{n}.txt", f"Billing change {n}"))
    assert sorted(wait_for(gm.root, 3)) == sorted(made["shop"])
    deadline = time.monotonic() + 20
    folder = gm.root / "workspaces" / "acme-billing" / "history"
    while time.monotonic() < deadline:
        text = "".join(p.read_text() for p in folder.glob("*.md")) if folder.is_dir() else ""
        if all(oid in text for oid in made["billing"]):
            break
        time.sleep(0.1)
    assert all(oid in text for oid in made["billing"])
