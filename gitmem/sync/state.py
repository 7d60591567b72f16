"""Sync bookkeeping on this machine: state/sync.json, state/CONFLICT.md and logs/memory.log.

All three live in gitignored folders (they describe this machine's view, not the memory), and
every string written to them goes through `redact` first: no token or credential-carrying URL
ever reaches a file or a log line.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from gitmem.eventlog import LOG_FILE, log_event, now_iso  # noqa: F401 - part of this module's API
from gitmem.eventlog import redact_value as _clean
from gitmem.fsio import read_text, remove_file, write_json_atomic, write_text_atomic
from gitmem.redaction import redact

SYNC_STATE = "state/sync.json"
CONFLICT_FILE = "state/CONFLICT.md"

_BLOCK_RE = re.compile(r"^<{7}(?: [^\n]*)?\n(.*?)^>{7}(?: [^\n]*)?$", re.MULTILINE | re.DOTALL)
_ID_RE = re.compile(r"^\*\*Id:\*\*[ \t]+(\S+)", re.MULTILINE)
_TITLE_RE = re.compile(r"^## +(.+?)\s*$", re.MULTILINE)


@dataclass
class ConflictRecord:
    """One place holding conflict markers, and where each of its two versions came from."""

    path: str
    entry_id: str | None
    title: str
    kind: str  # both-edited | lines | markers (found in a file another machine merged)
    ours: str  # origin of the version between <<<<<<< and =======
    theirs: str  # origin of the version between ======= and >>>>>>>

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


# -- state/sync.json ------------------------------------------------------------------------
def load_sync_state(root: Path) -> dict[str, Any]:
    """The last recorded sync state ({} when none or unreadable: it is only a record)."""
    try:
        data = json.loads(read_text(root / SYNC_STATE))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record_sync(root: Path, **fields: Any) -> dict[str, Any]:
    """Record one attempt: lastAttempt always, lastSuccess when `error` is None."""
    state = load_sync_state(root)
    stamp = now_iso()
    state["lastAttempt"] = stamp
    if fields.get("error") is None:
        state["lastSuccess"] = stamp
    state.update(fields)
    state = _clean(state)
    write_json_atomic(root / SYNC_STATE, state, durable=False)
    return state


# -- conflicts ------------------------------------------------------------------------------
def marker_blocks(text: str) -> list[tuple[int, str | None, str]]:
    """(line, entry id, title) of every <<<<<<< ... >>>>>>> block in `text`."""
    found = []
    for match in _BLOCK_RE.finditer(text):
        block = match.group(1)
        ident = _ID_RE.search(block)
        title = _TITLE_RE.search(block)
        line = text.count("\n", 0, match.start()) + 1
        found.append((line, ident.group(1) if ident else None,
                      title.group(1) if title else f"line {line}"))
    return found


def has_markers(text: str) -> bool:
    from gitmem.format.markdown import conflict_marker_lines

    return bool(conflict_marker_lines(text))


def render_conflict_file(records: list[ConflictRecord]) -> str:
    """state/CONFLICT.md: what collided, where, and how to resolve it."""
    lines = [
        "# Sync conflicts",
        "",
        f"Written by `gitmem sync` at {now_iso()}. Both versions of each entry below are kept in",
        "the file, between conflict markers: the lines after `<<<<<<<` are one version, the lines",
        "after `=======` the other, and `>>>>>>>` closes the block. Nothing was dropped.",
        "",
        "To resolve: edit each file, keep what should stay (one version, or a combination),",
        "delete the three marker lines, then run `gitmem sync`. It commits the resolution, pushes",
        "it, and removes this file once no markers are left.",
        "",
        "A record of `runtime/memories.json` or `documents/index.json` has no markers: it keeps",
        "this machine's version and holds the other under `\"conflict\"`. Settle it with",
        "`gitmem runtime resolve ID --keep ours|theirs` (or `gitmem doc update ID FILE`).",
        "",
        "| file | entry | title | kind | `<<<<<<<` version | `>>>>>>>` version |",
        "|---|---|---|---|---|---|",
    ]
    for rec in records:
        cells = [rec.path, rec.entry_id or "—", rec.title, rec.kind, rec.ours, rec.theirs]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return redact("\n".join(lines) + "\n")


def write_conflicts(root: Path, records: list[ConflictRecord]) -> None:
    """Write state/CONFLICT.md, or remove it when nothing is conflicted."""
    target = root / CONFLICT_FILE
    if records:
        write_text_atomic(target, render_conflict_file(records), durable=False)
    else:
        remove_file(target)
