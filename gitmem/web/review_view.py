"""Capture and review: the digests waiting for consolidation (and those that need a person), the
last consolidation pass, and the recent consolidation commits with the files they wrote.

Read-only: the library keeps no review queue beyond the digests' own status (pending,
needs-review); a digest is consolidated by `gitmem consolidate`, which calls the model ladder."""

from __future__ import annotations

from datetime import datetime
from html import escape
from typing import Any

from gitmem.store.store import Store
from gitmem.web.html import notice, shown, table, url

PASSES_SHOWN = 5
LOG_DEPTH = 300  # commits looked through for consolidation passes


def _digests(store: Store, status: str, heading: str) -> str:
    from gitmem.capture.digests import list_digests

    found = list_digests(store.root, status)
    if not found:
        return f"<h2>{escape(heading)}</h2>" + notice(f"no {status} digests")
    rows = []
    for digest in found:
        bullets = "".join(f"<li>{shown(b)}</li>" for b in digest.bullets()[:20])
        rows.append((f"<code>{shown(digest.id)}</code>", shown(digest.header.get("captured", "")),
                     shown(digest.workspace or "global"), str(digest.attempts),
                     f'<details><summary>{shown(digest.header.get("summary", "") or "(no summary)")}'
                     f"</summary><ul>{bullets}</ul></details>"))
    return (f"<h2>{escape(heading)} ({len(found)})</h2>"
            + table(("Digest", "Captured", "Workspace", "Attempts", "What it holds"), rows))


def _last_pass(store: Store) -> str:
    from gitmem.capture.digests import load_last_pass

    last = load_last_pass(store.root)
    if not last:
        return "<h2>Last consolidation pass</h2>" + notice("no consolidation pass yet")
    facts = "".join(f"<dt>{escape(str(k))}</dt><dd>{shown(v)}</dd>" for k, v in last.items())
    return f'<h2>Last consolidation pass</h2><dl class="facts">{facts}</dl>'


def _is_topic(path: str) -> bool:
    from gitmem.format import layers as L

    return path.endswith(".md") and L.classify_path(path).kind == "topic"


def _passes(store: Store) -> list[dict[str, Any]]:
    """The newest consolidation commits, each with the memory files it changed."""
    out = []
    for commit in store.git.log(limit=LOG_DEPTH):
        if not commit.message.startswith("consolidate:"):
            continue
        files = store.git.changed_between(commit.parents[0] if commit.parents else None, commit.oid)
        out.append({"commit": commit.oid[:7], "message": commit.message.split("\n", 1)[0],
                    "date": datetime.fromtimestamp(commit.time).astimezone().isoformat(timespec="seconds"),
                    "machine": commit.machine or "", "files": [f for f in files if _is_topic(f)]})
        if len(out) >= PASSES_SHOWN:
            break
    return out


def review(store: Store, csrf: str) -> str:
    parts = [_digests(store, "pending", "Pending digests"),
             _digests(store, "needs-review", "Digests that need review"), _last_pass(store)]
    passes = _passes(store)
    rows = [(f"<code>{escape(p['commit'])}</code>", escape(p["date"]), shown(p["machine"]),
             shown(p["message"]), "<br>".join(f'<a href="{url("/topic", path=f)}">{shown(f)}</a>'
                                              for f in p["files"]) or "—") for p in passes]
    parts.append("<h2>Recent consolidation passes</h2>" + (
        table(("Commit", "Date", "Machine", "Message", "Files written"), rows) if rows
        else notice("no consolidation commit in the recent history")))
    return "".join(parts)
