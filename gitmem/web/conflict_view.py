"""The conflicts page: every block left between markers with the common base beside both sides,
a word-level diff between the sides, and the ways to settle it (keep ours / theirs / both, or edit
one side and keep the edit); runtime items in conflict with their two texts and keep buttons."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from gitmem.format.conflicts import ConflictBlock, conflict_blocks
from gitmem.store.store import Store
from gitmem.sync.state import ConflictRecord
from gitmem.web.diffs import word_diff
from gitmem.web.html import (
    attr,
    button_form,
    csrf_field,
    holds_secret,
    markdown,
    not_editable,
    notice,
    shown,
)


def versions_side_by_side(versions: list[dict[str, Any]], base: str | None = None) -> str:
    cols = [f'<section class="side base"><h3>Common base</h3>'
            f'<div class="body">{markdown(base) if base else "<p>(none: new on both sides)</p>"}</div>'
            "</section>"] if base is not None else []
    cols += [f'<section class="side"><h3>{shown(v["from"])}</h3>'
             f'<div class="body">{markdown(v["text"])}</div></section>' for v in versions]
    return f'<div class="sides">{"".join(cols)}</div>'


def resolve_buttons(ref: str, csrf: str, ways: tuple[str, ...] = ("ours", "theirs", "both")) -> str:
    labels = {"ours": "Keep ours", "theirs": "Keep theirs", "both": "Keep both"}
    return '<div class="actions">' + "".join(
        button_form("/resolve", labels[how], csrf, fields={"target": ref, "how": how}) for how in ways
    ) + "</div>"


def _edit_form(ref: str, text: str, csrf: str, n: int) -> str:
    if holds_secret(text):
        return not_editable("This version")
    return (f'<details class="editkeep"><summary>Edit and keep</summary>'
            f'<form method="post" action="/resolve/edit" class="edit">{csrf_field(csrf)}'
            f'<input type="hidden" name="target" value="{attr(ref)}">'
            f'<label for="keep-{n}">The text to keep (starts as ours)</label>'
            f'<textarea id="keep-{n}" name="text" rows="10" required>{escape(text)}</textarea>'
            '<button type="submit">Keep this text</button></form></details>')


def _block_at(store: Store, conflict: ConflictRecord) -> ConflictBlock | None:
    from gitmem.fsio import read_text

    try:
        blocks = conflict_blocks(read_text(store.path(conflict.path)))
    except (OSError, UnicodeDecodeError):
        return None
    return next((b for b in blocks if b.line == conflict.line), None)


def _block_card(store: Store, conflict: ConflictRecord, csrf: str, n: int) -> str:
    from gitmem.sync.conflicts import block_base, describe_label

    block = _block_at(store, conflict)
    if block is None:
        return f"<p>Settle with <code>{shown(conflict.settle)}</code></p>"
    versions = [{"from": describe_label(v.label) or v.label or "unknown", "text": v.text}
                for v in block.versions]
    base = block_base(store, conflict.path, block)
    parts = [versions_side_by_side(versions, base or "")]
    if len(block.versions) >= 2:
        parts.append("<h3>Word by word</h3>" + word_diff(block.versions[0].text, block.versions[-1].text))
    if "/documents/" in conflict.path:  # a document's copy is replaced as a whole
        return "".join(parts) + f"<p>Settle with <code>{shown(conflict.settle)}</code></p>"
    parts.append(resolve_buttons(conflict.ref, csrf))
    parts.append(_edit_form(conflict.ref, block.versions[0].text if block.versions else "", csrf, n))
    return "".join(parts)


def _runtime_sides(store: Store, conflict: ConflictRecord) -> tuple[str, str]:
    """The runtime item's text as this side has it and as the other side's record holds it."""
    from gitmem.fsio import read_text

    try:
        data = json.loads(read_text(store.path(conflict.path)))
    except (OSError, ValueError):
        return "", ""
    items = [i for v in (data.values() if isinstance(data, dict) else [data]) if isinstance(v, list)
             for i in v if isinstance(i, dict) and i.get("id") == conflict.entry_id]
    if not items:
        return "", ""
    item = items[0]
    theirs = (item.get("conflict") or {}).get("theirs") or {}
    return str(item.get("content", "")), str(theirs.get("content", ""))


def _record_card(store: Store, conflict: ConflictRecord, csrf: str) -> str:
    if not conflict.path.endswith("/runtime/memories.json"):
        return f"<p>Settle with <code>{shown(conflict.settle)}</code></p>"
    ours, theirs = _runtime_sides(store, conflict)
    return (versions_side_by_side([{"from": conflict.ours, "text": ours},
                                   {"from": conflict.theirs, "text": theirs}])
            + "<h3>Word by word</h3>" + word_diff(ours, theirs)
            + resolve_buttons(conflict.ref, csrf, ("ours", "theirs")))


def conflicts(store: Store, csrf: str) -> str:
    """Every place left between markers or in a record, and the ways to settle it."""
    from gitmem.sync.conflicts import list_conflicts

    found = list_conflicts(store)
    if not found:
        return notice("no conflicts")
    parts = []
    for n, c in enumerate(found):
        where = f"{c.path}:{c.line}" if c.line else c.path
        head = (f'<article class="card conflict"><h2>{shown(c.title or c.ref)}</h2>'
                f"<p><code>{shown(where)}</code> [{escape(c.kind)}]</p>"
                f"<p>Ours: {shown(c.ours)}<br>Theirs: {shown(c.theirs)}</p>")
        body = _record_card(store, c, csrf) if c.kind == "record" else _block_card(store, c, csrf, n)
        parts.append(head + body + "</article>")
    return "".join(parts)
