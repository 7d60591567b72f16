"""Sync bookkeeping on this machine: state/sync.json, state/CONFLICT.md and logs/memory.log.

All three live in gitignored folders (they describe this machine's view, not the memory), and
every string written to them goes through `redact` first: no token or credential-carrying URL
ever reaches a file or a log line.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from gitmem.eventlog import LOG_FILE, log_event, now_iso  # noqa: F401 - part of this module's API
from gitmem.eventlog import redact_value as _clean
from gitmem.fsio import (
    load_json_object,
    remove_file,
    write_json_atomic,
    write_text_atomic,
)
from gitmem.redaction import redact

SYNC_STATE = "state/sync.json"
CONFLICT_FILE = "state/CONFLICT.md"



@dataclass
class ConflictRecord:
    """One place holding conflict markers, and where each of its two versions came from."""

    path: str
    entry_id: str | None
    title: str
    kind: str  # both-edited (an entry or section) | lines (other text) | markers (stray lines)
    ours: str  # where the version after <<<<<<< came from: machine and commit
    theirs: str  # where the version before >>>>>>> came from
    line: int = 0  # 1-based line of the <<<<<<< marker

    @property
    def ref(self) -> str:
        """What `gitmem resolve` takes: the entry Id, else PATH:LINE (sections have no Id)."""
        return self.entry_id or f"{self.path}:{self.line}"

    @property
    def settle(self) -> str:
        """The command that settles it."""
        if self.kind == "record" and self.path.endswith("/runtime/memories.json"):
            return f"gitmem runtime resolve {self.ref} --keep ours|theirs"
        if self.kind == "record":
            return f"gitmem doc update {self.ref} FILE"
        if "/documents/" in self.path:  # a document's copy: its text is replaced as a whole
            return "gitmem doc update ID FILE (the document this copy belongs to)"
        return f"gitmem resolve {self.ref} --ours|--theirs|--both"

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "ref": self.ref, "settle": self.settle}


# -- state/sync.json ------------------------------------------------------------------------
def load_sync_state(root: Path) -> dict[str, Any]:
    """The last recorded sync state ({} when none or unreadable: it is only a record)."""
    return load_json_object(root / SYNC_STATE)


def record_sync(root: Path, **fields: Any) -> dict[str, Any]:
    """Record one attempt: lastAttempt always, lastSuccess when `error` is None."""
    state = load_sync_state(root)
    stamp = now_iso()
    state["lastAttempt"] = stamp
    if fields.get("error") is None:
        state["lastSuccess"] = stamp
    state.update(fields)
    from gitmem.secrets.mask import masked_data  # conflict titles: a file people are sent to read

    state = masked_data(_clean(state))
    write_json_atomic(root / SYNC_STATE, state, durable=False)
    return state


# -- conflicts ------------------------------------------------------------------------------
def has_markers(text: str) -> bool:
    from gitmem.format.markdown import conflict_marker_lines

    return bool(conflict_marker_lines(text))


def render_conflict_file(records: list[ConflictRecord]) -> str:
    """state/CONFLICT.md: what collided, where, and how to resolve it."""
    lines = [
        "# Conflicts to resolve",
        "",
        f"Written by gitmem at {now_iso()}. Both versions of each entry below are kept in the",
        "file, between conflict markers: the lines after `<<<<<<<` are one version, the lines",
        "after `=======` the other, and `>>>>>>>` closes the block. Each marker line names the",
        "machine and the commit its version came from. Nothing was dropped.",
        "",
        "To resolve one entry, run one of:",
        "",
        "    gitmem resolve ID --ours     keep the version after <<<<<<<",
        "    gitmem resolve ID --theirs   keep the version before >>>>>>>",
        "    gitmem resolve ID --both     keep both, the second as a new entry with its own Id",
        "",
        "or edit the file (keep what should stay, delete the three marker lines), then run",
        "`gitmem resolve ID`. Each makes one commit; `gitmem sync` pushes it, and this file goes",
        "once no markers are left. `gitmem conflicts` lists what is left.",
        "",
        "A record of `runtime/memories.json` or `documents/index.json` has no markers: it keeps",
        "this machine's version and holds the other under `\"conflict\"`. Settle it with",
        "`gitmem runtime resolve ID --keep ours|theirs` (or `gitmem doc update ID FILE`).",
        "",
        "| file | line | resolve with | title | kind | `<<<<<<<` version | `>>>>>>>` version |",
        "|---|---|---|---|---|---|---|",
    ]
    for rec in records:
        cells = [rec.path, str(rec.line or "—"), f"`{rec.settle}`", rec.title, rec.kind,
                 rec.ours, rec.theirs]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    from gitmem.secrets.mask import hide_secrets  # a title let through with --allow-secret

    return hide_secrets(redact("\n".join(lines) + "\n"))


_KEEP: dict[str, Any] = {}


def write_conflicts(root: Path, records: list[ConflictRecord], *,
                    failure: dict[str, Any] | None = _KEEP) -> None:
    """Write state/CONFLICT.md, or remove it when nothing is conflicted and no sync failed.

    `failure`: the sync state of a sync that just failed (its section leads the file), None after
    a sync that succeeded (the section goes), by default whatever state/sync.json says last."""
    target = root / CONFLICT_FILE
    if failure is _KEEP:
        state = load_sync_state(root)
        failure = state if state.get("result") == "failed" else None
    parts = ([render_failure(failure)] if failure else []) + ([render_conflict_file(records)] if records else [])
    if parts:
        write_text_atomic(target, "\n".join(parts), durable=False)
    else:
        remove_file(target)


# -- a failed sync ---------------------------------------------------------------------------
_ADVICE = {
    "AuthError": ("The remote refused the credentials. Give git a token that may push to it\n"
                  "(`gitmem config set git.token -` reads one from stdin) or set up git's credential\n"
                  "helper, then run `gitmem sync` again."),
    "ConflictError": ("Conflicts are not settled yet, or a git merge in the store is half done. See\n"
                      "`gitmem conflicts`, settle each with `gitmem resolve`, then run `gitmem sync`."),
    "LockTimeoutError": "Another gitmem process held the store. Run `gitmem sync` again once it is done.",
    "StoreStateError": ("A file the sync needs cannot be read (the error names it). Fix or restore it\n"
                        "(`gitmem check` lists what is wrong), then run `gitmem sync` again."),
}
_GENERIC_ADVICE = ("Check that the remote can be reached from this machine (`gitmem remote show` says\n"
                   "where credentials come from; `git fetch` in the store shows git's own message),\n"
                   "then run `gitmem sync` again.")


def failure_advice(kind: str, error: str) -> str:
    """How to settle a failed sync, from the kind of error and its message."""
    if "no remote is configured" in error:
        return "Point the store at a remote with `gitmem remote set URL`, then run `gitmem sync`."
    if "rejected" in error and kind == "SyncError":
        return "The remote kept moving while this machine pushed. Run `gitmem sync` again."
    return _ADVICE.get(kind, _GENERIC_ADVICE)


def render_failure(state: dict[str, Any]) -> str:
    """The section of state/CONFLICT.md that says the last sync failed and how to settle it."""
    error = str(state.get("error") or "unknown error")
    remote = state.get("remote") or "the remote"
    lines = [
        "# The last sync failed",
        "",
        f"`gitmem sync` with {remote} (branch {state.get('branch') or '?'}) failed at"
        f" {state.get('lastAttempt') or now_iso()}:",
        "",
        f"    {error}",
        "",
        failure_advice(str(state.get("failure") or ""), error),
        "",
        "Nothing was lost: what was committed here stays here until a sync pushes it, and what",
        "the remote holds is merged by the next sync. This section goes with the next sync that",
        "succeeds; `gitmem status` shows the failure too.",
        "",
    ]
    return redact("\n".join(lines) + "\n")
