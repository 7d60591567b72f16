"""`gitmem remote show`: the remote as this machine sees it, without asking the network.

URL (redacted, and the one git really uses when `insteadOf` rewrites it), branch and the upstream
it tracks, where credentials come from, which transport runs, and the last sync.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem import caller
from gitmem.git.transport import REMOTE
from gitmem.redaction import TOKEN_ENV, redact
from gitmem.sync.state import load_sync_state
from gitmem.sync.tokens import TOKEN_FILE, local_path_of

if TYPE_CHECKING:
    from gitmem.store.store import Store



def credential_source(root: Path, url: str) -> dict[str, str]:
    """Where git gets credentials for `url` on this machine: kind and a sentence for people."""
    from gitmem.git import credstore

    low = url.lower()
    if local_path_of(url) is not None:
        return {"kind": "none", "detail": "a path on this machine: no credentials needed"}
    if low.startswith(("http://", "https://")):
        if (caller.env(TOKEN_ENV) or "").strip():
            return {"kind": "env", "detail": f"{TOKEN_ENV} (environment), through gitmem's helper"}
        if (root / TOKEN_FILE).is_file():
            return {"kind": "file", "detail": f"{root / TOKEN_FILE} (mode 600), through gitmem's helper"}
        helpers = credstore.configured_helpers(root, url)
        if helpers:
            names = ", ".join(dict.fromkeys(credstore.helper_name(h) for h in helpers))
            return {"kind": "helper", "detail": f"git credential helper: {names}"}
        return {"kind": "none", "detail": (
            "none configured: a remote that asks for a password will fail; configure a git"
            f" credential helper (e.g. `gh auth setup-git`) or set {TOKEN_ENV}")}
    if low.startswith("git://"):
        return {"kind": "none", "detail": "git protocol: no credentials"}
    return {"kind": "ssh", "detail": "ssh: your ~/.ssh/config, keys and ssh agent, as for git push"}


def remote_show(store: Store) -> dict[str, Any]:
    """The remote, its branch and upstream, credentials, transport and last sync."""
    from gitmem.git import gitnet

    store.require()
    git = store.git
    branch = git.branch()
    url = git.remote_url(REMOTE)
    actual = git.effective_url(REMOTE) if url else None
    upstream = git.upstream(branch)
    binary = gitnet.git_executable() if gitnet.use_git_binary() else None
    state = load_sync_state(store.root)
    last = {key: state.get(key) for key in ("result", "lastAttempt", "lastSuccess", "ahead",
                                             "behind", "error") if key in state}
    return {
        "remote": redact(url) if url else None,
        "effective_url": redact(actual) if actual and actual != url else None,
        "branch": branch,
        "upstream": f"{upstream[0]}/{upstream[1]}" if upstream else None,
        "credentials": credential_source(store.root, actual or url) if url else None,
        "transport": f"git ({binary})" if binary else "pygit2 (no git binary found)",
        "last_sync": last or None,
    }


def render_remote_show(data: dict[str, Any]) -> str:
    """The human text of `gitmem remote show`."""
    if not data["remote"]:
        lines = ["remote: none (set one with `gitmem remote set URL`)"]
    else:
        lines = [f"remote: {data['remote']}"]
        if data["effective_url"]:
            lines.append(f"  git uses: {data['effective_url']} (url.<base>.insteadOf)")
    tracking = data["upstream"] or "nothing (run `gitmem remote set URL` to set it)"
    lines.append(f"branch: {data['branch']}, tracking {tracking}")
    if data["credentials"]:
        lines.append(f"credentials: {data['credentials']['detail']}")
    lines.append(f"transport: {data['transport']}")
    last = data["last_sync"]
    if last:
        line = (f"last sync: {last.get('result', '-')} at {last.get('lastAttempt', '-')}, last"
                f" success {last.get('lastSuccess') or 'never'}, ahead {last.get('ahead', 0)},"
                f" behind {last.get('behind', 0)}")
        lines.append(line)
        if last.get("error"):
            lines.append(f"last error: {last['error']}")
    else:
        lines.append("last sync: never")
    return "\n".join(lines)
