"""Tests for gitmem.git: local commits and status, history, remotes and sync plumbing."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmem.errors import AuthError, GitLayerError, InvalidInputError, NotFoundError, SyncError
from gitmem.git.repo import CommitInfo, GitRepo, PushRejectedError, redact, strip_credentials
from gitserver import serve_git_http
from support import git

AUTHOR = ("Tester", "tester@example.com")


@pytest.fixture(autouse=True)
def _no_ambient_token(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep a developer's real token out of the tests."""
    monkeypatch.delenv("GITMEM_GIT_TOKEN", raising=False)


def write(repo: GitRepo, rel: str, text: str) -> Path:
    """Write a work tree file, creating directories."""
    path = repo.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def commit(repo: GitRepo, rel: str, text: str, message: str | None = None) -> str:
    """Write one file and commit it; return the oid."""
    write(repo, rel, text)
    oid = repo.commit_paths([rel], message or f"edit {rel}", author=AUTHOR)
    assert oid is not None
    return oid


def make_bare(path: Path) -> Path:
    """Create a bare repository with the git CLI (independent of the code under test)."""
    subprocess.run(
        ["git", "init", "--quiet", "--bare", "--initial-branch=main", str(path)], check=True
    )
    return path


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    """A fresh store repository with an unborn main branch."""
    return GitRepo.init(tmp_path / "store")


# -- opening and init ---------------------------------------------------------------------------


def test_init_gives_unborn_main_and_adopts_existing(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "s")
    assert repo.head_oid() is None
    assert repo.branch() == "main"
    assert GitRepo.is_repo(tmp_path / "s")
    oid = commit(repo, "a.md", "a\n")
    again = GitRepo.init(tmp_path / "s", branch="other")
    assert again.head_oid() == oid
    assert again.branch() == "main"


def test_never_opens_a_parent_repository(tmp_path: Path) -> None:
    outer = GitRepo.init(tmp_path / "outer")
    commit(outer, "x.md", "x\n")
    inner = tmp_path / "outer" / "store"
    inner.mkdir()
    assert not GitRepo.is_repo(inner)
    with pytest.raises(NotFoundError, match="not a git repository"):
        GitRepo(inner)
    with pytest.raises(NotFoundError):
        GitRepo(tmp_path / "missing")


def test_init_inside_another_work_tree_makes_its_own_repo(tmp_path: Path) -> None:
    outer = GitRepo.init(tmp_path / "outer")
    commit(outer, "x.md", "x\n")
    inner = GitRepo.init(tmp_path / "outer" / "store")
    assert inner.root == (tmp_path / "outer" / "store").absolute()
    assert inner.head_oid() is None


# -- commit_paths -------------------------------------------------------------------------------


def test_commit_paths_makes_exactly_one_commit_of_exactly_those_paths(repo: GitRepo) -> None:
    write(repo, "a.md", "a\n")
    write(repo, "b.md", "b\n")
    oid = repo.commit_paths(["a.md"], "remember a", author=AUTHOR)
    assert oid is not None and repo.head_oid() == oid
    [info] = repo.log()
    assert isinstance(info, CommitInfo)
    assert (info.oid, info.message, info.parents) == (oid, "remember a", [])
    assert info.author == "Tester <tester@example.com>"
    assert repo.list_files_at(oid) == ["a.md"]
    assert repo.dirty_paths() == ["b.md"]


def test_commit_paths_without_change_makes_no_commit(repo: GitRepo) -> None:
    first = commit(repo, "a.md", "a\n")
    assert repo.commit_paths(["a.md"], "again", author=AUTHOR) is None
    assert repo.head_oid() == first
    assert repo.commit_paths([], "nothing", author=AUTHOR) is None
    empty = repo.commit_paths([], "checkpoint", author=AUTHOR, allow_empty=True)
    assert empty is not None and repo.log()[0].parents == [first]


def test_commit_paths_on_unborn_head_with_nothing_returns_none(repo: GitRepo) -> None:
    assert repo.commit_paths(["missing.md"], "x", author=AUTHOR) is None
    assert repo.head_oid() is None


def test_commit_paths_records_a_deletion(repo: GitRepo) -> None:
    commit(repo, "dir/a.md", "a\n")
    commit(repo, "b.md", "b\n")
    (repo.root / "dir" / "a.md").unlink()
    oid = repo.commit_paths(["dir/a.md"], "forget a", author=AUTHOR)
    assert oid is not None
    assert repo.list_files_at(oid) == ["b.md"]
    assert repo.read_file_at(oid, "dir/a.md") is None
    assert repo.is_clean()


def test_commit_paths_unchanged_but_staged_keeps_index_consistent(repo: GitRepo) -> None:
    commit(repo, "a.md", "a\n")
    write(repo, "a.md", "changed\n")
    write(repo, "a.md", "a\n")
    assert repo.commit_paths(["a.md"], "noop", author=AUTHOR) is None
    assert repo.is_clean()


def test_commits_from_one_open_repo_keep_what_another_git_process_did_to_the_index(repo: GitRepo) -> None:
    """The index is read again only when its file changed: what `git add` and `git rm --cached`
    run between two commits of a long-lived repository object did stays done."""
    commit(repo, "a.md", "a\n")
    commit(repo, "gone.md", "g\n")
    write(repo, "theirs.md", "staged by a person\n")
    git(repo.root, "add", "theirs.md")
    git(repo.root, "rm", "-q", "--cached", "gone.md")
    commit(repo, "b.md", "b\n")
    assert repo.list_files_at("HEAD") == ["a.md", "b.md", "gone.md"]
    staged = git(repo.root, "status", "--porcelain").splitlines()
    assert "A  theirs.md" in staged and "D  gone.md" in staged
    assert not [line for line in staged if line.endswith(("a.md", " b.md"))]


def test_a_stage_that_failed_leaves_nothing_of_it_in_the_next_commits_index(
        repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths added in memory by a commit whose index write failed are not written by the next one."""
    import pygit2

    commit(repo, "a.md", "a\n")
    write(repo, "a.md", "changed but never committed\n")
    real_write = pygit2.Index.write

    def refuse(self: pygit2.Index) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pygit2.Index, "write", refuse)
    with pytest.raises(GitLayerError, match="No space left"):
        repo.commit_paths(["a.md"], "fails", author=AUTHOR)
    monkeypatch.setattr(pygit2.Index, "write", real_write)
    commit(repo, "b.md", "b\n")
    assert git(repo.root, "diff", "--cached", "--name-only") == ""
    assert git(repo.root, "status", "--porcelain").splitlines() == [" M a.md"]
    assert repo.read_file_at("HEAD", "a.md") == b"a\n"

def test_commit_author_comes_from_repo_config_then_fallback(repo: GitRepo) -> None:
    repo.set_config("user.name", "Config Person")
    repo.set_config("user.email", "config@example.com")
    write(repo, "a.md", "a\n")
    repo.commit_paths(["a.md"], "m")
    assert repo.log()[0].author == "Config Person <config@example.com>"


def test_commit_paths_refuses_paths_outside_the_repo(repo: GitRepo) -> None:
    for bad in ("../escape.md", "/etc/passwd", ".git/config", ""):
        with pytest.raises(InvalidInputError):
            repo.commit_paths([bad], "x", author=AUTHOR)


# -- status, diff, history ----------------------------------------------------------------------


def test_dirty_paths_sees_untracked_modified_deleted_staged_not_ignored(repo: GitRepo) -> None:
    write(repo, ".gitignore", "index/\n*.tmp\n")
    commit(repo, ".gitignore", "index/\n*.tmp\n")
    commit(repo, "keep.md", "k\n")
    commit(repo, "mod.md", "m\n")
    commit(repo, "del.md", "d\n")
    assert repo.is_clean()
    write(repo, "mod.md", "changed\n")
    (repo.root / "del.md").unlink()
    write(repo, "newdir/deeper/new.md", "n\n")
    write(repo, "index/whoosh.seg", "ignored\n")
    write(repo, "scratch.tmp", "ignored\n")
    write(repo, "staged.md", "s\n")
    subprocess.run(["git", "-C", str(repo.root), "add", "staged.md"], check=True)
    expected = ["del.md", "mod.md", "newdir/deeper/new.md", "staged.md"]
    assert repo.dirty_paths() == expected
    assert repo.dirty_paths(under=["newdir"]) == ["newdir/deeper/new.md"]
    assert repo.dirty_paths(under=["new"]) == []
    assert repo.dirty_paths(under=["mod.md", "staged.md"]) == ["mod.md", "staged.md"]
    assert not repo.is_clean()


def test_changed_between_commits(repo: GitRepo) -> None:
    one = commit(repo, "a.md", "a\n")
    commit(repo, "b/c.md", "c\n")
    (repo.root / "a.md").unlink()
    three = repo.commit_paths(["a.md"], "rm", author=AUTHOR)
    assert three is not None
    assert repo.changed_between(None, one) == ["a.md"]
    assert repo.changed_between(one, three) == ["a.md", "b/c.md"]
    assert repo.changed_between(three, three) == []
    assert repo.changed_between(None, three) == ["b/c.md"]


def test_read_list_and_log(repo: GitRepo) -> None:
    one = commit(repo, "global/semantic/git.md", "v1\n")
    two = commit(repo, "global/semantic/git.md", "v2\n")
    commit(repo, "workspaces/w/state.md", "s\n")
    assert repo.read_file_at(one, "global/semantic/git.md") == b"v1\n"
    assert repo.read_file_at("HEAD", "global/semantic/git.md") == b"v2\n"
    assert repo.read_file_at("HEAD", "global/semantic") is None
    assert repo.read_file_at("HEAD", "nope.md") is None
    assert repo.list_files_at("HEAD") == ["global/semantic/git.md", "workspaces/w/state.md"]
    assert repo.list_files_at("HEAD", "workspaces/") == ["workspaces/w/state.md"]
    assert repo.list_files_at("HEAD", "absent") == []
    assert [c.oid for c in repo.log(path="global/semantic/git.md")] == [two, one]
    assert len(repo.log(limit=2)) == 2
    with pytest.raises(NotFoundError):
        repo.read_file_at("no-such-rev", "x")


def test_config_roundtrip_is_repo_local(repo: GitRepo) -> None:
    assert repo.get_config("gitmem.test") is None
    repo.set_config("gitmem.test", "yes")
    assert repo.get_config("gitmem.test") == "yes"
    assert "test = yes" in (repo.root / ".git" / "config").read_text()
    repo.unset_config("gitmem.test")
    repo.unset_config("gitmem.test")
    assert repo.get_config("gitmem.test") is None


# -- redaction and remote URLs ------------------------------------------------------------------


def test_redact_hides_url_credentials_and_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "fetch https://user:s3cr3t@example.com/x.git failed"
    assert redact(text) == "fetch https://***@example.com/x.git failed"
    assert "tok" not in redact("ssh://tok@host/x and http://a:b@c:1/")
    monkeypatch.setenv("GITMEM_GIT_TOKEN", "ghp_envtoken123")
    assert redact("error: ghp_envtoken123 refused") == "error: *** refused"
    assert redact("value abcdef here", tokens=["abcdef"]) == "value *** here"
    assert redact("plain text") == "plain text"


def test_strip_credentials() -> None:
    assert strip_credentials("https://u:tok@h.example/r.git") == ("https://u@h.example/r.git", "tok")
    assert strip_credentials("https://h.example/r.git") == ("https://h.example/r.git", None)
    assert strip_credentials("/srv/r.git") == ("/srv/r.git", None)


def test_set_remote_never_stores_a_token(repo: GitRepo) -> None:
    repo.set_remote("https://x-access-token:ghp_SECRET42@example.com/mem.git")
    assert repo.remote_url() == "https://x-access-token@example.com/mem.git"
    assert "ghp_SECRET42" not in (repo.root / ".git" / "config").read_text()
    assert "ghp_SECRET42" not in redact("oops ghp_SECRET42")
    repo.set_remote("https://example.com/other.git")
    assert repo.remote_url() == "https://example.com/other.git"
    assert repo.remote_url("upstream") is None


# -- sync plumbing against a bare remote on disk ------------------------------------------------


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return make_bare(tmp_path / "remote.git")


def test_two_clones_push_fetch_reject_merge_fast_forward(tmp_path: Path, remote: Path) -> None:
    a = GitRepo.init(tmp_path / "a")
    a.set_remote(str(remote))
    base = commit(a, "shared.md", "base\n")
    a.push()
    assert a.fetch() == base

    b = GitRepo.clone(str(remote), tmp_path / "b")
    assert b.head_oid() == base and b.branch() == "main"
    b_tip = commit(b, "from-b.md", "b\n")
    b.push()

    a_tip = commit(a, "shared.md", "edited by a\n")
    with pytest.raises(PushRejectedError):
        a.push()

    theirs = a.fetch()
    assert theirs == b_tip
    assert a.ahead_behind(a_tip, theirs) == (1, 1)
    assert a.merge_base(a_tip, theirs) == base
    merged = a.commit_merge(
        {"from-b.md": b"b\n", "shared.md": b"merged\n"}, "sync: merge", [a_tip, theirs]
    )
    assert a.head_oid() == merged
    assert a.log(limit=1)[0].parents == [a_tip, theirs]
    assert (a.root / "from-b.md").read_text() == "b\n"
    assert (a.root / "shared.md").read_text() == "merged\n"
    assert a.is_clean()
    a.push()

    target = b.fetch()
    assert target == merged
    assert b.ahead_behind(b_tip, merged) == (0, 2)
    b.fast_forward(merged)
    assert b.head_oid() == merged
    assert (b.root / "shared.md").read_text() == "merged\n"
    assert b.is_clean()


def test_commit_merge_deletes_and_keeps_index_in_step(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "s")
    commit(repo, "a/x.md", "x\n")
    head = commit(repo, "b.md", "b\n")
    oid = repo.commit_merge({"a/x.md": None, "c.md": b"c\n"}, "merge", [head])
    assert repo.list_files_at(oid) == ["b.md", "c.md"]
    assert not (repo.root / "a").exists()
    assert repo.is_clean()
    assert repo.commit_paths(["c.md", "a/x.md"], "noop", author=AUTHOR) is None


def test_fast_forward_from_unborn_and_fetch_of_missing_branch(tmp_path: Path, remote: Path) -> None:
    a = GitRepo.init(tmp_path / "a")
    a.set_remote(str(remote))
    assert a.fetch() is None  # empty remote: nothing to track yet
    tip = commit(a, "x/y.md", "y\n")
    a.push()
    c = GitRepo.init(tmp_path / "c")
    c.set_remote("file://" + str(remote))
    assert c.fetch() == tip
    c.fast_forward(tip)
    assert c.head_oid() == tip and (c.root / "x" / "y.md").read_text() == "y\n"
    assert c.is_clean()
    assert c.fetch(branch="nope") is None


def test_fast_forward_refuses_a_non_descendant(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "s")
    first = commit(repo, "a.md", "1\n")
    commit(repo, "a.md", "2\n")
    with pytest.raises(GitLayerError, match="cannot fast-forward"):
        repo.fast_forward(first)


def test_push_and_fetch_need_a_configured_remote(repo: GitRepo) -> None:
    commit(repo, "a.md", "a\n")
    with pytest.raises(SyncError, match="no git remote"):
        repo.fetch()
    with pytest.raises(SyncError, match="no git remote"):
        repo.push()


def test_missing_local_remote_is_a_clear_sync_error(tmp_path: Path, repo: GitRepo) -> None:
    commit(repo, "a.md", "a\n")
    repo.set_remote(str(tmp_path / "nowhere.git"))
    with pytest.raises(SyncError, match="not found") as err:
        repo.fetch()
    assert "\n" not in str(err.value)


# -- over HTTP (loopback git http-backend) ------------------------------------------------------


@pytest.fixture
def srv(tmp_path: Path) -> Path:
    root = tmp_path / "srv"
    root.mkdir()
    make_bare(root / "mem.git")
    return root


def test_http_push_fetch_clone_without_token(tmp_path: Path, srv: Path) -> None:
    with serve_git_http(srv) as base:
        url = base + "mem.git"
        a = GitRepo.init(tmp_path / "a")
        a.set_remote(url)
        tip = commit(a, "a.md", "a\n")
        a.push()
        assert a.fetch() == tip
        b = GitRepo.clone(url, tmp_path / "b")
        assert b.read_file_at("HEAD", "a.md") == b"a\n"


def test_http_with_token_from_env_and_from_private_file(
    tmp_path: Path, srv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "tok-7f3a9c2e"
    with serve_git_http(srv, token=token) as base:
        url = base + "mem.git"
        monkeypatch.setenv("GITMEM_GIT_TOKEN", token)
        a = GitRepo.init(tmp_path / "a")
        a.set_remote(url)
        tip = commit(a, "a.md", "a\n")
        a.push()
        monkeypatch.delenv("GITMEM_GIT_TOKEN")

        token_file = tmp_path / "git-token"
        token_file.write_text(token + "\n")
        os.chmod(token_file, 0o600)
        b = GitRepo.clone(url, tmp_path / "b", token_file=token_file)
        assert b.head_oid() == tip
        commit(b, "b.md", "b\n")
        b.push()
        assert GitRepo(tmp_path / "a", token_file=token_file).fetch() == b.head_oid()

        os.chmod(token_file, 0o644)
        with pytest.raises(AuthError, match="chmod 600") as err:
            b.fetch()
        assert token not in str(err.value)


def test_http_wrong_or_missing_token_is_auth_error_without_secret(
    tmp_path: Path, srv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve_git_http(srv, token="the-right-one") as base:
        repo = GitRepo.init(tmp_path / "a")
        commit(repo, "a.md", "a\n")
        repo.set_remote(base + "mem.git")
        with pytest.raises(AuthError, match="requires authentication"):
            repo.fetch()
        monkeypatch.setenv("GITMEM_GIT_TOKEN", "wrong-token-xyz")
        for action in (repo.fetch, repo.push):
            with pytest.raises(AuthError, match="authentication refused") as err:
                action()
            assert "wrong-token-xyz" not in str(err.value)
            assert "\n" not in str(err.value)
        with pytest.raises(AuthError):
            GitRepo.clone(base.replace("http://", "http://u:wrong-token-xyz@") + "mem.git", tmp_path / "c")


def test_http_missing_repository_and_unreachable_port(tmp_path: Path, srv: Path) -> None:
    repo = GitRepo.init(tmp_path / "a")
    commit(repo, "a.md", "a\n")
    with serve_git_http(srv) as base:
        repo.set_remote(base + "absent.git")
        with pytest.raises(SyncError, match="not found"):
            repo.fetch()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    repo.set_remote(f"http://user:hunter2pass@127.0.0.1:{port}/mem.git")
    with pytest.raises(GitLayerError, match="cannot reach remote") as err:
        repo.fetch()
    message = str(err.value)
    assert "\n" not in message and "hunter2pass" not in message


def test_server_helper_stops_cleanly(srv: Path) -> None:
    with serve_git_http(srv) as base:
        port = int(base.rstrip("/").rsplit(":", 1)[1])
    with socket.socket() as sock, pytest.raises(OSError):
        sock.settimeout(1)
        sock.connect(("127.0.0.1", port))


@pytest.fixture
def many_files_repo(tmp_path: Path) -> Iterator[GitRepo]:
    repo = GitRepo.init(tmp_path / "big")
    paths = [f"d{i % 30}/f{i}.md" for i in range(3000)]
    for p in paths:
        write(repo, p, f"{p}\n")
    repo.commit_paths(paths, "bulk", author=AUTHOR)
    yield repo


def test_commit_one_file_in_a_large_repo_touches_only_that_file(many_files_repo: GitRepo) -> None:
    repo = many_files_repo
    before = repo.head_oid()
    oid = commit(repo, "d3/f3.md", "changed\n")
    assert repo.changed_between(before, oid) == ["d3/f3.md"]
    assert len(repo.list_files_at(oid)) == 3000
    assert repo.is_clean()


def test_credentials_cap_retries_and_offer_ssh_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gitmem.git.credentials import GitCredentials

    userpass, ssh_key = 1, 2  # libgit2 credential type bits
    monkeypatch.setenv("GITMEM_GIT_TOKEN", "tok-abc")
    creds = GitCredentials("https://example.com/m.git")
    for _ in range(3):
        cred = creds.credentials("https://example.com/m.git", None, userpass)  # type: ignore[arg-type]
        assert cred.credential_tuple == ("x-access-token", "tok-abc")
    with pytest.raises(AuthError, match="authentication refused") as err:
        creds.credentials("https://example.com/m.git", None, userpass)  # type: ignore[arg-type]
    assert "tok-abc" not in str(err.value)

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_ed25519").write_text("dummy")
    ssh = GitCredentials("ssh://git@example.com/m.git")
    cred = ssh.credentials("ssh://git@example.com/m.git", "git", ssh_key)  # type: ignore[arg-type]
    parts = list(cred.credential_tuple)
    assert parts[0] == "git" and parts[2] == str(tmp_path / ".ssh" / "id_ed25519")
    with pytest.raises(AuthError, match="no usable SSH key"):
        ssh.credentials("ssh://git@example.com/m.git", "git", ssh_key)  # type: ignore[arg-type]


def test_one_status_answers_once_until_a_write(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    commit(repo, "a.md", "a\n")
    with repo.one_status():
        write(repo, "b.md", "b\n")
        assert repo.dirty_paths() == ["b.md"]
        write(repo, "c.md", "c\n")
        assert repo.dirty_paths() == ["b.md"]  # the read's one look
        repo.commit_paths(["b.md"], "add b", author=AUTHOR)
        assert repo.dirty_paths() == ["c.md"]  # a write drops it: asked again after
    write(repo, "d.md", "d\n")
    assert repo.dirty_paths() == ["c.md", "d.md"]  # outside, every call asks git


def test_the_status_of_one_path_is_what_libgit2_says_in_every_state(repo: GitRepo) -> None:
    """status_of answers a file just committed without libgit2's status of one path; in every
    other state (edited at the same size, made executable, staged, a link, untracked, removed)
    it says what libgit2 says."""
    import stat as st

    commit(repo, "global/semantic/a.md", "# A\n\nfirst\n")
    commit(repo, "global/semantic/b.md", "# B\n\nsecond\n")

    def libgit2(path: str) -> int | None:
        try:
            flags = int(repo._repo.status_file(path))
        except KeyError:
            return None
        return None if flags == 0 else flags

    def check(path: str) -> None:
        assert repo.status_of(path) == libgit2(path), path

    check("global/semantic/a.md")
    assert repo._as_committed("global/semantic/a.md")  # the quick answer, not libgit2's
    (repo.root / "global/semantic/a.md").write_text("# A\n\nfirsT\n")  # same size, new bytes
    check("global/semantic/a.md")
    assert not repo._as_committed("global/semantic/a.md")
    path = repo.root / "global/semantic/b.md"
    path.chmod(path.stat().st_mode | st.S_IXUSR)
    check("global/semantic/b.md")
    path.chmod(path.stat().st_mode & ~st.S_IXUSR)
    check("global/semantic/b.md")
    write(repo, "global/semantic/c.md", "# C\n")
    check("global/semantic/c.md")  # untracked
    git(repo.root, "add", "global/semantic/c.md")
    check("global/semantic/c.md")  # staged, not committed
    (repo.root / "global/semantic/a.md").write_text("# A\n\nfirst\n")
    git(repo.root, "add", "global/semantic/a.md")
    (repo.root / "global/semantic/a.md").write_text("# A\n\nthird\n")
    check("global/semantic/a.md")  # index and work tree both differ from HEAD
    os.unlink(repo.root / "global/semantic/b.md")
    os.symlink("a.md", repo.root / "global/semantic/b.md")
    check("global/semantic/b.md")  # a link where a file was
    os.unlink(repo.root / "global/semantic/b.md")
    check("global/semantic/b.md")  # removed


def test_staging_waits_for_an_index_lock_another_git_process_holds(repo: GitRepo) -> None:
    """`stage_paths` (resolve during a plain git merge) stages under git's index lock, as a
    commit does: while another git process holds .git/index.lock it waits and tries again, and
    what it stages lands once the lock is gone; nothing is staged while the lock is held."""
    import threading
    import time

    commit(repo, "notes/a.md", "first\n")
    write(repo, "notes/a.md", "second\n")
    lock = repo.git_dir / "index.lock"
    lock.write_bytes(b"")  # what a running `git add` holds
    errors: list[BaseException] = []

    def stage() -> None:
        try:
            repo.stage_paths(["notes/a.md"])
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            errors.append(exc)

    worker = threading.Thread(target=stage)
    worker.start()
    time.sleep(0.1)
    assert git(repo.root, "diff", "--cached", "--name-only").strip() == ""  # held: not staged yet
    lock.unlink()
    worker.join(timeout=30)
    assert not worker.is_alive() and errors == []
    assert git(repo.root, "diff", "--cached", "--name-only").strip() == "notes/a.md"


def test_staging_gives_up_on_an_index_lock_that_stays_with_one_line(repo: GitRepo) -> None:
    commit(repo, "notes/a.md", "first\n")
    write(repo, "notes/a.md", "second\n")
    (repo.git_dir / "index.lock").write_bytes(b"")
    with pytest.raises(GitLayerError, match="lock"):
        repo.stage_paths(["notes/a.md"])
    assert git(repo.root, "diff", "--cached", "--name-only").strip() == ""
