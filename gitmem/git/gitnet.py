"""Running the git binary for network work (fetch, push, clone, ls-remote, credential).

Git does the talking, so whatever `git push` reaches from this machine gitmem reaches too: the
user's credential helpers, `~/.ssh/config` (aliases, IdentityFile, ProxyJump), the ssh agent,
`url.<base>.insteadOf`, proxies. What gitmem adds:

- the store's own token (GITMEM_GIT_TOKEN or state/git-token), when there is one, through
  gitmem's credential helper (credhelper.py) set for this one command with `-c`, never on a
  command line, in a URL or in git config;
- no prompt on a terminal nobody watches: without a TTY on stdin and stderr, git runs with
  GIT_TERMINAL_PROMPT=0 in a session of its own (no controlling terminal, so ssh cannot ask
  either) and fails at once with a message we map to one line;
- a bound on time (GITMEM_GIT_TIMEOUT seconds, default 120): past it the command and its
  children are killed and the caller gets a one-line SyncError;
- English messages (LC_ALL=C) so errors can be recognised, and an environment without the
  variables that would point git at another repository.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shlex
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from gitmem import caller
from gitmem.errors import SyncError
from gitmem.git import credhelper
from gitmem.redaction import redact

TIMEOUT_ENV = "GITMEM_GIT_TIMEOUT"
TRANSPORT_ENV = "GITMEM_GIT_TRANSPORT"  # "git" (default when git exists) or "pygit2"
DEFAULT_TIMEOUT = 120.0
# Variables that point git at a repository other than the one we name (a hook's environment).
_REPO_VARS = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PREFIX", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE",
    "GIT_SHALLOW_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_CONFIG",
    "GIT_INTERNAL_SUPER_PREFIX",
)


@dataclass(frozen=True)
class Token:
    """Where the store's own HTTPS token is: the environment, or a private file."""

    source: str  # "env" | "file"
    path: Path | None = None


@dataclass(frozen=True)
class GitRun:
    """What one git command returned."""

    returncode: int
    stdout: str
    stderr: str


@functools.cache
def git_executable() -> str | None:
    """The git binary on PATH, looked up once per process (None: use the pygit2 fallback)."""
    return shutil.which("git")


def use_git_binary() -> bool:
    """True when network work goes through the git binary (see TRANSPORT_ENV)."""
    wanted = (caller.env(TRANSPORT_ENV) or "").strip().lower()
    if wanted == "pygit2":
        return False
    if wanted == "git" and git_executable() is None:
        raise SyncError(f"{TRANSPORT_ENV}=git but no git binary is on PATH")
    return git_executable() is not None


def interactive() -> bool:
    """True when a person can answer a prompt: stdin and stderr are both terminals."""
    try:
        return caller.isatty(0) and caller.isatty(2)
    except (OSError, ValueError):
        return False


def timeout_seconds() -> float:
    """The bound on one network command (GITMEM_GIT_TIMEOUT, default 120 s)."""
    raw = (caller.env(TIMEOUT_ENV) or "").strip()
    try:
        value = float(raw) if raw else DEFAULT_TIMEOUT
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT


def helper_command() -> str:
    """The `credential.helper` value that runs gitmem's helper with this Python."""
    script = Path(credhelper.__file__).resolve()
    # "!" makes git run it through the shell; -I -S: no environment, no site-packages: fast.
    return f"!{shlex.quote(sys.executable)} -I -S {shlex.quote(str(script))}"


def token_config(token: Token | None) -> list[str]:
    """`-c` options that make gitmem's helper the only credential helper for one command."""
    if token is None:
        return []
    # The empty value empties the list of helpers configured so far (system, global, local):
    # the store's own token wins, and no other helper stores it (`git credential approve`).
    return ["-c", "credential.helper=", "-c", f"credential.helper={helper_command()}"]


def git_env(token: Token | None, host: str | None, *, prompt: bool = True) -> dict[str, str]:
    """The environment of a network git command (prompt=False: never ask anyone anything)."""
    env = {k: v for k, v in caller.environ().items() if k not in _REPO_VARS}
    env["LC_ALL"] = "C"
    env.pop("LANGUAGE", None)
    if not prompt or not interactive():
        env["GIT_TERMINAL_PROMPT"] = "0"
        env.setdefault("GCM_INTERACTIVE", "never")  # Git Credential Manager: no dialog either
    if not prompt:
        env.pop("GIT_ASKPASS", None)
        env.pop("SSH_ASKPASS", None)
    env.pop(credhelper.FILE_ENV, None)
    env.pop(credhelper.HOST_ENV, None)
    if token is not None:
        if token.path is not None:
            # A file named for this command (a token taken out of a URL) wins over the variable.
            env.pop(credhelper.TOKEN_ENV, None)
            env[credhelper.FILE_ENV] = str(token.path)
        if host:
            env[credhelper.HOST_ENV] = host
    return env


def run(cwd: Path, args: list[str], *, action: str, url: str | None, token: Token | None = None,
        host: str | None = None, data: str | None = None, prompt: bool = True) -> GitRun:
    """Run `git [token options] ARGS` in `cwd`, bounded in time; SyncError when it cannot run."""
    git = git_executable() or "git"
    quiet = [] if prompt else ["-c", "core.askPass="]
    argv = [git, *quiet, *token_config(token), *args]
    detach = not prompt or not interactive()
    try:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=git_env(token, host, prompt=prompt), text=True, encoding="utf-8",
            errors="replace", stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=detach,
        )
    except OSError as exc:
        raise SyncError(f"{action}: cannot run git: {exc}") from exc
    limit = timeout_seconds()
    try:
        out, err = proc.communicate(data, timeout=limit)
    except subprocess.TimeoutExpired:
        _kill(proc, detach)
        where = f" {redact(url)}" if url else ""
        raise SyncError(
            f"{action}: no answer from remote{where} within {limit:g} s; check the network or"
            f" raise {TIMEOUT_ENV}"
        ) from None
    except BaseException:
        _kill(proc, detach)
        raise
    return GitRun(proc.returncode, out, err)


def _kill(proc: subprocess.Popen[str], group: bool) -> None:
    """Stop git and, when it runs in a session of its own, every helper it started."""
    with contextlib.suppress(OSError):
        if group and hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired, ValueError, OSError):
        proc.communicate(timeout=5)


def effective_url(cwd: Path, remote: str, *, push: bool = False) -> str | None:
    """The URL git really uses for a remote name or URL (insteadOf, pushurl applied)."""
    args = ["remote", "get-url", *(["--push"] if push else []), remote]
    if "/" in remote or ":" in remote:
        args = ["ls-remote", "--get-url", remote]
    done = run(cwd, args, action="git remote get-url", url=None)
    lines = done.stdout.strip().splitlines()
    return lines[0] if done.returncode == 0 and lines else None


def origin_of(url: str | None) -> str | None:
    """`protocol://host[:port]` of an http(s) URL, as git names it to a credential helper."""
    if not url or "://" not in url:
        return None
    scheme, rest = url.split("://", 1)
    if scheme.lower() not in ("http", "https"):
        return None
    host = rest.split("/", 1)[0].rpartition("@")[2]
    return f"{scheme.lower()}://{host}"
