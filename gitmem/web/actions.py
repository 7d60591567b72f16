"""The page's writes: each one library call, one commit with the message the CLI would write."""

from __future__ import annotations

from gitmem.errors import InvalidInputError
from gitmem.store.store import Store
from gitmem.web.html import markdown, shown, url

PATHS = ("/entry/edit", "/entry/verify", "/entry/forget", "/entry/undo", "/resolve")


def _required(form: dict[str, str], name: str) -> str:
    value = form.get(name, "").strip()
    if not value:
        raise InvalidInputError(f"the form has no {name}")
    return value


def run(store: Store, path: str, form: dict[str, str]) -> tuple[str, str]:
    """Do one write; (where to go next, what was done)."""
    from gitmem.verbs.edit import edit_entry
    from gitmem.verbs.entries import forget, verify
    from gitmem.verbs.resolve import resolve

    if path == "/resolve":
        target, how = _required(form, "target"), _required(form, "how")
        if how not in ("ours", "theirs", "both"):
            raise InvalidInputError(f"unknown way to settle {how!r}: ours, theirs or both")
        result = resolve(store, target, how)
        return "/conflicts", f"settled {target}: kept {result.kept}" + (
            f" (new: {', '.join(result.new_ids)})" if result.new_ids else "")
    entry_id = _required(form, "id")
    back = url("/entry", id=entry_id).replace("&amp;", "&")
    if path == "/entry/edit":
        done = edit_entry(store, entry_id, title=form.get("title", ""), body=form.get("body", ""),
                          expected=form.get("version") or None)
    elif path == "/entry/verify":
        done = verify(store, entry_id)
    elif path == "/entry/forget":
        done = forget(store, entry_id)
    elif path == "/entry/undo":
        done = forget(store, entry_id, undo=True)
    else:
        raise InvalidInputError(f"no such action {path}")
    verb = {"/entry/edit": "edited", "/entry/verify": "verified", "/entry/forget": "forgot",
            "/entry/undo": "brought back"}[path]
    return back, f"{verb} {entry_id}" if done.changed else f"{entry_id}: {done.note or 'nothing changed'}"


def after_refusal(store: Store, path: str, form: dict[str, str]) -> str:
    """What a refused write shows below its message: for an edit, both versions side by side,
    so the text typed is not lost and the newer one can be compared."""
    if path != "/entry/edit" or not form.get("id"):
        return ""
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
