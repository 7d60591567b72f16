"""The page's read views: overview, browse, a topic file, search, an entry, conflicts, hot memory.

Each view is parse → library call → render; the library functions are the ones the CLI calls.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from html import escape
from typing import Any

from gitmem.store.store import Store
from gitmem.web.html import (
    GRADES,
    attr,
    badge,
    button_form,
    csrf_field,
    entry_card,
    freshness_chart,
    markdown,
    notice,
    shown,
    table,
    url,
)


def overview(store: Store, csrf: str) -> str:
    from gitmem.sync.conflicts import list_conflicts
    from gitmem.verbs.reads import list_entries
    from gitmem.verbs.status import status

    data = status(store)
    records = list_entries(store)
    grades: dict[str, Counter[str]] = defaultdict(Counter)
    for record in records:
        grades[record["layer"]][record.get("freshness", "fresh")] += 1
    scopes = table(("Scope", "Layer", "Topics", "Entries"), [
        (f'<a href="{url("/browse", scope=scope)}">{escape(scope)}</a>',
         f'<a href="{url("/browse", scope=scope, layer=layer)}">{escape(layer)}</a>',
         str(n["topics"]), str(n["entries"]))
        for scope, layers in data["layers"].items() for layer, n in layers.items()
    ], "Scopes and layers")
    conflicts = list_conflicts(store)
    sync = data.get("sync") or {}
    facts = [
        ("Entries", str(data["entries"])),
        ("Branch", escape(str(data["branch"]))),
        ("Remote", shown(data.get("remote") or "none")),
        ("Last sync", shown(sync.get("lastSuccess") or sync.get("lastAttempt") or "never")),
        ("Sync outcome", shown(sync.get("outcome") or sync.get("error") or "—")),
        ("Conflicts", f'<a href="/conflicts">{len(conflicts)}</a>'),
        ("Problems", str(len(data["problems"]))),
        ("Pending digests", escape(str(data.get("pending", 0)))),
        ("Uncommitted files", str(len(data["dirty"]))),
    ]
    facts_html = "<dl class=\"facts\">" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts) + "</dl>"
    problems = "".join(f"<li><code>{shown(p)}</code></li>" for p in data["problems"][:20])
    problems_html = f"<h2>Problems</h2><ul>{problems}</ul>" if problems else ""
    chart = freshness_chart({layer: dict(c) for layer, c in sorted(grades.items())})
    return f"{facts_html}<h2>Freshness</h2>{chart}<h2>Where it lives</h2>{scopes}{problems_html}"


def browse(store: Store, csrf: str, scope: str = "", layer: str = "") -> str:
    """Scope → layer → topic, each topic a link to its file."""
    from gitmem.verbs.reads import list_entries

    topics: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    for record in list_entries(store, include_all=True):
        if (scope and record["scope"] != scope) or (layer and record["layer"] != layer):
            continue
        topics[(record["scope"], record["layer"], record["path"])][record.get("freshness", "fresh")] += 1
    if not topics:
        return notice("no entries here yet")
    rows = []
    for (s, lay, path), grades in sorted(topics.items()):
        summary = " ".join(f"{badge(g)} {grades[g]}" for g in GRADES if grades.get(g))
        rows.append((escape(s), escape(lay), f'<a href="{url("/topic", path=path)}">{shown(path)}</a>',
                     summary))
    return table(("Scope", "Layer", "Topic file", "Freshness"), rows, "Topic files")


def topic(store: Store, csrf: str, path: str) -> tuple[int, str]:
    """One topic file: its entries as cards, in file order."""
    from gitmem.verbs.reads import topic_records

    records = topic_records(store, path)
    if not records:
        return 200, notice(f"no entries in {path} yet")
    return 200, f"<p><code>{shown(path)}</code></p>" + "".join(
        entry_card(r, csrf) for r in records)


def search_form(query: str, filters: dict[str, str]) -> str:
    def choice(name: str, options: tuple[str, ...]) -> str:
        opts = "".join(f'<option value="{attr(o)}"{" selected" if filters.get(name) == o else ""}>'
                       f"{escape(o or 'any')}</option>" for o in options)
        return f'<label>{escape(name.capitalize())} <select name="{name}">{opts}</select></label>'

    from gitmem.format.layers import LAYERS

    layers = ("", *LAYERS, "documents")
    return (
        '<form role="search" action="/search" method="get" id="search-form" class="search">'
        '<label for="q">Search memory</label>'
        f'<input type="search" id="q" name="q" value="{attr(query)}" autofocus autocomplete="off"'
        ' data-live="/search">'
        f'{choice("layer", layers)}{choice("scope", ("", "global", "workspace"))}'
        f'<label>Workspace <input name="workspace" value="{attr(filters.get("workspace", ""))}"></label>'
        f'<label>Space <input name="space" value="{attr(filters.get("space", ""))}"></label>'
        f'{choice("freshness", ("", *GRADES))}'
        '<button type="submit">Search</button></form>'
    )


def search_results(store: Store, query: str, filters: dict[str, str]) -> str:
    """The hits of `gitmem search`, same ranking, with path:line and freshness."""
    from gitmem.verbs.search import search

    if not query.strip():
        return '<div id="results" aria-live="polite"></div>'
    hits = search(store, query, scope=filters.get("scope") or None,
                  workspace=filters.get("workspace") or None, layer=filters.get("layer") or None,
                  space=filters.get("space") or None, limit=50)
    wanted = filters.get("freshness")
    hits = [h for h in hits if not wanted or h.get("freshness") == wanted]
    if not hits:
        return '<div id="results" aria-live="polite"><p>No matches.</p></div>'
    items = []
    for hit in hits:
        ref = hit.get("ref") or hit.get("id") or ""
        title = shown(hit["title"])
        link = f'<a href="{url("/entry", id=ref)}">{title}</a>' if ref else title
        items.append(
            f'<li class="hit"><h2>{link} {badge(hit.get("freshness", "fresh"))}</h2>'
            f'<p class="where"><code>{shown(hit["path"])}:{hit["line"]}</code>'
            f' {escape(hit["scope"])}/{escape(hit["layer"])}</p>'
            f'<p class="snippet">{shown(hit.get("snippet", ""))}</p></li>'
        )
    return (f'<div id="results" aria-live="polite"><p>{len(hits)} results</p>'
            f'<ol class="hits">{"".join(items)}</ol></div>')


def entry(store: Store, csrf: str, entry_id: str) -> str:
    """One entry: its card, fields, history, and the actions on it."""
    from gitmem.provenance.why import entry_log
    from gitmem.verbs.edit import entry_version
    from gitmem.verbs.reads import show

    record = show(store, entry_id)
    fields = "".join(f"<dt>{shown(k)}</dt><dd>{shown(v)}</dd>" for k, v in record["fields"].items())
    parts = [entry_card(record, csrf), f'<h2>Fields</h2><dl class="meta">{fields}</dl>']
    if record.get("conflict"):
        parts.append(_conflict_versions(record["conflict"]["versions"]))
        parts.append(_resolve_buttons(record["ref"], csrf))
    else:
        ref = record["ref"]
        forget_label, forget_action = (("Undo forget", "/entry/undo") if record["status"] == "forgotten"
                                       else ("Forget", "/entry/forget"))
        parts.append('<div class="actions">' + button_form(forget_action, forget_label, csrf,
                                                           fields={"id": ref}, kind="danger") + "</div>")
        found = store.locate(record["id"]) if record.get("space") in (None, "", "home") else None
        version = entry_version(found.entry) if found is not None else ""
        parts.append(
            f'<h2>Edit</h2><form method="post" action="/entry/edit" class="edit">{csrf_field(csrf)}'
            f'<input type="hidden" name="id" value="{attr(ref)}">'
            f'<input type="hidden" name="version" value="{attr(version)}">'
            f'<label for="edit-title">Title</label><input id="edit-title" name="title"'
            f' value="{attr(record["title"])}" required maxlength="200">'
            f'<label for="edit-body">Body</label><textarea id="edit-body" name="body" rows="8"'
            f' required>{escape(record["body"])}</textarea>'
            '<button type="submit">Save</button></form>'
        )
    try:
        versions = entry_log(store, record["id"])
    except Exception:  # history is a help, never a reason to fail the page
        versions = []
    if versions:
        rows = [(escape(str(v["date"])), shown(v["machine"] or v["author"] or ""),
                 escape(str(v["kind"])), shown(v["message"]) + _summary(v),
                 f'<code>{escape(str(v["short"]))}</code>') for v in versions]
        parts.append("<h2>History</h2>" + table(("Date", "Who", "Change", "Message", "Commit"), rows))
    return "".join(parts)


def _summary(version: dict[str, Any]) -> str:
    summary = version.get("summary")
    return f'<br><small>{shown(summary)}</small>' if summary else ""


def _conflict_versions(versions: list[dict[str, Any]]) -> str:
    cols = "".join(f'<section class="side"><h3>{shown(v["from"])}</h3>'
                   f'<div class="body">{markdown(v["text"])}</div></section>' for v in versions)
    return f'<div class="sides">{cols}</div>'


def _resolve_buttons(ref: str, csrf: str) -> str:
    return '<div class="actions">' + "".join(
        button_form("/resolve", label, csrf, fields={"target": ref, "how": how})
        for label, how in (("Keep ours", "ours"), ("Keep theirs", "theirs"), ("Keep both", "both"))
    ) + "</div>"


def conflicts(store: Store, csrf: str) -> str:
    """Every place left between markers, both sides, and the three ways to settle it."""
    from gitmem.sync.conflicts import list_conflicts
    from gitmem.verbs.reads import conflict_of

    found = list_conflicts(store)
    if not found:
        return notice("no conflicts")
    parts = []
    for c in found:
        where = f"{c.path}:{c.line}" if c.line else c.path
        head = (f'<article class="card conflict"><h2>{shown(c.title or c.ref)}</h2>'
                f"<p><code>{shown(where)}</code> [{escape(c.kind)}]</p>"
                f"<p>Ours: {shown(c.ours)}<br>Theirs: {shown(c.theirs)}</p>")
        detail = conflict_of(store, c.path, c.entry_id) if c.entry_id else None
        body = _conflict_versions(detail["versions"]) if detail else ""
        settle = (_resolve_buttons(c.ref, csrf) if c.kind != "record"
                  else f"<p>Settle with <code>{shown(c.settle)}</code></p>")
        parts.append(head + body + settle + "</article>")
    return "".join(parts)


def hot(store: Store, csrf: str) -> str:
    """USER.md and MEMORY.md items per scope with their budgets; the documents of each scope."""
    from gitmem.documents.verbs import list_documents
    from gitmem.runtime.verbs import show as runtime_show

    data = runtime_show(store)
    parts = []
    for block in data["scopes"]:
        items = "".join(f'<li><span class="meta">{shown(i.get("meta", ""))}</span> {shown(i["content"])}</li>'
                        for i in block["items"])
        parts.append(
            f'<section class="card"><h2>{shown(block["path"])}</h2>'
            f'<p><label>Budget <progress max="{block["limit"]}" value="{block["bytes"]}">'
            f'{block["bytes"]} bytes</progress></label> {block["bytes"]} of {block["limit"]} bytes</p>'
            f"<ul>{items or '<li>empty</li>'}</ul></section>"
        )
    docs = list_documents(store, include_all=True)
    rows = [(shown(d.get("id", "")), shown(d.get("title", "")), escape(str(d.get("status", ""))),
             shown(d.get("description", ""))) for d in docs]
    parts.append("<h2>Documents</h2>" + (table(("Id", "Title", "Status", "Description"), rows)
                                         if rows else notice("no documents")))
    return "".join(parts)
