"""The network transport through the git binary: the user's own credential helpers, the store's
token through gitmem's helper (never on a command line), url.<base>.insteadOf, ssh host aliases,
time-outs, no prompt without a TTY, ls-remote, and the libgit2 fallback.

Remotes are a loopback `git http-backend` that requires HTTP Basic auth (tests/gitserver.py) and,
for ssh, a `core.sshCommand` in the test's own git config that stands in for ssh: it accepts one
host alias, `gh-work`, and runs git-upload-pack / git-receive-pack on a folder of this machine
(no sshd needed). Git config lives in the test's HOME (conftest), never the developer's.
"""

from __future__ import annotations

import os
import pty
import select
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmem.errors import AuthError, SyncError
from gitmem.git import credhelper, gitnet
from gitmem.git.credentials import map_git_error
from gitmem.git.repo import GitRepo
from gitserver import serve_git_http, serve_silence
from support import git

TOKEN = "tok-4e1f0a9b77"
AUTHOR = ("Tester", "tester@example.com")


@pytest.fixture(autouse=True)
def _fresh_detection(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test decides the transport again (tests change PATH and GITMEM_GIT_TRANSPORT)."""
    monkeypatch.delenv(gitnet.TRANSPORT_ENV, raising=False)
    monkeypatch.delenv(gitnet.TIMEOUT_ENV, raising=False)
    gitnet.git_executable.cache_clear()
    yield
    gitnet.git_executable.cache_clear()


def global_config(*args: str) -> None:
    """`git config --global ...` into the test's HOME."""
    git(Path.home(), "config", "--global", *args)


def commit(repo: GitRepo, rel: str, text: str) -> str:
    path = repo.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    oid = repo.commit_paths([rel], f"edit {rel}", author=AUTHOR)
    assert oid is not None
    return oid


@pytest.fixture
def srv(tmp_path: Path) -> Path:
    root = tmp_path / "srv"
    root.mkdir()
    git(tmp_path, "init", "--bare", "-q", "-b", "main", str(root / "mem.git"))
    return root


def push_fetch_clone(tmp_path: Path, url: str, *, token_file: Path | None = None) -> None:
    """One machine pushes and fetches, a second clones and pushes back, the first fetches it."""
    a = GitRepo.init(tmp_path / "a", token_file=token_file)
    a.set_remote(url)
    tip = commit(a, "a.md", "from a\n")
    a.push()
    assert a.fetch() == tip
    b = GitRepo.clone(url, tmp_path / "b", token_file=token_file)
    assert b.head_oid() == tip
    b_tip = commit(b, "b.md", "from b\n")
    b.push()
    assert a.fetch() == b_tip


# -- credentials --------------------------------------------------------------------------------
def test_a_credential_helper_configured_only_in_git_config_is_used(tmp_path: Path, srv: Path) -> None:
    with serve_git_http(srv, token=TOKEN) as base:
        creds = tmp_path / "git-credentials"
        creds.write_text(base.replace("http://", f"http://alice:{TOKEN}@").rstrip("/") + "\n")
        global_config("credential.helper", f"store --file {creds}")
        push_fetch_clone(tmp_path, base + "mem.git")
        users = {r.user for r in base.requests if r.authorized}
        assert users == {"alice"}  # every authorized request came with the helper's credential
        assert not (tmp_path / "a" / "state").exists()

        os.environ[gitnet.TRANSPORT_ENV] = "pygit2"  # libgit2 knows nothing of git's helpers
        try:
            with pytest.raises(AuthError, match="requires authentication"):
                GitRepo(tmp_path / "a").fetch()
        finally:
            del os.environ[gitnet.TRANSPORT_ENV]


def test_the_stores_token_wins_over_a_users_helper_and_is_never_stored_in_it(
        tmp_path: Path, srv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with serve_git_http(srv, token=TOKEN) as base:
        creds = tmp_path / "git-credentials"
        stale = base.replace("http://", "http://alice:an-old-password@").rstrip("/") + "\n"
        creds.write_text(stale)
        global_config("credential.helper", f"store --file {creds}")
        monkeypatch.setenv("GITMEM_GIT_TOKEN", TOKEN)
        push_fetch_clone(tmp_path, base + "mem.git")
        assert creds.read_text() == stale  # the user's helper was neither asked nor given anything
        assert {r.user for r in base.requests if r.authorized} == {"x-access-token"}


@pytest.fixture
def git_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put a `git` first on PATH that logs its arguments and environment, then runs the real one."""
    real = gitnet.git_executable()
    assert real
    shim_dir = tmp_path / "shim"
    shim_dir.mkdir()
    log = tmp_path / "git-calls.log"
    shim = shim_dir / "git"
    shim.write_text(f'#!/bin/sh\nprintf "argv: %s\\n" "$*" >> "{log}"\nenv >> "{log}"\n'
                    f'exec "{real}" "$@"\n')
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim_dir}{os.pathsep}{os.environ['PATH']}")
    gitnet.git_executable.cache_clear()
    return log


def test_a_token_file_reaches_git_only_through_the_helper(
        tmp_path: Path, srv: Path, git_log: Path) -> None:
    token_file = tmp_path / "git-token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    with serve_git_http(srv, token=TOKEN) as base:
        push_fetch_clone(tmp_path, base + "mem.git", token_file=token_file)
        assert {r.user for r in base.requests if r.authorized} == {"x-access-token"}
    calls = git_log.read_text()
    assert calls.count("argv: ") >= 5 and "credential.helper=" in calls
    assert TOKEN not in calls  # not in any argument, not in git's environment
    for repo in ("a", "b"):
        assert TOKEN not in (tmp_path / repo / ".git" / "config").read_text()


def test_a_token_in_a_clone_url_is_used_once_and_never_stored(tmp_path: Path, srv: Path,
                                                               git_log: Path) -> None:
    secret = "p@ss/w0rd"  # percent-encoded in the URL, as git itself would decode it
    with serve_git_http(srv, token=secret) as base:
        seed = tmp_path / "seed"
        git(tmp_path, "init", "-q", "-b", "main", str(seed))
        git(seed, "commit", "-q", "--allow-empty", "-m", "seed")
        url = base.replace("http://", "http://me:p%40ss%2Fw0rd@") + "mem.git"
        git(seed, "-c", "credential.helper=", "push", "-q", url, "main")
        git_log.write_text("")  # what the seeding push logged is not gitmem's doing
        cloned = GitRepo.clone(url, tmp_path / "c")
        assert cloned.remote_url() == base.replace("http://", "http://me@") + "mem.git"
        assert [r.user for r in base.requests if r.authorized][-1] == "me"
    assert secret not in git_log.read_text() and "p%40ss" not in git_log.read_text()
    assert secret not in (tmp_path / "c" / ".git" / "config").read_text()


def test_the_helper_answers_only_for_the_remotes_host(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {credhelper.TOKEN_ENV: TOKEN, credhelper.HOST_ENV: "https://git.example.com"}
    asked = {"protocol": "https", "host": "git.example.com"}
    assert credhelper.answer("get", asked, env) == f"username=x-access-token\npassword={TOKEN}\n"
    assert credhelper.answer("get", {**asked, "username": "me"}, env).startswith("username=me\n")
    assert credhelper.answer("get", {**asked, "host": "evil.example"}, env) == ""  # a redirect
    assert credhelper.answer("store", asked, env) == ""
    assert credhelper.answer("get", {**asked, "protocol": "ssh"}, env) == ""
    assert credhelper.answer("get", asked, {credhelper.HOST_ENV: "https://git.example.com"}) == ""


def test_a_group_or_world_readable_token_file_is_refused(tmp_path: Path, srv: Path) -> None:
    token_file = tmp_path / "git-token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o644)
    with serve_git_http(srv, token=TOKEN) as base:
        repo = GitRepo.init(tmp_path / "a", token_file=token_file)
        repo.set_remote(base + "mem.git")
        with pytest.raises(AuthError, match="chmod 600") as err:
            repo.fetch()
        assert TOKEN not in str(err.value)
        assert base.requests == []  # refused before anything was sent
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o644


# -- insteadOf and ssh aliases ------------------------------------------------------------------
def test_an_insteadof_rewrite_is_followed_and_gets_the_token(
        tmp_path: Path, srv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with serve_git_http(srv, token=TOKEN) as base:
        global_config(f"url.{base}.insteadOf", "loop:")
        monkeypatch.setenv("GITMEM_GIT_TOKEN", TOKEN)
        push_fetch_clone(tmp_path, "loop:mem.git")
        repo = GitRepo(tmp_path / "a")
        assert repo.remote_url() == "loop:mem.git"
        assert repo.effective_url() == base + "mem.git"
        assert sorted(repo.ls_remote()) == ["HEAD", "refs/heads/main"]
        assert {r.user for r in base.requests if r.authorized} == {"x-access-token"}


FAKE_SSH = """#!/bin/sh
# Stands in for ssh: knows one host alias and runs git's command on a local folder.
if (exec 3</dev/tty) 2>/dev/null; then t=yes; else t=no; fi
printf 'host=%s tty=%s cmd=%s\\n' "$1" "$t" "$2" >> "{log}"
[ "$1" = gh-work ] || {{ echo "ssh: Could not resolve hostname $1" >&2; exit 255; }}
cd "{base}" || exit 1
cmd="$2"
exec sh -c "git ${{cmd#git-}}"
"""


@pytest.fixture
def ssh_alias(tmp_path: Path) -> Path:
    """core.sshCommand that serves the alias `gh-work` from tmp/sshbase; returns its log file."""
    base = tmp_path / "sshbase"
    (base / "me").mkdir(parents=True)
    git(tmp_path, "init", "--bare", "-q", "-b", "main", str(base / "me" / "mem.git"))
    log = tmp_path / "ssh.log"
    script = tmp_path / "fake-ssh"
    script.write_text(FAKE_SSH.format(log=log, base=base))
    script.chmod(0o755)
    global_config("core.sshCommand", str(script))
    global_config("ssh.variant", "simple")
    return log


def test_an_ssh_host_alias_goes_through_the_users_ssh_command(tmp_path: Path, ssh_alias: Path) -> None:
    push_fetch_clone(tmp_path, "gh-work:me/mem.git")
    calls = ssh_alias.read_text().splitlines()
    assert {c.split()[0] for c in calls} == {"host=gh-work"}
    assert any("git-receive-pack 'me/mem.git'" in c for c in calls)
    assert any("git-upload-pack 'me/mem.git'" in c for c in calls)
    assert all("tty=no" in c for c in calls)  # no terminal for ssh to prompt on
    repo = GitRepo(tmp_path / "a")
    repo.set_remote("gh-other:me/mem.git")
    with pytest.raises(SyncError, match="cannot reach remote gh-other:me/mem.git") as err:
        repo.fetch()
    assert "\n" not in str(err.value)


# -- no hang, no prompt -------------------------------------------------------------------------
def test_a_remote_that_never_answers_times_out_with_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = GitRepo.init(tmp_path / "a")
    commit(repo, "a.md", "a\n")
    monkeypatch.setenv(gitnet.TIMEOUT_ENV, "1")
    with serve_silence() as base:
        repo.set_remote(base + "mem.git")
        for action in (repo.fetch, repo.push):
            with pytest.raises(SyncError, match=r"no answer from remote .* within 1 s") as err:
                action()
            # The message is gitmem's own timeout's: git's minutes-long wait was cut short.
            assert "GITMEM_GIT_TIMEOUT" in str(err.value) and "\n" not in str(err.value)


CHILD = """
import sys
from gitmem.git.repo import GitRepo
from gitmem.errors import GitmemError
repo = GitRepo(sys.argv[1])
for url in sys.argv[2:]:
    repo.set_remote(url)
    try:
        repo.fetch()
        print("fetched", url)
    except GitmemError as exc:
        print("error:", exc)
"""


def test_no_prompt_on_a_controlling_terminal_when_stdin_is_not_one(
        tmp_path: Path, srv: Path, ssh_alias: Path) -> None:
    """An agent's shell: a terminal is there, nobody answers it. Git must fail, never wait."""
    GitRepo.init(tmp_path / "a")
    with serve_git_http(srv, token=TOKEN) as base:
        pid, master = pty.fork()
        if pid == 0:  # the child: the pty is its controlling terminal and stdout; stdin is not
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
            os.execv(sys.executable, [sys.executable, "-c", CHILD, str(tmp_path / "a"),
                                      base + "mem.git", "gh-work:me/mem.git"])
        output = b""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1)
            if not ready:
                continue
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
        else:
            os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(master)
    text = output.decode(errors="replace")
    assert "Username for" not in text and "Password for" not in text
    assert "error: remote" in text and "requires authentication" in text
    assert "fetched gh-work:me/mem.git" in text
    assert "tty=no" in ssh_alias.read_text()


def test_with_a_terminal_git_asks_as_git_push_would(tmp_path: Path, srv: Path) -> None:
    GitRepo.init(tmp_path / "a")
    with serve_git_http(srv, token=TOKEN) as base:
        pid, master = pty.fork()
        if pid == 0:  # stdin, stdout and stderr are the terminal: a person is there
            os.execv(sys.executable, [sys.executable, "-c", CHILD, str(tmp_path / "a"),
                                      base + "mem.git"])
        output = b""
        answers = [(b"Username for", b"me\n"), (b"Password for", TOKEN.encode() + b"\n")]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1)
            if not ready:
                continue
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
            if answers and answers[0][0] in output:
                os.write(master, answers.pop(0)[1])
        else:
            os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(master)
        assert {r.user for r in base.requests if r.authorized} == {"me"}
    text = output.decode(errors="replace")
    assert not answers and "fetched" in text
    assert TOKEN not in text  # the password prompt does not echo


# -- push refusals, ls-remote, errors -----------------------------------------------------------
def test_a_push_refused_by_a_server_hook_is_not_retried_as_a_race(tmp_path: Path) -> None:
    bare = tmp_path / "hooked.git"
    git(tmp_path, "init", "--bare", "-q", "-b", "main", str(bare))
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'memory is read-only today' >&2\nexit 1\n")
    hook.chmod(0o755)
    repo = GitRepo.init(tmp_path / "a")
    repo.set_remote(str(bare))
    commit(repo, "a.md", "a\n")
    from gitmem.git.repo import PushRejectedError

    with pytest.raises(SyncError, match="pre-receive hook declined") as err:
        repo.push()
    assert not isinstance(err.value, PushRejectedError)


def test_ls_remote_lists_refs_without_fetching(tmp_path: Path, srv: Path) -> None:
    with serve_git_http(srv, token=TOKEN) as base:
        repo = GitRepo.init(tmp_path / "a")
        repo.set_remote(base + "mem.git")
        with pytest.raises(AuthError, match="requires authentication"):
            repo.ls_remote()
        os.environ["GITMEM_GIT_TOKEN"] = TOKEN
        try:
            assert repo.ls_remote() == {}
            tip = commit(repo, "a.md", "a\n")
            repo.push()
            assert repo.ls_remote()["refs/heads/main"] == tip
            other = GitRepo.clone(base + "mem.git", tmp_path / "other")
            newer = commit(other, "b.md", "b\n")
            other.push()
            assert repo.ls_remote(base + "mem.git")["refs/heads/main"] == newer
        finally:
            del os.environ["GITMEM_GIT_TOKEN"]
        tracking = git(repo.root, "rev-parse", "refs/remotes/origin/main").strip()
        assert tracking == tip  # nothing was fetched


@pytest.mark.parametrize(("stderr", "kind", "needle"), [
    ("fatal: could not read Username for 'https://h.example': terminal prompts disabled",
     AuthError, "requires authentication"),
    ("remote: HTTP Basic: Access denied\nfatal: Authentication failed for 'https://h.example/r/'",
     AuthError, "authentication refused"),
    ("git@h.example: Permission denied (publickey).\nfatal: Could not read from remote repository."
     "\n\nPlease make sure you have the correct access rights\nand the repository exists.",
     AuthError, "authentication refused"),
    ("remote: Permission to me/r.git denied to you.\nfatal: unable to access 'https://h.example/"
     "me/r.git/': The requested URL returned error: 403", AuthError, "authentication refused"),
    ("Host key verification failed.\nfatal: Could not read from remote repository.",
     SyncError, "could not verify the host key"),
    ("fatal: unable to access 'https://h.example/r/': Could not resolve host: h.example",
     SyncError, "cannot reach remote"),
    ("fatal: repository 'https://h.example/r/' not found", SyncError, "not found"),
    ("error: inflate: data stream error (incorrect header check)\nfatal: loose object 0123 is "
     "corrupt", SyncError, "is damaged"),
])
def test_gits_errors_become_one_redacted_line(stderr: str, kind: type, needle: str) -> None:
    error = map_git_error(stderr + f"\nhint: https://u:{TOKEN}@h.example", "fetch",
                          f"https://u:{TOKEN}@h.example/r")
    assert type(error) is kind and needle in str(error)
    assert "\n" not in str(error) and TOKEN not in str(error) and "hint" not in str(error)


# -- the fallback -------------------------------------------------------------------------------
def test_without_a_git_binary_libgit2_carries_the_token(
        tmp_path: Path, srv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    gitnet.git_executable.cache_clear()
    assert gitnet.git_executable() is None and not gitnet.use_git_binary()
    monkeypatch.setenv(gitnet.TRANSPORT_ENV, "git")
    with pytest.raises(SyncError, match="no git binary"):
        gitnet.use_git_binary()
    monkeypatch.undo()
    gitnet.git_executable.cache_clear()

    monkeypatch.setenv(gitnet.TRANSPORT_ENV, "pygit2")
    monkeypatch.setenv("GITMEM_GIT_TOKEN", TOKEN)
    calls: list[object] = []
    monkeypatch.setattr(gitnet, "run", lambda *a, **k: calls.append(a))
    with serve_git_http(srv, token=TOKEN) as base:
        push_fetch_clone(tmp_path, base + "mem.git")
        assert base.requests and all(r.user in (None, "x-access-token") for r in base.requests)
    assert calls == []  # no git process was started for the network
