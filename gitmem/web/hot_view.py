"""The hot tier: USER.md and MEMORY.md items per scope with their budget bars and the forms to
add, replace, remove or archive an item into the layers; the documents of every scope, each one
readable on its own page, with archive and restore."""

from __future__ import annotations

from html import escape
from typing import Any

from gitmem.runtime.model import IMPORTANCE, content_stamp
from gitmem.store.store import Store
from gitmem.web.html import (
    attr,
    button_form,
    csrf_field,
    holds_secret,
    markdown,
    not_editable,
    notice,
    shown,
    table,
    url,
)


def _scope_fields(block: dict[str, Any]) -> dict[str, str]:
    return {"scope": str(block["scope"]), "target": str(block["target"])}


def budget_bar(used: int, limit: int) -> str:
    """Bytes used of the budget as a bar (warn past 80 %, over past 100 %) and as words."""
    share = used / limit if limit else 1.0
    level = "over" if share > 1 else "warn" if share > 0.8 else "ok"
    width = round(200 * min(share, 1.0), 1)
    return (f'<p class="budget"><svg class="bar" width="200" height="14" role="img"'
            f' aria-label="{used} of {limit} bytes"><rect class="track" x="0" y="0" width="200"'
            f' height="14"></rect><rect class="{level}" x="0" y="0" width="{width}" height="14">'
            f"</rect></svg> {used} of {limit} bytes ({round(100 * share)} %)</p>")


def _item(block: dict[str, Any], item: dict[str, Any], csrf: str, n: str) -> str:
    # The text shown goes back with every form: an item changed since is not acted on blindly.
    fields = {**_scope_fields(block), "item": str(item["id"]), "seen": content_stamp(str(item["content"]))}
    hidden = "".join(f'<input type="hidden" name="{k}" value="{attr(v)}">' for k, v in fields.items())
    conflict = ' <span class="badge status">conflict</span>' if item.get("conflict") else ""
    return (
        f'<li class="item"><span class="meta">{shown(item.get("meta", ""))}</span>{conflict}'
        f' {shown(item["content"])}<div class="actions">'
        + button_form("/runtime/archive", "Archive into layers", csrf, fields=fields)
        + button_form("/runtime/remove", "Remove", csrf, fields=fields, kind="danger")
        + (not_editable("This item") if holds_secret(str(item["content"])) else
           f'<details><summary>Replace</summary><form method="post" action="/runtime/replace"'
           f' class="edit">{csrf_field(csrf)}{hidden}<label for="rep-{n}">New text</label>'
           f'<textarea id="rep-{n}" name="text" rows="3" required>{escape(item["content"])}</textarea>'
           '<button type="submit">Replace</button></form></details>')
        + "</div></li>"
    )


def _add_form(block: dict[str, Any], csrf: str, n: int) -> str:
    hidden = "".join(f'<input type="hidden" name="{k}" value="{attr(v)}">'
                     for k, v in _scope_fields(block).items())
    options = "".join(f'<option value="{v}"{" selected" if v == "normal" else ""}>{v}</option>'
                      for v in IMPORTANCE)
    return (f'<form method="post" action="/runtime/add" class="edit">{csrf_field(csrf)}{hidden}'
            f'<label for="add-{n}">Add to {shown(block["path"])}</label>'
            f'<textarea id="add-{n}" name="text" rows="2" required></textarea>'
            f'<label for="imp-{n}">Importance</label><select id="imp-{n}" name="importance">{options}'
            '</select><button type="submit">Add</button></form>')


def hot(store: Store, csrf: str) -> str:
    """Every hot file of every scope with its budget and items; then the documents."""
    from gitmem.documents.verbs import list_documents
    from gitmem.runtime.reads import show as runtime_show

    data = runtime_show(store, scope="all")
    parts = []
    for n, block in enumerate(data["scopes"]):
        items = "".join(_item(block, item, csrf, f"{n}-{k}") for k, item in enumerate(block["items"]))
        parts.append(
            f'<section class="card hotfile"><h2>{shown(block["path"])}</h2>'
            f'{budget_bar(int(block["bytes"]), int(block["limit"]))}'
            f"<ul>{items or '<li>empty</li>'}</ul>{_add_form(block, csrf, n)}</section>")
    docs = list_documents(store, include_all=True)
    rows = []
    for doc in docs:
        doc_id = str(doc.get("id", ""))
        verb, label = (("/doc/restore", "Restore") if doc.get("status") == "archived"
                       else ("/doc/archive", "Archive"))
        rows.append((f'<a href="{url("/doc", id=doc_id)}">{shown(doc_id)}</a>', shown(doc.get("title", "")),
                     escape(str(doc.get("status", ""))), shown(doc.get("description", "")),
                     button_form(verb, label, csrf, fields={"id": doc_id})))
    parts.append("<h2>Documents</h2>" + (table(("Id", "Title", "Status", "Description", ""), rows)
                                         if rows else notice("no documents")))
    return "".join(parts)


def document(store: Store, csrf: str, doc_id: str) -> str:
    """One document: its record and its text (reading it counts as an access, as `doc show`)."""
    from gitmem.documents.verbs import show

    doc = show(store, doc_id)
    facts = [(name, doc.get(key, "")) for name, key in (
        ("Id", "id"), ("Status", "status"), ("Revision", "revision"), ("Scope", "scope"),
        ("Description", "description"), ("Updated", "updatedAt"), ("File", "path"))]
    verb, label = (("/doc/restore", "Restore") if doc.get("status") == "archived"
                   else ("/doc/archive", "Archive"))
    meta = "".join(f"<dt>{escape(k)}</dt><dd>{shown(v)}</dd>" for k, v in facts if v not in ("", None))
    return (f'<dl class="meta">{meta}</dl><div class="actions">'
            f'{button_form(verb, label, csrf, fields={"id": str(doc["id"])})}</div>'
            f'<article class="card document"><h2>{shown(doc.get("title", ""))}</h2>'
            f'<div class="body">{markdown(str(doc.get("body", "")))}</div></article>')
