"""The store's remote: upstream tracking for plain git, local paths stored absolute and checked,
tokens taken out of URLs (user part, password, query string; percent-decoded) and moved to the
user's credential helper or state/git-token, and `gitmem remote show`."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gitmem.cli import cli
from gitmem.store.store import Store
from gitmem.sync.remote import init_store
from gitmem.sync.run import sync
from gitmem.verbs.entries import remember
from gitserver import serve_git_http
from support import git, run_gitmem


def gm(root: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, ["--root", str(root), *args], env=env, catch_exceptions=False)


def global_config(*args: str) -> None:
    git(Path.home(), "config", "--global", *args)


def one_line_error(result: Result, code: int, needle: str) -> None:
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], result.stderr


def tracking(root: Path, branch: str = "main") -> tuple[str, str]:
    return (git(root, "config", f"branch.{branch}.remote").strip(),
            git(root, "config", f"branch.{branch}.merge").strip())


# -- upstream tracking --------------------------------------------------------------------------
def test_init_remote_sets_upstream_so_plain_git_push_and_pull_work(
        tmp_path: Path, bare_remote: Path) -> None:
    a = Store(tmp_path / "a", cwd=tmp_path)
    init_store(a, remote=str(bare_remote), branch="main")
    assert tracking(a.root) == ("origin", "refs/heads/main")
    remember(a, "Pushed with plain git", "semantic", topic="plain")
    git(a.root, "push", "-q")  # no remote, no branch: the upstream says where
    assert git(bare_remote, "rev-parse", "main") == git(a.root, "rev-parse", "HEAD")

    b = Store(tmp_path / "b", cwd=tmp_path)
    init_store(b, remote=str(bare_remote), branch="main")  # a clone this time
    assert tracking(b.root) == ("origin", "refs/heads/main")
    remember(a, "Pulled with plain git", "semantic", topic="plain")
    git(a.root, "push", "-q")
    git(b.root, "pull", "-q", "--no-rebase")
    assert "Pulled with plain git" in (b.root / "global/semantic/plain.md").read_text()
    assert git(b.root, "status", "-sb").startswith("## main...origin/main\n")
    a.close()
    b.close()


def test_remote_set_makes_the_branch_track_the_remote(store: Store, bare_remote: Path) -> None:
    result = gm(store.root, "remote", "set", str(bare_remote), "--branch", "trunk", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["upstream"] == "origin/trunk"
    assert tracking(store.root, "trunk") == ("origin", "refs/heads/trunk")


def test_sync_sets_tracking_on_a_store_that_lacks_it(store: Store, bare_remote: Path) -> None:
    gm(store.root, "remote", "set", str(bare_remote))
    git(store.root, "config", "--unset", "branch.main.remote")
    git(store.root, "config", "--unset", "branch.main.merge")
    assert sync(store).result == "pushed"
    assert tracking(store.root) == ("origin", "refs/heads/main")


# -- local paths --------------------------------------------------------------------------------
def test_a_relative_remote_path_is_stored_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "t").mkdir()
    git(tmp_path, "init", "--bare", "-q", "-b", "main", "t/remote.git")
    monkeypatch.chdir(tmp_path)
    assert gm(tmp_path / "store", "init", "--remote", "t/remote.git").exit_code == 0
    absolute = str(tmp_path / "t" / "remote.git")
    registry = json.loads((tmp_path / "store" / "memory.json").read_text())
    assert registry["git"]["remote"] == absolute
    assert git(tmp_path / "store", "remote", "get-url", "origin").strip() == absolute
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert gm(tmp_path / "store", "remember", "From another folder", "--layer", "semantic").exit_code == 0
    assert gm(tmp_path / "store", "sync").exit_code == 0
    assert git(tmp_path / "t" / "remote.git", "rev-parse", "main") == git(tmp_path / "store", "rev-parse", "HEAD")
    # `remote set` resolves against the folder it is run from too
    monkeypatch.chdir(tmp_path / "t")
    assert gm(tmp_path / "store", "remote", "set", "./remote.git").exit_code == 0
    assert git(tmp_path / "store", "remote", "get-url", "origin").strip() == absolute


def test_a_local_path_that_is_not_a_repository_is_refused(tmp_path: Path, store: Store) -> None:
    before = (git(store.root, "rev-parse", "HEAD"), (store.root / "memory.json").read_text(),
              git(store.root, "config", "--list", "--local"))
    missing = tmp_path / "no" / "such.git"
    one_line_error(gm(store.root, "remote", "set", str(missing)), 2, "does not exist")
    plain = tmp_path / "plain-folder"
    plain.mkdir()
    one_line_error(gm(store.root, "remote", "set", str(plain)), 2, "is not a git repository")
    one_line_error(gm(store.root, "remote", "set", f"file://{missing}"), 2, "does not exist")
    after = (git(store.root, "rev-parse", "HEAD"), (store.root / "memory.json").read_text(),
             git(store.root, "config", "--list", "--local"))
    assert after == before
    target = tmp_path / "new-store"
    one_line_error(gm(target, "init", "--remote", str(missing)), 2, "git init --bare")
    assert not target.exists()


# -- tokens in URLs -----------------------------------------------------------------------------
def test_a_query_string_token_never_reaches_a_file_the_log_sync_json_or_output(tmp_path: Path) -> None:
    token = "qs/tok+en-91c7e2"  # percent-encoded in the URL; the server wants it decoded
    encoded = "qs%2Ftok%2Ben-91c7e2"
    srv = tmp_path / "srv"
    srv.mkdir()
    git(tmp_path, "init", "--bare", "-q", "-b", "main", str(srv / "mem.git"))
    outputs: list[str] = []

    def cli(root: Path, *args: str) -> str:
        done = run_gitmem("--root", str(root), *args, cwd=tmp_path)
        outputs.extend([done.stdout, done.stderr])
        assert done.returncode == 0, done.stderr
        return done.stdout

    with serve_git_http(srv, token=token) as base:
        url = f"{base}mem.git?access_token={encoded}"
        a, b = tmp_path / "a", tmp_path / "b"
        said = cli(a, "init", "--remote", url)
        assert f"saved to {a / 'state' / 'git-token'} (mode 600" in said
        cli(a, "remember", "Reached through a query-string token", "--layer", "semantic")
        assert json.loads(cli(a, "sync", "--json"))["result"] == "pushed"
        assert "cloned" in cli(b, "init", "--remote", url)
        cli(b, "remember", "Second machine", "--layer", "semantic", "--topic", "b")
        cli(b, "sync")
        cli(a, "sync", "--dry-run")
        cli(a, "sync")
        cli(a, "status")
        cli(a, "remote", "show", "--json")
        assert base.requests and {r.user for r in base.requests if r.authorized} == {"x-access-token"}
    for root in (a, b):
        saved = root / "state" / "git-token"
        assert saved.read_text().strip() == token and stat.S_IMODE(saved.stat().st_mode) == 0o600
        assert git(root, "remote", "get-url", "origin").strip() == base + "mem.git"
        texts = [git(root, "log", "-p", "--all"), (root / ".git" / "config").read_text()]
        for path in root.rglob("*"):
            if path.is_file() and ".git" not in path.parts and path != saved:
                texts.append(path.read_text(encoding="utf-8", errors="replace"))
        assert any("memory.log" in str(p) for p in root.rglob("*.log"))
        for text in texts + outputs:
            assert token not in text and encoded not in text and "access_token" not in text


def test_a_url_token_goes_to_the_users_credential_helper(tmp_path: Path, store: Store) -> None:
    creds = tmp_path / "git-credentials"
    global_config("credential.helper", f"store --file {creds}")
    (store.root / "state" / "git-token").write_text("an-older-token\n")
    token = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
    result = gm(store.root, "remote", "set", f"https://{token}@git.example.invalid/me/mem.git")
    assert result.exit_code == 0, result.output
    assert "given to git's credential helper (store)" in result.stdout and token not in result.output
    assert "older token in state/git-token was removed" in result.stdout
    assert not (store.root / "state" / "git-token").exists()
    assert f"x-access-token:{token}@git.example.invalid" in creds.read_text()
    stored = "https://x-access-token@git.example.invalid/me/mem.git"
    assert git(store.root, "remote", "get-url", "origin").strip() == stored
    for relpath in ("memory.json", "SYSTEM.md", ".git/config", "logs/memory.log"):
        assert token not in (store.root / relpath).read_text()
    show = json.loads(gm(store.root, "remote", "show", "--json").stdout)
    assert show["credentials"] == {"kind": "helper", "detail": "git credential helper: store"}


def test_the_token_stays_in_the_file_when_no_helper_keeps_it(tmp_path: Path, store: Store) -> None:
    global_config("credential.helper", "cache --timeout=1")  # forgets: never chosen, never run
    url = "https://me:first-token-1a2b@git.example.invalid/me/mem.git"
    result = gm(store.root, "remote", "set", url, "--json")
    data = json.loads(result.stdout)
    assert data["token_store"] == "file" and data["token_file"] == str(store.root / "state/git-token")
    assert (store.root / "state" / "git-token").read_text().strip() == "first-token-1a2b"
    # a helper that answers with its own credential and keeps nothing (like `gh auth git-credential`)
    global_config("--replace-all", "credential.helper",
                  "!f() { test \"$1\" = get && printf 'username=someone\\npassword=not-it\\n'; }; f")
    result = gm(store.root, "remote", "set", url.replace("first", "second"))
    assert result.exit_code == 0 and "saved to" in result.stdout and "second-token" not in result.stdout
    assert (store.root / "state" / "git-token").read_text().strip() == "second-token-1a2b"
    assert not (Path.home() / ".cache" / "git" / "credential").exists()  # cache never started


def test_a_helper_in_the_users_config_serves_init_and_sync_over_http(tmp_path: Path) -> None:
    token = "helper-only-7c41"
    srv = tmp_path / "srv"
    srv.mkdir()
    git(tmp_path, "init", "--bare", "-q", "-b", "main", str(srv / "mem.git"))
    with serve_git_http(srv, token=token) as base:
        creds = tmp_path / "git-credentials"
        creds.write_text(base.replace("http://", f"http://me:{token}@").rstrip("/") + "\n")
        global_config("credential.helper", f"store --file {creds}")
        store = Store(tmp_path / "a", cwd=tmp_path)
        init_store(store, remote=base + "mem.git", branch="main")
        remember(store, "Only git's helper knows the password", "semantic")
        assert sync(store).result == "pushed"
        assert not (store.root / "state" / "git-token").exists()
        assert {r.user for r in base.requests if r.authorized} == {"me"}
        store.close()


# -- remote show --------------------------------------------------------------------------------
def test_remote_show(tmp_path: Path, store: Store, bare_remote: Path,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    result = gm(store.root, "remote", "show")
    assert result.exit_code == 0 and "remote: none" in result.stdout

    gm(store.root, "remote", "set", str(bare_remote))
    sync(store)
    data = json.loads(gm(store.root, "remote", "show", "--json").stdout)
    assert data["remote"] == str(bare_remote) and data["upstream"] == "origin/main"
    assert data["credentials"]["kind"] == "none" and data["transport"].startswith("git (")
    assert data["last_sync"]["result"] == "pushed" and data["effective_url"] is None
    text = gm(store.root, "remote", "show").stdout
    assert "branch: main, tracking origin/main" in text and "last sync: pushed" in text

    global_config("url.https://git.example.invalid/.insteadOf", "ex:")
    gm(store.root, "remote", "set", "ex:me/mem.git")
    data = json.loads(gm(store.root, "remote", "show", "--json").stdout)
    assert data["effective_url"] == "https://git.example.invalid/me/mem.git"
    assert data["credentials"]["kind"] == "none" and "credential helper" in data["credentials"]["detail"]
    monkeypatch.setenv("GITMEM_GIT_TOKEN", "env-token-5d")
    data = json.loads(gm(store.root, "remote", "show", "--json").stdout)
    assert data["credentials"]["kind"] == "env"
    monkeypatch.delenv("GITMEM_GIT_TOKEN")
    gm(store.root, "remote", "set", "https://u:file-token-6e@git.example.invalid/me/mem.git")
    data = json.loads(gm(store.root, "remote", "show", "--json").stdout)
    assert data["credentials"]["kind"] == "file" and data["remote"] == "https://***@git.example.invalid/me/mem.git"
    gm(store.root, "remote", "set", "gh-work:me/mem.git")
    data = json.loads(gm(store.root, "remote", "show", "--json").stdout)
    assert data["credentials"]["kind"] == "ssh"
    shown = gm(store.root, "remote", "show").stdout + json.dumps(data)
    assert "file-token-6e" not in shown and "env-token-5d" not in shown
    assert os.environ.get("GITMEM_GIT_TOKEN") is None
