"""The store's remote: `gitmem init --remote URL`, `gitmem remote set URL [--branch B]`, tokens.

A URL is stored (git config, memory.json) without credentials. A token found in it is saved to
state/git-token with mode 600 (gitignored, local to this machine) and used from there.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem.errors import InvalidInputError
from gitmem.eventlog import log_event
from gitmem.githooks.driver import configure_merge_driver
from gitmem.redaction import redact, register_secret, strip_credentials

if TYPE_CHECKING:
    from gitmem.store.store import Store

REMOTE = "origin"
TOKEN_FILE = "state/git-token"
# Token shapes of the big forges, for a token given as the user name of an https URL.
_TOKEN_USER_RE = re.compile(r"^(?:gh[pousr]_|github_pat_|glpat-)|^[A-Za-z0-9_\-]{32,}$")


def split_url_secret(url: str) -> tuple[str, str | None]:
    """(URL without a password or token, the secret or None); a token given as user name too."""
    url = url.strip()
    if not url:
        raise InvalidInputError("the remote URL is empty")
    clean, secret = strip_credentials(url)
    if secret is None and re.match(r"^https?://", clean, re.IGNORECASE):
        scheme, rest = clean.split("://", 1)
        userinfo, at, host = rest.partition("@")
        if at and "/" not in userinfo and _TOKEN_USER_RE.search(userinfo):
            clean, secret = f"{scheme}://{host}", userinfo
    register_secret(secret)
    return clean, secret


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


def remote_set(store: Store, url: str, *, branch: str | None = None) -> dict[str, Any]:
    """Point the store at `url` (git config + memory.json, both credential-free); one commit."""

    clean, secret = split_url_secret(url)
    with store.writing("remote set") as txn:
        if secret:
            save_token(store.root, secret)
        git = store.git
        git.set_remote(clean, REMOTE)
        if branch and branch != git.branch():
            git.switch_branch(branch)
        registry = store.registry
        registry.git["remote"] = clean
        registry.git["branch"] = git.branch()
        store.save_registry(txn, registry)
        store.write_file(txn, "SYSTEM.md", store.render_system_doc())
        txn.message = f"remote set: {redact(clean)}"
    log_event(store.root, {"event": "remote-set", "remote": clean, "branch": git.branch()})
    return {"remote": redact(clean), "branch": git.branch(), "token_saved": bool(secret),
            "token_file": str(store.root / TOKEN_FILE) if secret else None}


def init_store(store: Store, *, remote: str | None, branch: str) -> bool:
    """`gitmem init [--remote URL]`; returns False when the store already existed.

    With a remote that has history on `branch`, its files become the store (the folder must be
    empty or absent) and missing layout files are committed on top; with an empty remote, a new
    store is created with the remote as origin and the first `gitmem sync` pushes it. Every
    failure to reach the remote leaves the folder as it was.
    """
    from gitmem.git.repo import GitRepo

    if remote is None or store.exists():
        created = store.init(branch=branch)
        configure_merge_driver(store.root)
        if remote is not None:
            remote_set(store, remote)
        return created
    clean, secret = split_url_secret(remote)
    root = store.root
    with tempfile.TemporaryDirectory(prefix="gitmem-init-") as tmp:
        token = save_token(Path(tmp), secret) if secret else None
        probe = GitRepo.init(Path(tmp) / "probe", branch=branch, token_file=token)
        probe.set_remote(clean, REMOTE)
        tip = probe.fetch(remote=REMOTE, branch=branch)  # an error here leaves `root` untouched
        others = probe.remote_branches(REMOTE)
        if tip is None and others:
            raise InvalidInputError(
                f"{redact(clean)} has no branch {branch!r} but has {', '.join(others)}:"
                " pass --branch with the one that holds the memory"
            )
        if tip is not None:
            if root.exists() and any(root.iterdir()):
                raise InvalidInputError(
                    f"{root} is not empty: {redact(clean)} has history, so it is cloned into an"
                    " empty or new folder; choose another --root or empty this one"
                )
            root.mkdir(parents=True, exist_ok=True)
            shutil.move(str(Path(tmp) / "probe" / ".git"), str(root / ".git"))
            GitRepo(root).fast_forward(tip)
    if secret:
        save_token(root, secret)
    created = store.init(branch=branch) or tip is not None  # a clone is new on this machine
    configure_merge_driver(root)
    if tip is None or not store.registry.git.get("remote"):
        remote_set(store, clean)
    log_event(root, {"event": "init", "remote": clean, "cloned": tip is not None})
    return created
