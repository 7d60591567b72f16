"""Git credentials and error translation: the store's token, libgit2's credential callbacks (the
pygit2 fallback transport), and one-line redacted errors from pygit2 exceptions or git's stderr."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pygit2
from pygit2.enums import CredentialType

from gitmem import caller
from gitmem.errors import AuthError, GitLayerError, SyncError
from gitmem.fsio import read_regular_file
from gitmem.git.gitnet import Token
from gitmem.redaction import (  # noqa: F401 - re-exported for the git layer's callers
    TOKEN_ENV,
    known_tokens,
    redact,
    register_secret,
    strip_credentials,
)

DEFAULT_USERNAME = "x-access-token"


class PushRejectedError(SyncError):
    """The remote branch has commits we lack: fetch, merge, then push again."""

MAX_CREDENTIAL_TRIES = 3

_Credential = pygit2.UserPass | pygit2.Keypair | pygit2.KeypairFromAgent | pygit2.Username


def load_token(token_file: Path | None) -> str | None:
    """Return the HTTPS token from $GITMEM_GIT_TOKEN, else from a private token file, else None."""
    env = (caller.env(TOKEN_ENV) or "").strip()
    if env:
        return env
    if token_file is None or not token_file.is_file():
        return None
    mode = stat.S_IMODE(token_file.stat().st_mode)
    if mode & 0o077:
        raise AuthError(
            f"refusing to use token file {token_file}: mode {mode:04o} lets other users read it;"
            f" run chmod 600 {token_file}"
        )
    try:
        token = read_regular_file(token_file).decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        raise AuthError(f"token file {token_file} cannot be read as text: remove it and give the"
                        " token again (`gitmem remote set URL` with the token in the URL)") from None
    register_secret(token)
    return token or None


def token_source(token_file: Path | None) -> Token | None:
    """Where the store's own token is (checked and registered for redaction), or None."""
    if (caller.env(TOKEN_ENV) or "").strip():
        return Token("env")
    if load_token(token_file) is None:
        return None
    assert token_file is not None
    return Token("file", token_file)


def _ssh_keys(username: str) -> list[_Credential]:
    """SSH identities to offer, in order: the agent, then ~/.ssh/id_ed25519 and id_rsa."""
    keys: list[_Credential] = []
    if caller.env("SSH_AUTH_SOCK"):
        keys.append(pygit2.KeypairFromAgent(username))
    ssh_dir = Path(caller.home()) / ".ssh"
    for name in ("id_ed25519", "id_rsa"):
        private = ssh_dir / name
        if private.is_file():
            public = ssh_dir / f"{name}.pub"
            keys.append(
                pygit2.Keypair(username, str(public) if public.is_file() else None, str(private), "")
            )
    return keys


class GitCredentials(pygit2.RemoteCallbacks):
    """Remote callbacks: token / SSH credentials with a retry cap, and push rejection capture."""

    def __init__(self, url: str, token_file: Path | None = None, secret: str | None = None) -> None:
        super().__init__()
        self.url = url
        self.token_file = token_file
        self.secret = secret  # a token taken out of the URL for this one operation
        self.tries = 0
        self.rejections: list[tuple[str, str]] = []

    def credentials(
        self, url: str, username_from_url: str | None, allowed_types: CredentialType
    ) -> _Credential:
        """Hand libgit2 the next credential to try; stop after MAX_CREDENTIAL_TRIES refusals."""
        self.tries += 1
        # libgit2 asks again after every refusal; without a cap a bad token loops forever.
        if self.tries > MAX_CREDENTIAL_TRIES:
            raise AuthError(f"authentication refused by remote {redact(url or self.url)}")
        if allowed_types & CredentialType.USERPASS_PLAINTEXT:
            token = self.secret or load_token(self.token_file)
            if token is None:
                where = self.token_file or "the store's state/git-token file (mode 600)"
                raise AuthError(
                    f"remote {redact(url)} requires authentication: set {TOKEN_ENV} or put a"
                    f" token in {where}"
                )
            return pygit2.UserPass(username_from_url or DEFAULT_USERNAME, token)
        if allowed_types & CredentialType.SSH_KEY:
            keys = _ssh_keys(username_from_url or "git")
            if self.tries <= len(keys):
                return keys[self.tries - 1]
            raise AuthError(f"authentication refused by remote {redact(url)}: no usable SSH key")
        if allowed_types & CredentialType.USERNAME:
            return pygit2.Username(username_from_url or "git")
        raise AuthError(f"remote {redact(url)} asks for an unsupported authentication method")

    def push_update_reference(self, refname: str, message: str | None) -> None:
        """Record a ref the remote refused (message is None when it was accepted)."""
        if message:
            self.rejections.append((refname, message))


# What libgit2 or a remote's receive-pack say when the remote branch moved under us.
_NON_FF_HINTS = (
    "non-fastforward",
    "non-fast-forward",
    "not present locally",
    "fetch first",
    "stale info",
    "failed to update ref",
    "failed to lock",
    "cannot lock ref",
)
_AUTH_HINTS = (
    "authentication",
    "credentials",
    "permission denied (publickey",
    "permission denied, please try again",
    "access denied",
    "invalid username or password",
)
# Git had to ask for a user name or password and could not (no helper, no token, no terminal).
_NO_CREDENTIALS_HINTS = ("could not read username", "could not read password")
# HTTP status codes as whole words only: an object id in a message may contain "403" or "404".
_AUTH_STATUS_RE = re.compile(r"(?<![0-9a-f])40[13](?![0-9a-f])")
_MISSING_STATUS_RE = re.compile(r"(?<![0-9a-f])404(?![0-9a-f])")
_HOST_KEY_HINTS = ("host key verification failed", "remote host identification has changed")
_NETWORK_HINTS = (
    "failed to resolve address",
    "could not resolve",
    "connection refused",
    "failed to connect",
    "couldn't connect",
    "timed out",
    "network is unreachable",
    "no route to host",
    "connection reset",
    "connection closed by",
    "empty reply from server",
    "recv failure",
)
# A remote whose objects cannot be read back: checked before _MISSING_HINTS ("object not found").
_DAMAGED_HINTS = (
    "object not found",
    "failed to decompress",
    "corrupt",
    "bad object",
    "invalid pack",
    "packfile",
    "inflate",
    "index-pack failed",
    "did not send all necessary objects",
    "unable to read sha1 file",
    "missing blob object",
    "missing tree object",
)
_MISSING_HINTS = (
    "not found",
    "unsupported url protocol",
    "does not appear to be a git repository",
    "could not find repository",
)
# git's closing lines that add nothing to the line before them.
_GENERIC_LINES = (
    "could not read from remote repository",
    "please make sure you have the correct access rights",
    "and the repository exists",
)


def is_non_fast_forward(text: str) -> bool:
    """True when a push error or ref rejection means the remote has commits we lack."""
    low = text.lower()
    return any(h in low for h in _NON_FF_HINTS)


def _classify(detail: str, action: str, where: str, *, auth: bool = False) -> GitLayerError:
    """The one-line error for a (redacted, one-line) message of git or libgit2."""
    low = detail.lower()
    if any(h in low for h in _NO_CREDENTIALS_HINTS):
        return AuthError(
            f"remote{where} requires authentication: configure a git credential helper, set"
            f" {TOKEN_ENV}, or put a token in the store's state/git-token file (mode 600)"
        )
    if any(h in low for h in _HOST_KEY_HINTS):
        return SyncError(
            f"{action}: ssh could not verify the host key of remote{where}; connect once with"
            " ssh in a terminal to check and accept it (~/.ssh/known_hosts)"
        )
    if "permission denied (publickey" in low:
        return AuthError(
            f"authentication refused by remote{where}: no ssh key it accepts was offered (a key"
            " with a passphrase must be in ssh-agent, or gitmem run in a terminal to ask for it)"
        )
    if auth or any(h in low for h in _AUTH_HINTS) or _AUTH_STATUS_RE.search(low):
        return AuthError(f"authentication refused by remote{where}")
    if any(h in low for h in _NETWORK_HINTS):
        return SyncError(f"{action}: cannot reach remote{where}: {detail}")
    if any(h in low for h in _DAMAGED_HINTS):
        return SyncError(f"{action}: the remote repository{where} is damaged: {detail}")
    if any(h in low for h in _MISSING_HINTS) or _MISSING_STATUS_RE.search(low):
        return SyncError(f"{action}: remote repository not found{where}: {detail}")
    return SyncError(f"{action} failed{where}: {detail}")


def map_remote_error(exc: Exception, action: str, url: str | None) -> GitLayerError:
    """Translate a pygit2 error from a network operation into a one-line, redacted SyncError."""
    if isinstance(exc, GitLayerError):
        return exc  # already ours (raised from a callback)
    where = f" {redact(url)}" if url else ""
    detail = redact(" ".join(str(exc).split()))
    return _classify(detail, action, where, auth=isinstance(exc, pygit2.AuthError))


def git_error_detail(stderr: str) -> str:
    """The informative part of git's stderr, one line: its error lines without the boilerplate."""
    lines = [" ".join(line.split()) for line in stderr.splitlines()]
    lines = [line for line in lines if line and not line.lower().startswith("hint:")]
    useful = [line for line in lines
              if not any(g in line.lower() for g in _GENERIC_LINES)]
    picked = [line for line in useful
              if line.lower().startswith(("fatal:", "error:", "ssh:", "remote:", "ssh_"))] or useful
    text = "; ".join(dict.fromkeys(
        line.removeprefix("fatal: ").removeprefix("error: ") for line in picked[-3:]))
    return redact(text or (lines[-1] if lines else "git gave no reason"))


def map_git_error(stderr: str, action: str, url: str | None) -> GitLayerError:
    """Translate a failed git command's stderr into a one-line, redacted SyncError/AuthError."""
    where = f" {redact(url)}" if url else ""
    return _classify(git_error_detail(stderr), action, where)


def map_local_error(exc: Exception, action: str) -> GitLayerError:
    """Translate a pygit2 error from a local operation into a one-line, redacted GitLayerError."""
    if isinstance(exc, GitLayerError):
        return exc
    return GitLayerError(f"{action} failed: {redact(' '.join(str(exc).split()))}")
