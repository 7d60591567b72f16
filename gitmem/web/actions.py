"""The page's writes: each one library call, one commit with the message the CLI would write.

Each handler takes the form and answers (where to go next, what was done, in words)."""

from __future__ import annotations

from collections.abc import Callable

from gitmem.errors import ConflictError, InvalidInputError
from gitmem.format import layers as L
from gitmem.store.store import Store
from gitmem.web.html import markdown, shown, url

Handler = Callable[[Store, dict[str, str]], tuple[str, str]]


def _required(form: dict[str, str], name: str) -> str:
    value = form.get(name, "").strip()
    if not value:
        raise InvalidInputError(f"the form has no {name}")
    return value


def _entry_page(entry_id: str) -> str:
    return url("/entry", id=entry_id).replace("&amp;", "&")


def _said(entry_id: str, verb: str, done: object) -> str:
    changed, note = getattr(done, "changed", True), getattr(done, "note", "")
    return f"{verb} {entry_id}" if changed else f"{entry_id}: {note or 'nothing changed'}"


# -- entries ------------------------------------------------------------------------------------
def _edit(store: Store, form: dict[str, str]) -> tuple[str, str]:
    from gitmem.verbs.edit import edit_entry

    entry_id = _required(form, "id")
    done = edit_entry(store, entry_id, title=form.get("title", ""), body=form.get("body", ""),
                      expected=form.get("version") or None)
    return _entry_page(entry_id), _said(entry_id, "edited", done)


def _verify(store: Store, form: dict[str, str]) -> tuple[str, str]:
    from gitmem.verbs.entries import verify

    entry_id = _required(form, "id")
    return _entry_page(entry_id), _said(entry_id, "verified", verify(store, entry_id))


def _forget(store: Store, form: dict[str, str], undo: bool = False) -> tuple[str, str]:
    from gitmem.verbs.entries import forget

    entry_id = _required(form, "id")
    done = forget(store, entry_id, undo=undo)
    return _entry_page(entry_id), _said(entry_id, "brought back" if undo else "forgot", done)


def _supersede(store: Store, form: dict[str, str]) -> tuple[str, str]:
    """`gitmem remember TEXT --supersedes ID` in the entry's own scope, layer and topic file."""
    from gitmem.verbs.entries import remember

    entry_id, text = _required(form, "id"), _required(form, "text")
    found = store.locate(entry_id)
    scope = ("global", None) if found.scope == L.GLOBAL else ("workspace", found.scope)
    done = remember(store, text, found.layer, topic=found.topic, title=form.get("title") or None,
                    supersedes=entry_id, scope=scope[0], workspace=scope[1])
    new_id = done.id or entry_id
    return _entry_page(new_id), f"{new_id} supersedes {entry_id}" if done.changed else (
        f"{new_id}: {done.note or 'nothing changed'}")


def _move(store: Store, form: dict[str, str]) -> tuple[str, str]:
    from gitmem.verbs.moves import move_entry

    entry_id = _required(form, "id")
    moved = move_entry(store, entry_id, _required(form, "topic"), form.get("layer") or None)
    return _entry_page(entry_id), f"moved {entry_id}: {moved.source} -> {moved.target}"


def _relate(store: Store, form: dict[str, str]) -> tuple[str, str]:
    from gitmem.verbs.relations import relate

    entry_id = _required(form, "id")
    done = relate(store, entry_id, _required(form, "type"), _required(form, "other"))
    return _entry_page(entry_id), f"{done.id}: {done.note}"


# -- conflicts ----------------------------------------------------------------------------------
def _resolve(store: Store, form: dict[str, str]) -> tuple[str, str]:
    from gitmem.verbs.resolve import resolve

    target, how = _required(form, "target"), _required(form, "how")
    if how not in ("ours", "theirs", "both"):
        raise InvalidInputError(f"unknown way to settle {how!r}: ours, theirs or both")
    result = resolve(store, target, how)
    return "/conflicts", f"settled {target}: {result.kept}" + (
        f" (new: {', '.join(result.new_ids)})" if result.new_ids else "")


def _resolve_edited(store: Store, form: dict[str, str]) -> tuple[str, str]:
    from gitmem.verbs.resolve import resolve_with_text

    target = _required(form, "target")
    result = resolve_with_text(store, target, form.get("text", ""))
    return "/conflicts", f"settled {target}: {result.kept}"


# -- the hot tier and documents -----------------------------------------------------------------
def _runtime_scope(form: dict[str, str]) -> dict[str, str | None]:
    key = form.get("scope") or L.GLOBAL
    return {"target": form.get("target") or "memory",
            "scope": "global" if key == L.GLOBAL else "workspace",
            "workspace": None if key == L.GLOBAL else key}


def _runtime(verb: str) -> Handler:
    def run(store: Store, form: dict[str, str]) -> tuple[str, str]:
        from gitmem.runtime import verbs as rt

        where = _runtime_scope(form)
        if verb == "add":
            done = rt.add(store, _required(form, "text"), importance=form.get("importance") or "normal",
                          **where)  # type: ignore[arg-type]
        elif verb == "replace":
            done = rt.replace_item(store, _required(form, "item"), _required(form, "text"),
                                   seen=form.get("seen"), **where)  # type: ignore[arg-type]
        elif verb == "remove":
            done = rt.remove_item(store, _required(form, "item"), seen=form.get("seen"),
                                  **where)  # type: ignore[arg-type]
        else:
            done = rt.archive_item(store, _required(form, "item"), seen=form.get("seen"),
                                   **where)  # type: ignore[arg-type]
        return "/hot", done.text().replace("\n", "; ")
    return run


def _document(verb: str) -> Handler:
    def run(store: Store, form: dict[str, str]) -> tuple[str, str]:
        from gitmem.documents import verbs as docs

        doc_id = _required(form, "id")
        done = docs.archive(store, doc_id) if verb == "archive" else docs.restore(store, doc_id)
        return "/hot", f"{done.action} {doc_id}" + (f": {'; '.join(done.notes)}" if done.notes else "")
    return run


# -- the review queue ---------------------------------------------------------------------------
def _review_accept(store: Store, form: dict[str, str]) -> tuple[str, str]:
    from gitmem.consolidate.review import review_accept

    done = review_accept(store, _required(form, "item"), text=form.get("text"))
    if done.get("already"):
        return "/review", f"{done['item']} was {done['note']}: it is {done['id']}"
    return "/review", f"accepted {done['item']}{' (edited)' if done['edited'] else ''}: {done['id']}"


def _review_reject(store: Store, form: dict[str, str]) -> tuple[str, str]:
    from gitmem.consolidate.review import review_reject

    done = review_reject(store, _required(form, "item"), reason=form.get("reason", ""))
    return "/review", f"rejected {done['item']}: it will not be proposed again"


# -- settings -----------------------------------------------------------------------------------
def _shared_settings(store: Store, form: dict[str, str]) -> tuple[str, str]:
    from gitmem.verbs.config import settings_set
    from gitmem.web.settings_view import SHOWN, form_value, page_settings

    now = {s.key: form_value(s.value) for s in page_settings(store)}
    changes = {}
    for key, value in form.items():
        if key == "csrf" or key.startswith(SHOWN):
            continue
        was = form.get(SHOWN + key, now.get(key))
        if value.strip() == (was or "").strip():
            continue  # not changed on the page: what another writer set since stays
        if was is not None and now.get(key) != was:
            raise ConflictError(f"{key} was changed to {now.get(key)!r} since the page was shown; "
                                "nothing was saved: reload the page and save again")
        changes[key] = value.strip()
    if not changes:
        return "/settings", "settings: nothing changed"
    done = [s for s in settings_set(store, changes) if s.changed]
    return "/settings", ("config set " + ", ".join(f"{s.key}={form_value(s.value)}" for s in done)
                         if done else "settings: nothing changed")


def _remote(store: Store, form: dict[str, str]) -> tuple[str, str]:
    from gitmem.sync.remote import remote_set

    data = remote_set(store, _required(form, "url"), branch=form.get("branch", "").strip() or None,
                      token=form.get("token") or None)
    saved = f"; token saved ({data['token_store']})" if data["token_saved"] else ""
    return "/settings", f"remote: {data['remote']} (branch {data['branch']}){saved}"


def _model(verb: str) -> Handler:
    def run(store: Store, form: dict[str, str]) -> tuple[str, str]:
        from gitmem.models.config import add_rung, remove_rung

        name = _required(form, "name")
        if verb == "remove":
            remove_rung(store.root, name)
            return "/settings", f"removed model {name}"
        timeout = form.get("timeout", "").strip()
        try:
            seconds = float(timeout) if timeout else None
        except ValueError:
            raise InvalidInputError(f"the timeout must be a number of seconds, not {timeout!r}") from None
        add_rung(store.root, name, _required(form, "command"), seconds)
        return "/settings", f"model {name} saved"
    return run


HANDLERS: dict[str, Handler] = {
    "/entry/edit": _edit, "/entry/verify": _verify, "/entry/forget": _forget,
    "/entry/undo": lambda s, f: _forget(s, f, undo=True), "/entry/supersede": _supersede,
    "/entry/move": _move, "/entry/relate": _relate,
    "/resolve": _resolve, "/resolve/edit": _resolve_edited,
    **{f"/runtime/{v}": _runtime(v) for v in ("add", "replace", "remove", "archive")},
    "/doc/archive": _document("archive"), "/doc/restore": _document("restore"),
    "/review/accept": _review_accept, "/review/reject": _review_reject,
    "/settings/shared": _shared_settings, "/settings/remote": _remote,
    "/settings/model/add": _model("add"), "/settings/model/remove": _model("remove"),
}
PATHS = tuple(HANDLERS)


def run(store: Store, path: str, form: dict[str, str]) -> tuple[str, str]:
    """Do one write; (where to go next, what was done)."""
    handler = HANDLERS.get(path)
    if handler is None:
        raise InvalidInputError(f"no such action {path}")
    return handler(store, form)


def after_refusal(store: Store, path: str, form: dict[str, str]) -> str:
    """What a refused write shows below its message: for an edit, both versions side by side,
    so the text typed is not lost and the newer one can be compared; for any other form with a
    text, that text."""
    if path != "/entry/edit" or not form.get("id"):
        typed = form.get("text", "") if path != "/settings/remote" else ""
        return (f'<h2>Your text (not saved)</h2><pre class="typed">{shown(typed)}</pre>'
                if typed.strip() else "")
    from gitmem.verbs.reads import show

    try:
        current = show(store, form["id"])
    except Exception:  # the entry may be gone: the typed text is still shown below
        current = {"title": "(not found)", "body": ""}
    return (
        '<div class="sides">'
        f'<section class="side"><h2>Now in the store</h2><h3>{shown(current["title"])}</h3>'
        f'<div class="body">{markdown(str(current["body"]))}</div></section>'
        f'<section class="side"><h2>Your text (not saved)</h2><h3>{shown(form.get("title", ""))}</h3>'
        f'<pre class="typed">{shown(form.get("body", ""))}</pre></section></div>'
        f'<p><a href="{url("/entry", id=form["id"])}">Open the entry again</a></p>'
    )
