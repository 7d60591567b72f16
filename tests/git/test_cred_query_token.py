"""A token given in a remote URL's query string (`?token=`, `?access_token=`, percent-encoded or
not) goes to the user's git credential helper when one is configured that keeps it, exactly as
a URL's `user:password` does; it never appears in a committed file, a log line, git config or
output. A real `credential.helper store --file PATH` and a loopback git server."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from gitserver import serve_git_http
from support import git, run_gitmem


def _texts(root: Path) -> list[str]:
    """Everything on this machine gitmem or git wrote for the store, but the credential files."""
    texts = [git(root, "log", "-p", "--all"), (root / ".git" / "config").read_text()]
    for path in root.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
    return texts


@pytest.mark.parametrize(("param", "token", "spelled"), [
    ("token", "qs-token-5d1e9a", "qs-token-5d1e9a"),
    ("access_token", "qs/tok+en-77b2c0", "qs%2Ftok%2Ben-77b2c0"),
    ("private_token", "glpat-q7c2e5d4b3a1", "glpat-q7c2e5d4b3a1"),
])
def test_a_query_string_token_goes_to_the_credential_helper(tmp_path: Path, param: str, token: str,
                                                             spelled: str) -> None:
    srv = tmp_path / "srv"
    srv.mkdir()
    git(tmp_path, "init", "--bare", "-q", "-b", "main", str(srv / "mem.git"))
    creds = tmp_path / "git-credentials"
    git(Path.home(), "config", "--global", "credential.helper", f"store --file {creds}")
    outputs: list[str] = []

    def cli(root: Path, *args: str) -> str:
        done = run_gitmem("--root", str(root), *args, cwd=tmp_path)
        outputs.extend([done.stdout, done.stderr])
        assert done.returncode == 0, done.stderr
        return done.stdout

    with serve_git_http(srv, token=token) as base:
        url = f"{base}mem.git?{param}={spelled}"
        a, b = tmp_path / "a", tmp_path / "b"
        said = cli(a, "init", "--remote", url)
        assert "given to git's credential helper (store)" in said, said
        cli(a, "remember", "Reached through the helper", "--layer", "semantic")
        cli(a, "sync")
        cli(b, "init", "--remote", url)
        cli(b, "remember", "Second machine", "--layer", "semantic", "--topic", "b")
        cli(b, "sync")
        cli(a, "sync")
        cli(a, "status")
        cli(a, "remote", "show", "--json")
        authorized = {r.user for r in base.requests if r.authorized}
        assert authorized == {"x-access-token"}
    assert stat.S_IMODE(creds.stat().st_mode) & 0o077 == 0
    assert f"x-access-token:{spelled}@".lower() in creds.read_text().lower()  # store's own spelling
    for root in (a, b):
        assert not (root / "state" / "git-token").exists()
        assert git(root, "remote", "get-url", "origin").strip() == base.replace("//", "//x-access-token@") + "mem.git"
        assert (root / "global/semantic").is_dir()
        for text in _texts(root) + outputs:
            assert token not in text and spelled not in text and f"?{param}=" not in text


def test_remote_set_moves_a_query_token_to_the_helper_and_an_older_file_goes(tmp_path: Path) -> None:
    creds = tmp_path / "git-credentials"
    root = tmp_path / "store"
    done = run_gitmem("--root", str(root), "init", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (root / "state" / "git-token").write_text("an-older-token\n")
    (root / "state" / "git-token").chmod(0o600)
    git(Path.home(), "config", "--global", "credential.helper", f"store --file {creds}")
    token = "glpat-0a1b2c3d4e5f6a7b8c9d"
    done = run_gitmem("--root", str(root), "remote", "set",
                      f"https://git.example.invalid/me/mem.git?private_token={token}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "given to git's credential helper (store)" in done.stdout
    assert "older token in state/git-token was removed" in done.stdout
    assert not (root / "state" / "git-token").exists()
    assert f"x-access-token:{token}@git.example.invalid" in creds.read_text()
    assert git(root, "remote", "get-url", "origin").strip() == \
        "https://x-access-token@git.example.invalid/me/mem.git"
    for text in [*_texts(root), done.stdout, done.stderr]:
        assert token not in text and "private_token" not in text
