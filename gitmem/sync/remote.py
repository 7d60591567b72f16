"""The store's remote: `gitmem init --remote URL`, `gitmem remote set URL [--branch B]`,
`gitmem remote show`.

A URL is stored (git config, memory.json) without credentials; a token found in it goes to the
user's credential helper or state/git-token (tokens.py). A relative local path is stored absolute
and must be a git repository. The branch tracks origin/<branch>, so plain `git push` and
`git pull` in the store work as they do in any clone.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem.errors import InvalidInputError
from gitmem.eventlog import log_event
from gitmem.git.transport import REMOTE
from gitmem.githooks.driver import configure_merge_driver
from gitmem.redaction import redact
from gitmem.sync.tokens import (
    TOKEN_FILE,
    absolute_remote,
    check_local_remote,
    place_token,
    save_token,
    split_url_secret,
)

if TYPE_CHECKING:
    from gitmem.store.store import Store

__all__ = ["REMOTE", "TOKEN_FILE", "InitResult", "init_remote_store", "init_store", "remote_set",
           "save_token", "split_url_secret"]



@dataclass
class InitResult:
    """What `gitmem init [--remote URL]` did."""

    created: bool
    cloned: bool = False
    remote: str | None = None  # redacted
    token_message: str | None = None  # where a token taken out of the URL went


def prepare_url(url: str, cwd: Path) -> tuple[str, str | None]:
    """(URL to store: credential-free, a local path absolute and checked; the secret or None)."""
    clean, secret = split_url_secret(url)
    clean = absolute_remote(clean, cwd)
    check_local_remote(clean)
    return clean, secret


def remote_set(store: Store, url: str, *, branch: str | None = None,
               token: str | None = None) -> dict[str, Any]:
    """Point the store at `url` (git config + memory.json, both credential-free); one commit.
    `token`, when given, is placed as a token inside the URL would be (it wins over one there)."""
    from gitmem.git.repo import check_branch_name

    if branch is not None:
        check_branch_name(branch)
    clean, secret = prepare_url(url, store.cwd)
    refuse_secret_names(clean, branch)
    if token is not None and token.strip():
        if any(c.isspace() for c in token.strip()):
            raise InvalidInputError("a token is one word: no spaces or line breaks")
        secret = token.strip()
    store.require()
    placement = place_token(store.root, clean, secret) if secret else None
    if placement is not None:
        clean = placement.url
    with store.writing("remote set") as txn:
        git = store.git
        git.set_remote(clean, REMOTE)
        if branch and branch != git.branch():
            git.switch_branch(branch)
        git.set_upstream(git.branch(), REMOTE)
        registry = store.registry
        registry.git["remote"] = clean
        registry.git["branch"] = git.branch()
        store.save_registry(txn, registry)
        store.write_file(txn, "SYSTEM.md", store.render_system_doc())
        txn.message = f"remote set: {redact(clean)}"
    log_event(store.root, {"event": "remote-set", "remote": clean, "branch": git.branch(),
                           "token": placement.where if placement else None})
    return {"remote": redact(clean), "branch": git.branch(), "upstream": f"{REMOTE}/{git.branch()}",
            "token_saved": placement is not None,
            "token_store": placement.where if placement else None,
            "token_file": placement.description if placement and placement.where == "file" else None,
            "token_helper": placement.description if placement and placement.where == "helper" else None,
            "token_message": placement.message() if placement else None}


def refuse_secret_names(url: str | None, branch: str | None) -> None:
    """A remote URL (its credentials already taken out) and a branch name go into git's config,
    memory.json and every push: a token in either is refused before anything changes."""
    from gitmem.secrets.scan import refuse_secrets

    refuse_secrets("\n".join(n for n in (url, branch) if n), "remote URL or branch", overridable=False)


def init_store(store: Store, *, remote: str | None, branch: str) -> bool:
    """`gitmem init [--remote URL]`; returns False when the store already existed."""
    return init_remote_store(store, remote=remote, branch=branch).created


def init_remote_store(store: Store, *, remote: str | None, branch: str) -> InitResult:
    """`gitmem init [--remote URL]`, saying what it did.

    With a remote that has history on `branch`, its files become the store (the folder must be
    empty or absent) and missing layout files are committed on top; with an empty remote, a new
    store is created with the remote as origin and the first `gitmem sync` pushes it. Every
    failure to reach the remote leaves the folder as it was.
    """
    from gitmem.git.repo import GitRepo, check_branch_name

    check_branch_name(branch)
    refuse_secret_names(None, branch)
    if remote is None or store.exists():
        created = store.init(branch=branch)
        configure_merge_driver(store.root)
        result = InitResult(created=created)
        if remote is not None:
            data = remote_set(store, remote)
            result.remote, result.token_message = data["remote"], data["token_message"]
        return result
    clean, secret = prepare_url(remote, store.cwd)
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
    created = store.init(branch=branch) or tip is not None  # a clone is new on this machine
    configure_merge_driver(root)
    placement = place_token(root, clean, secret) if secret else None
    if placement is not None:
        clean = placement.url
    if tip is None or not store.registry.git.get("remote"):
        remote_set(store, clean)
    else:
        store.git.set_remote(clean, REMOTE)
        store.git.set_upstream(store.git.branch(), REMOTE)
    log_event(root, {"event": "init", "remote": clean, "cloned": tip is not None,
                     "token": placement.where if placement else None})
    return InitResult(created=created, cloned=tip is not None, remote=redact(clean),
                      token_message=placement.message() if placement else None)
