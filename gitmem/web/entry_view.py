"""The entry page: the card, every field, each version from git with a diff against the one
before, the entry as of a date, and the forms of every write on it (verify, forget, edit,
supersede, move, relate)."""

from __future__ import annotations

from collections import OrderedDict
from html import escape
from typing import Any

from gitmem.errors import GitmemError
from gitmem.format.layers import TOPIC_LAYERS
from gitmem.format.references import RELATION_TYPES
from gitmem.store.store import Store
from gitmem.web.diffs import line_diff
from gitmem.web.html import (
    attr,
    button_form,
    csrf_field,
    entry_card,
    holds_secret,
    markdown,
    not_editable,
    notice,
    shown,
)


def entry(store: Store, csrf: str, entry_id: str, as_of: str = "") -> str:
    """One entry: its card, fields, the as-of view, history, and the actions on it."""
    from gitmem.verbs.reads import show

    record = show(store, entry_id)
    fields = "".join(f"<dt>{shown(k)}</dt><dd>{shown(v)}</dd>" for k, v in record["fields"].items())
    parts = [entry_card(record, csrf), f'<h2>Fields</h2><dl class="meta">{fields}</dl>']
    if record.get("conflict"):
        from gitmem.web.conflict_view import resolve_buttons, versions_side_by_side

        parts.append(versions_side_by_side(record["conflict"]["versions"]))
        parts.append(resolve_buttons(record["ref"], csrf))
    else:
        parts.append(_actions(store, record, csrf))
    parts.append(_as_of(store, record, as_of))
    parts.append(_history(store, record))
    return "".join(parts)


def _form(action: str, legend: str, csrf: str, ref: str, inner: str, button: str) -> str:
    return (f'<form method="post" action="{action}" class="edit">'
            f'<h3>{escape(legend)}</h3>{csrf_field(csrf)}<input type="hidden" name="id" value="{attr(ref)}">'
            f'{inner}<button type="submit">{escape(button)}</button></form>')


def _actions(store: Store, record: dict[str, Any], csrf: str) -> str:
    from gitmem.verbs.edit import entry_version

    ref = record["ref"]
    forget_label, forget_action = (("Undo forget", "/entry/undo") if record["status"] == "forgotten"
                                   else ("Forget", "/entry/forget"))
    parts = ['<div class="actions">' + button_form(forget_action, forget_label, csrf,
                                                   fields={"id": ref}, kind="danger") + "</div>"]
    home = record.get("space") in (None, "", "home")
    found = store.locate(record["id"]) if home else None
    version = entry_version(found.entry) if found is not None else ""
    if holds_secret(record["title"], record["body"]):
        parts.append(not_editable("This entry"))
    else:
        parts.append(_edit_form(csrf, ref, version, record))
    if not home:
        return "".join(parts)
    layers = "".join(f'<option value="{attr(lay)}"{" selected" if lay == record["layer"] else ""}>'
                     f"{escape(lay)}</option>" for lay in TOPIC_LAYERS)
    kinds = "".join(f'<option value="{attr(k)}">{escape(k)}</option>' for k in RELATION_TYPES)
    parts.append('<h2>Change</h2><div class="sides">' + "".join((
        _form("/entry/supersede", "Supersede", csrf, ref,
              '<label for="sup-title">New title (optional)</label>'
              '<input id="sup-title" name="title" maxlength="200">'
              '<label for="sup-text">New text</label>'
              '<textarea id="sup-text" name="text" rows="4" required></textarea>',
              "Supersede with the new text"),
        _form("/entry/move", "Move", csrf, ref,
              f'<label for="mv-topic">Topic</label><input id="mv-topic" name="topic"'
              f' value="{attr(record.get("topic") or "")}" required maxlength="120">'
              f'<label for="mv-layer">Layer</label><select id="mv-layer" name="layer">{layers}</select>',
              "Move"),
        _form("/entry/relate", "Relate", csrf, ref,
              f'<label for="rel-type">Type</label><select id="rel-type" name="type">{kinds}</select>'
              '<label for="rel-other">Other entry Id</label>'
              '<input id="rel-other" name="other" required maxlength="200">',
              "Relate"),
    )) + "</div>")
    return "".join(parts)


def _as_of(store: Store, record: dict[str, Any], when: str) -> str:
    """A date field; with a date, the entry as it was at the end of that day (from git)."""
    form = (f'<h2>As of a date</h2><form method="get" action="/entry" class="inline asof">'
            f'<input type="hidden" name="id" value="{attr(record["ref"])}">'
            f'<label for="as-of">Show this entry as it was on</label>'
            f'<input type="date" id="as-of" name="as_of" value="{attr(when)}" required>'
            '<button type="submit">Show</button></form>')
    if not when:
        return form
    from gitmem.provenance.asof import show_at

    try:
        then = show_at(store, when, record["id"])
    except GitmemError as exc:
        return form + notice(str(exc), "error")
    at = then["as_of"]
    return (form + f'<section class="card asof-result" aria-label="As of {attr(when)}">'
            f'<h3>As of {escape(when)}: {shown(then["title"])}</h3>'
            f'<p class="where">commit <code>{escape(at["commit"][:7])}</code> ({escape(at["date"])}):'
            f' {shown(at["message"])} · <code>{shown(then["path"])}</code> · {escape(then["status"])}</p>'
            f'<div class="body">{markdown(str(then["body"]))}</div>'
            f'<h4>From then to now</h4>{line_diff(_text(then), _text(record))}</section>')


def _text(record: dict[str, Any]) -> str:
    return f'{record["title"]}\n\n{record["body"]}'


class Histories:
    """The versions of the entries shown lately, per store, entry and HEAD: an entry's history
    changes only with a commit, and reading it walks the store's git history."""

    SIZE = 256
    VERSIONS = 50  # the newest versions shown (and read): an entry may have thousands

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[str, str, str | None], list[dict[str, Any]]] = OrderedDict()

    def of(self, store: Store, entry_id: str) -> list[dict[str, Any]]:
        from gitmem.provenance.why import entry_log

        key = (str(store.root), entry_id, store.git.head_oid())
        if key in self._kept:
            self._kept.move_to_end(key)
            return self._kept[key]
        versions = entry_log(store, entry_id, self.VERSIONS)
        self._kept[key] = versions
        while len(self._kept) > self.SIZE:
            self._kept.popitem(last=False)
        return versions


HISTORIES = Histories()


def _history(store: Store, record: dict[str, Any]) -> str:
    """Each version, newest first: author, machine, date, message, and a diff against the one
    before it."""
    try:
        versions = HISTORIES.of(store, record["id"])
    except GitmemError as exc:  # history is a help, never a reason to fail the page
        return "<h2>History</h2>" + notice(f"history unavailable: {exc}", "error")
    if not versions:
        return "<h2>History</h2>" + notice("not committed yet")
    items = []
    for n, version in enumerate(versions):
        older = versions[n + 1]["text"] if n + 1 < len(versions) else None
        who = shown(version["author"] or "")
        machine = f' on {shown(version["machine"])}' if version["machine"] else ""
        summary = f' <small>{shown(version["summary"])}</small>' if version.get("summary") else ""
        items.append(
            f'<li class="version"><details{" open" if n == 0 else ""}><summary>'
            f'<code>{escape(str(version["short"]))}</code> {escape(str(version["date"]))} · {who}{machine}'
            f' · {escape(str(version["kind"]))}: {shown(version["message"])}{summary}</summary>'
            f'{line_diff(older, version["text"])}</details></li>')
    return f'<h2>History</h2><ol class="history">{"".join(items)}</ol>'


def _edit_form(csrf: str, ref: str, version: str, record: dict[str, Any]) -> str:
    return _form(
        "/entry/edit", "Edit title and body", csrf, ref,
        f'<input type="hidden" name="version" value="{attr(version)}">'
        f'<label for="edit-title">Title</label><input id="edit-title" name="title"'
        f' value="{attr(record["title"])}" required maxlength="200">'
        f'<label for="edit-body">Body</label><textarea id="edit-body" name="body" rows="8"'
        f' required>{escape(record["body"])}</textarea>', "Save")
