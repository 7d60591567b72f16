"""HTML building blocks of the page: escaping, the layout, entry cards, badges.

Plain functions over strings: every value is escaped where it enters the markup, and every text
taken from the store passes through the secret mask first (`shown`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import urlencode

from gitmem.secrets.mask import hide_all, hide_secrets

NAV = (("/", "Overview"), ("/browse", "Browse"), ("/search", "Search"),
       ("/conflicts", "Conflicts"), ("/hot", "Hot memory"), ("/review", "Review"),
       ("/settings", "Settings"))
GRADES = ("fresh", "aging", "stale", "expired")


def shown(text: object) -> str:
    """Store text as the page shows it: secrets masked, then HTML-escaped."""
    return escape(hide_secrets(str(text)))


def shown_all(texts: Iterable[object]) -> list[str]:
    """Store texts as the page shows them, masked in one pass (hide_all), then HTML-escaped."""
    return [escape(text) for text in hide_all([str(text) for text in texts])]


def holds_secret(*texts: str) -> bool:
    """Whether the page would mask any of these texts."""
    return any(hide_secrets(text) != text for text in texts)


def not_editable(what: str) -> str:
    """In place of a form prefilled with text that holds a likely secret: the page never shows
    one, and a masked text saved back would lose it."""
    return (f'<p class="notice">{escape(what)} holds what looks like a secret: the page shows it '
            "masked and does not edit it here; change it in the file or with the CLI.</p>")


def attr(text: object) -> str:
    return escape(str(text), quote=True)


def url(target: str, /, **query: object) -> str:
    """A link with a query string (empty values left out), escaped for an attribute."""
    params = {k: str(v) for k, v in query.items() if v not in (None, "")}
    return attr(f"{target}?{urlencode(params)}" if params else target)


_RENDERERS = threading.local()  # one renderer per thread: making one costs more than a render


def markdown(text: str) -> str:
    """An entry body rendered as CommonMark, raw HTML shown as text, secrets masked."""
    return _rendered(hide_secrets(text))


def _rendered(masked: str) -> str:
    """A body whose secrets are masked already, rendered as CommonMark with raw HTML as text."""
    renderer = getattr(_RENDERERS, "markdown", None)
    if renderer is None:
        from markdown_it import MarkdownIt

        renderer = _RENDERERS.markdown = MarkdownIt("commonmark", {"html": False})
    return str(renderer.render(masked))


def page(title: str, body: str, *, current: str = "", query: str = "", csrf: str = "") -> str:
    """The whole document around one view."""
    here = ' aria-current="page"'
    links = "".join(f'<li><a href="{href}"{here if href == current else ""}>{name}</a></li>'
                    for href, name in NAV)
    return (
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<meta name=\"color-scheme\" content=\"light dark\">"
        f"<meta name=\"csrf\" content=\"{attr(csrf)}\"><link rel=\"icon\" href=\"data:,\">"
        f"<title>{escape(title)} · gitmem</title>"
        "<link rel=\"stylesheet\" href=\"/static/style.css\">"
        "<script src=\"/static/app.js\" defer></script></head><body>"
        "<a class=\"skip\" href=\"#main\">Skip to content</a>"
        "<header><nav aria-label=\"Main\"><strong class=\"brand\">gitmem</strong>"
        f"<ul>{links}</ul></nav>"
        "<form role=\"search\" action=\"/search\" method=\"get\" class=\"quick\">"
        "<label for=\"q-top\" class=\"sr-only\">Search memory</label>"
        f"<input type=\"search\" id=\"q-top\" name=\"q\" value=\"{attr(query)}\""
        " placeholder=\"Search memory\" autocomplete=\"off\"></form></header>"
        f"<main id=\"main\" tabindex=\"-1\"><h1>{escape(title)}</h1>{body}</main></body></html>"
    )


def badge(grade: str, label: str = "") -> str:
    return f'<span class="badge {attr(grade)}" title="{attr(label)}">{escape(grade)}</span>'


def csrf_field(token: str) -> str:
    return f'<input type="hidden" name="csrf" value="{attr(token)}">'


def button_form(action: str, label: str, csrf: str, *, fields: Mapping[str, str] | None = None,
                kind: str = "") -> str:
    """A one-button form posting to `action` (each action is a real <button>)."""
    hidden = "".join(f'<input type="hidden" name="{attr(k)}" value="{attr(v)}">'
                     for k, v in (fields or {}).items())
    cls = f' class="{attr(kind)}"' if kind else ""
    return (f'<form method="post" action="{attr(action)}" class="inline">{csrf_field(csrf)}'
            f'{hidden}<button type="submit"{cls}>{escape(label)}</button></form>')


def table(headers: Iterable[str], rows: Iterable[Iterable[str]], caption: str = "") -> str:
    """A table; cells are already HTML."""
    head = "".join(f"<th scope=\"col\">{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def freshness_chart(counts: Mapping[str, Mapping[str, int]]) -> str:
    """One stacked bar per layer (SVG, no inline style), with the numbers as text beside it."""
    rows = []
    for layer, grades in counts.items():
        total = sum(grades.values()) or 1
        x, rects = 0.0, []
        for grade in GRADES:
            width = 200 * grades.get(grade, 0) / total
            if width:
                rects.append(f'<rect class="{grade}" x="{x:.1f}" y="0" width="{width:.1f}" height="14">'
                             f"<title>{grade}: {grades.get(grade, 0)}</title></rect>")
            x += width
        words = ", ".join(f"{grades.get(g, 0)} {g}" for g in GRADES if grades.get(g, 0))
        rows.append(
            f'<tr><th scope="row">{escape(layer)}</th><td><svg class="bar" width="200" height="14"'
            f' role="img" aria-label="{attr(words)}">{"".join(rects)}</svg></td>'
            f"<td>{escape(words)}</td></tr>"
        )
    return ("<table class=\"chart\"><caption>Freshness per layer</caption><thead><tr>"
            "<th scope=\"col\">Layer</th><th scope=\"col\">Share</th><th scope=\"col\">Entries</th>"
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>")


CARD_FIELDS = ("Importance", "Source", "Relates", "Supersedes", "Superseded-by")


def entry_cards(records: Sequence[Mapping[str, Any]], csrf: str, *, heading: str = "h2") -> str:
    """Entries as cards, every text of every card masked in one pass (hide_all)."""
    texts = [_card_texts(record) for record in records]
    masked = iter(hide_all([text for group in texts for text in group]))
    return "".join(_card(record, csrf, heading, [next(masked) for _ in group])
                   for record, group in zip(records, texts, strict=True))


def entry_card(record: Mapping[str, Any], csrf: str, *, heading: str = "h2") -> str:
    """One entry as a card: title, body, Id, importance, freshness, source, suspect marks."""
    return entry_cards([record], csrf, heading=heading)


def _card_texts(record: Mapping[str, Any]) -> list[str]:
    """The store texts a card shows, in the order _card reads them: title, Id, the fields of
    CARD_FIELDS, where, body."""
    fields = record.get("fields") or {}
    where = f'{record.get("path", "")}:{record.get("line", "")}'
    return [str(record.get("title", "")), str(record.get("ref") or record.get("id") or ""),
            *(str(fields.get(name) or "") for name in CARD_FIELDS), where, str(record.get("body", ""))]


def _card(record: Mapping[str, Any], csrf: str, heading: str, masked: list[str]) -> str:
    """One card from its record and its texts already masked."""
    ref = record.get("ref") or record.get("id") or ""
    fields = record.get("fields") or {}
    title, shown_ref, *values, where, body = masked
    title = escape(title)
    link = f'<a href="{url("/entry", id=ref)}">{title}</a>' if ref else title
    marks = [badge(record.get("freshness", "fresh"), record.get("label", ""))]
    if record.get("status") not in (None, "live"):
        marks.append(f'<span class="badge status">{escape(record["status"])}</span>')
    if record.get("suspect"):
        marks.append('<span class="badge suspect">suspect</span>')
    meta = [f"<dt>Id</dt><dd><code>{escape(shown_ref) or '(none yet)'}</code></dd>"]
    for name, value in zip(CARD_FIELDS, values, strict=True):
        if fields.get(name):
            meta.append(f"<dt>{name}</dt><dd>{escape(value)}</dd>")
    meta.append(f"<dt>Where</dt><dd><code>{escape(where)}</code></dd>")
    reasons = record.get("suspect") or []
    if reasons:  # the newest commit that touched its code, and how many more
        more = f" (and {len(reasons) - 1} earlier)" if len(reasons) > 1 else ""
        meta.append(f"<dt>Suspect</dt><dd>{shown(reasons[0])}{more}</dd>")
    actions = ""
    if ref and record.get("status") != "conflicted":
        actions = '<div class="actions">' + button_form("/entry/verify", "Verify", csrf,
                                                        fields={"id": ref}) + "</div>"
    return (f'<article class="card" aria-labelledby="t-{attr(ref)}">'
            f'<{heading} id="t-{attr(ref)}">{link} {" ".join(marks)}</{heading}>'
            f'<div class="body">{_rendered(body)}</div>'
            f'<dl class="meta">{"".join(meta)}</dl>{actions}</article>')


def notice(text: str, kind: str = "info") -> str:
    role = "alert" if kind == "error" else "status"
    return f'<p class="notice {attr(kind)}" role="{role}">{shown(text)}</p>'
