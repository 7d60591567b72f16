"""The user's own git credential store: which helpers git would ask for a URL, and handing one a
token (`git credential approve`), checked by asking for it back (`git credential fill`).

A token found in a remote URL goes to the user's helper when that helper keeps it (osxkeychain,
libsecret, wincred, the manager, `store`); `cache` forgets after minutes and helpers such as
`gh auth git-credential` ignore what they are given, so the token is read back to be sure.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlsplit

from gitmem.git import gitnet

# Helpers that keep a credential for minutes only: not a place to move a token to.
_EPHEMERAL = re.compile(r"^(?:git-credential-)?cache\b")
_HELPER_KEY = re.compile(r"^credential\.(?:(?P<pattern>.+)\.)?helper$", re.IGNORECASE)


def _matches(pattern: str, url: str) -> bool:
    """Whether a `credential.<pattern>.helper` applies to `url` (scheme, host and path prefix)."""
    want, have = urlsplit(pattern if "://" in pattern else f"https://{pattern}"), urlsplit(url)
    if "://" in pattern and want.scheme.lower() != have.scheme.lower():
        return False
    host = (have.hostname or "").lower()
    wanted_host = (want.hostname or "").lower()
    if wanted_host.startswith("*."):
        if not host.endswith(wanted_host[1:]):
            return False
    elif wanted_host != host:
        return False
    if want.port is not None and want.port != have.port:
        return False
    return have.path.startswith(want.path.rstrip("/")) if want.path.strip("/") else True


def configured_helpers(cwd: Path, url: str) -> list[str]:
    """The credential helpers git would run for `url`, in order (an empty value resets the list)."""
    if not gitnet.use_git_binary() or not url.lower().startswith(("http://", "https://")):
        return []
    done = gitnet.run(cwd, ["config", "--null", "--get-regexp", r"^credential\..*helper$"],
                      action="git config", url=None)
    helpers: list[str] = []
    for record in done.stdout.split("\0"):
        key, _, value = record.partition("\n")
        match = _HELPER_KEY.match(key)
        if not match or (match["pattern"] and not _matches(match["pattern"], url)):
            continue
        if value.strip():
            helpers.append(value.strip())
        else:
            helpers = []
    return helpers


def helper_name(helper: str) -> str:
    """A credential helper's name without its arguments (an inline shell helper may hold secrets)."""
    words = helper.lstrip("!").split()
    return os.path.basename(words[0]) if words else "?"


def durable_helpers(helpers: list[str]) -> list[str]:
    """The helpers that keep what they are given (all but `cache`)."""
    return [h for h in helpers if not _EPHEMERAL.match(h)]


def _request(url: str, username: str, password: str | None = None) -> str:
    parts = urlsplit(url)
    lines = [f"protocol={parts.scheme}", f"host={parts.netloc.rpartition('@')[2]}",
             f"username={username}"]
    if parts.path.strip("/"):
        lines.append(f"path={parts.path.lstrip('/')}")
    if password is not None:
        lines.append(f"password={password}")
    return "\n".join(lines) + "\n\n"


def approve(cwd: Path, url: str, username: str, password: str) -> bool:
    """Give the user's credential helpers a token for `url`; True when it can be read back."""
    stored = gitnet.run(cwd, ["credential", "approve"], action="git credential approve",
                        url=url, data=_request(url, username, password), prompt=False)
    if stored.returncode != 0:
        return False
    back = gitnet.run(cwd, ["credential", "fill"], action="git credential fill", url=url,
                      data=_request(url, username), prompt=False)
    return back.returncode == 0 and f"password={password}" in back.stdout.splitlines()
