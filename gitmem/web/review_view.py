"""Capture and review: the facts consolidation left for a person (the review queue, each with
Accept, Edit and accept, Reject: the calls `gitmem review` makes), the digests waiting for
consolidation (and those the model failed on), the last consolidation pass, and the recent
consolidation commits with the files they wrote."""

from __future__ import annotations

from datetime import datetime
from html import escape
from typing import Any

from gitmem.errors import GitmemError
from gitmem.store.store import Store
from gitmem.web.html import (
    attr,
    button_form,
    csrf_field,
    holds_secret,
    not_editable,
    notice,
    shown,
    table,
    url,
)

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


def _queue(store: Store, csrf: str) -> str:
    """The facts consolidation left for a person, each with Accept, Accept edited and Reject."""
    from gitmem.consolidate.review import review_list

    try:
        data = review_list(store)
    except GitmemError as exc:  # a broken queue file stops this part of the page only
        return "<h2>Waiting for review</h2>" + notice(str(exc), "error")
    rule = data["rule"]
    if rule == "everything":
        told = "every proposed fact"
    elif isinstance(rule, int | float):
        told = f"the facts proposed with a confidence below {rule:g}"
    else:
        told = "nothing (consolidate.review is off)"
    head = f"<h2>Waiting for review ({data['count']})</h2><p>Consolidation leaves here: {told}.</p>"
    if not data["items"]:
        return head + notice("the review queue is empty")
    return head + "".join(_queued(item, csrf, n) for n, item in enumerate(data["items"]))


def _queued(item: dict[str, Any], csrf: str, n: int) -> str:
    sure = f", confidence {item['confidence']:g}" if item.get("confidence") is not None else ""
    where = f"{item.get('scope') or 'global'} / {item.get('layer')} / {item.get('topic') or 'general'}"
    fields = {"item": str(item["id"])}
    origin, replaced = f'digest <code>{shown(item.get("digest") or "")}</code>{sure}', ""
    if item.get("kind"):  # a runtime maintenance proposal: the items it replaces
        origin = shown(str(item.get("reason") or ""))
        replaced = "<p>Replaces:</p><ul>" + "".join(
            f"<li><code>{shown(str(s.get('id')))}</code> {shown(str(s.get('content')))}</li>"
            for s in item.get("sources") or []) + "</ul>"
    return (
        f'<article class="card"><h3>{shown(item["text"])}</h3>'
        f'<p class="meta">{shown(where)} — {origin},'
        f' {shown(item.get("machine") or "")} {shown(str(item.get("at") or "")[:10])}</p>{replaced}'
        '<div class="actions">'
        + button_form("/review/accept", "Accept", csrf, fields=fields)
        + button_form("/review/reject", "Reject", csrf, fields=fields, kind="danger")
        + (not_editable("This proposal") if holds_secret(str(item["text"])) else
           f'<details><summary>Edit and accept</summary><form method="post" action="/review/accept"'
           f' class="edit">{csrf_field(csrf)}<input type="hidden" name="item" value="{attr(str(item["id"]))}">'
           f'<label for="rev-{n}">Text</label><textarea id="rev-{n}" name="text" rows="3" required>'
           f'{escape(str(item["text"]))}</textarea><button type="submit">Accept edited</button>'
           "</form></details>")
        + "</div></article>"
    )


def review(store: Store, csrf: str) -> str:
    parts = [_queue(store, csrf), _digests(store, "pending", "Pending digests"),
             _digests(store, "needs-review", "Digests that need review"), _last_pass(store)]
    passes = _passes(store)
    rows = [(f"<code>{escape(p['commit'])}</code>", escape(p["date"]), shown(p["machine"]),
             shown(p["message"]), "<br>".join(f'<a href="{url("/topic", path=f)}">{shown(f)}</a>'
                                              for f in p["files"]) or "—") for p in passes]
    parts.append("<h2>Recent consolidation passes</h2>" + (
        table(("Commit", "Date", "Machine", "Message", "Files written"), rows) if rows
        else notice("no consolidation commit in the recent history")))
    return "".join(parts)
