"""Tokens given in a remote URL, and remote URLs themselves: what is stored, and where.

A token in a URL (its password, a token-shaped user name, or a query parameter such as
`?access_token=`; percent-decoded) never stays in the URL: not in git config, memory.json,
SYSTEM.md, logs, state/sync.json or output. It moves to the user's own git credential helper when
one is configured and keeps it (checked by reading it back), else to state/git-token (mode 600,
gitignored, this machine only); the caller tells the user which. A local remote path is stored
absolute, and must be a git repository.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from gitmem import caller
from gitmem.errors import InvalidInputError
from gitmem.redaction import register_secret, strip_credentials
from gitmem.secrets.scan import STORE_TOKEN_FILE as TOKEN_FILE  # the gate reads it too

DEFAULT_USERNAME = "x-access-token"
# Token shapes of the big forges, for a token given as the user name of an https URL.
_TOKEN_USER_RE = re.compile(r"^(?:gh[pousr]_|github_pat_|glpat-)|^[A-Za-z0-9_\-]{32,}$")
# scp-like ssh syntax: `host:path` or `user@host:path` (a colon before any slash).
_SCP_LIKE = re.compile(r"^[^/:]+:")
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


@dataclass
class TokenPlacement:
    """Where a token taken out of a URL went, and the URL to store instead."""

    where: str  # "helper" | "file"
    description: str  # for the user: the helper's name, or the file's path
    url: str
    removed_file: bool = False  # an older state/git-token was removed (it would shadow the helper)

    def message(self) -> str:
        if self.where == "helper":
            text = f"the token in the URL was given to git's credential helper ({self.description})"
            if self.removed_file:
                text += f"; the older token in {TOKEN_FILE} was removed"
        else:
            text = f"the token in the URL was saved to {self.description} (mode 600, this machine only)"
        return text + "; it is not stored in the URL or in any committed file"


def split_url_secret(url: str) -> tuple[str, str | None]:
    """(URL without a password, token user name or token query parameter, the secret or None)."""
    url = url.strip()
    if not url:
        raise InvalidInputError("the remote URL is empty")
    clean, secret = strip_credentials(url)
    if secret is None and re.match(r"^https?://", clean, re.IGNORECASE):
        parts = urlsplit(clean)
        userinfo, at, host = parts.netloc.rpartition("@")
        if at and _TOKEN_USER_RE.search(userinfo):
            clean, secret = urlunsplit(parts._replace(netloc=host)), userinfo
    register_secret(secret)
    return clean, secret


def is_local_path(url: str) -> bool:
    """True when git reads `url` as a path on this machine (not scheme:// nor scp-like ssh)."""
    if "://" in url:
        return False
    return bool(_WINDOWS_DRIVE.match(url)) or not _SCP_LIKE.match(url)


def local_path_of(url: str) -> Path | None:
    """The folder a local remote names (a path or a file:// URL), or None for a network remote."""
    if url.lower().startswith("file://"):
        return Path(urlsplit(url).path)
    return Path(url) if is_local_path(url) else None


def absolute_remote(url: str, cwd: Path) -> str:
    """A relative local path made absolute against `cwd` (so it works from any folder)."""
    if not is_local_path(url):
        return url
    return os.path.abspath(os.path.join(cwd, caller.expanduser(url)))


def check_local_remote(url: str) -> None:
    """InvalidInputError when `url` is a local path that does not hold a git repository."""
    from gitmem.git.repo import GitRepo

    path = local_path_of(url)
    if path is None or GitRepo.is_repo(path):
        return
    what = "does not exist" if not path.exists() else "is not a git repository"
    raise InvalidInputError(
        f"remote {url} {what}: a local remote must be an existing git repository"
        f" (create one with `git init --bare {url}`)"
    )


def save_token(root: Path, token: str) -> Path:
    """Write the HTTPS token to state/git-token, readable by this user only (mode 600)."""
    path = root / TOKEN_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token.strip() + "\n")
    os.chmod(path, 0o600)
    register_secret(token)
    return path


def with_username(url: str, username: str) -> str:
    """The URL with a user name when it has none (credential helpers look tokens up by it)."""
    parts = urlsplit(url)
    if parts.username or not parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=f"{username}@{parts.netloc}"))


def place_token(root: Path, url: str, token: str) -> TokenPlacement:
    """Store a token taken out of `url`: the user's durable credential helper, else the file."""
    from gitmem.git import credstore

    if url.lower().startswith(("http://", "https://")):
        helpers = credstore.durable_helpers(credstore.configured_helpers(root, url))
        keyed = with_username(url, DEFAULT_USERNAME)
        username = urlsplit(keyed).username or DEFAULT_USERNAME
        if helpers and credstore.approve(root, keyed, username, token):
            old = root / TOKEN_FILE
            removed = old.exists()
            old.unlink(missing_ok=True)
            names = ", ".join(dict.fromkeys(credstore.helper_name(h) for h in helpers))
            return TokenPlacement("helper", names, keyed, removed)
    path = save_token(root, token)
    return TokenPlacement("file", str(path), url)
