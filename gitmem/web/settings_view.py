"""The settings page: memory.json's shared settings (each checked by its reader's own rule when
set), and this machine's own: the remote and branch (with a write-only token field: a token is
never shown back, only where git finds credentials), and the model ladder (state/models.json)."""

from __future__ import annotations

import json
from html import escape

from gitmem.store.store import Store
from gitmem.verbs.config import SHARED, SettingValue, settings_list
from gitmem.web.html import attr, button_form, csrf_field, shown, table


def settings(store: Store, csrf: str) -> str:
    return _shared(store, csrf) + _remote(store, csrf) + _ladder(store, csrf)


def form_value(value: object) -> str:
    """A setting's value as the page's form holds it (and `config set` parses it)."""
    return value if isinstance(value, str) else "" if value is None else json.dumps(value)


SHOWN = "shown:"  # a form field carrying the value a setting had when the page showed it


def page_settings(store: Store) -> list[SettingValue]:
    """The shared settings the page edits: all of memory.json's but the remote and branch,
    which have their own form."""
    return [s for s in settings_list(store) if s.where == SHARED and not s.key.startswith("git.")]


def _shared(store: Store, csrf: str) -> str:
    rows = []
    for setting in page_settings(store):
        ident = "set-" + setting.key.replace(".", "-")
        problem = f' <strong class="problem">{shown(setting.problem)}</strong>' if setting.problem else ""
        # Not `required`: an unset setting (its default in force) is shown empty. The value
        # shown goes back with the form, so a save writes only what was changed on the page.
        value = attr(form_value(setting.value))
        rows.append(f'<dt><label for="{ident}">{escape(setting.help)}</label></dt>'
                    f'<dd><input id="{ident}" name="{attr(setting.key)}" value="{value}">'
                    f'<input type="hidden" name="{attr(SHOWN + setting.key)}" value="{value}">'
                    f' <small>{escape(setting.key)}: {escape(setting.allowed)},'
                    f" default {escape(form_value(setting.default))}</small>{problem}</dd>")
    return ('<h2>Shared settings (memory.json, committed)</h2>'
            f'<form method="post" action="/settings/shared" class="edit">{csrf_field(csrf)}'
            f'<dl class="meta settings">{"".join(rows)}</dl><button type="submit">Save shared settings'
            "</button></form>")


def _remote(store: Store, csrf: str) -> str:
    from gitmem.sync.remoteinfo import remote_show

    data = remote_show(store)
    credentials = (data.get("credentials") or {}).get("detail") or "none"
    return (
        "<h2>This machine: remote and branch</h2>"
        f'<p>Now: <code>{shown(data["remote"] or "none")}</code>, branch <code>{shown(data["branch"])}</code>'
        f' (upstream {shown(data["upstream"] or "none")}); credentials: {shown(credentials)}.</p>'
        f'<form method="post" action="/settings/remote" class="edit">{csrf_field(csrf)}'
        '<label for="remote-url">Remote URL</label>'
        f'<input id="remote-url" name="url" value="{attr(data["remote"] or "")}" required maxlength="2000">'
        '<label for="remote-branch">Branch</label>'
        f'<input id="remote-branch" name="branch" value="{attr(data["branch"])}" required maxlength="200">'
        '<label for="remote-token">Token (write-only: stored in git\'s credential helper or'
        ' state/git-token, never shown here)</label>'
        '<input id="remote-token" name="token" type="password" autocomplete="off" value="">'
        '<button type="submit">Set the remote</button></form>')


def _ladder(store: Store, csrf: str) -> str:
    from gitmem.models.config import load_saved_ladder, redact_command

    ladder = load_saved_ladder(store.root)
    rows = [(escape(r.name), f"<code>{shown(redact_command(r.command))}</code>", f"{r.timeout:g} s",
             button_form("/settings/model/remove", "Remove", csrf, fields={"name": r.name}, kind="danger"))
            for r in ladder.rungs]
    listed = table(("Model", "Command", "Timeout", ""), rows, "Tried in this order") if rows else \
        "<p>No model configured on this machine.</p>"
    return (
        "<h2>This machine: model ladder (state/models.json)</h2>" + listed
        + f'<form method="post" action="/settings/model/add" class="edit">{csrf_field(csrf)}'
        '<label for="model-name">Name</label><input id="model-name" name="name" required maxlength="32">'
        '<label for="model-command">Command (reads the prompt on stdin)</label>'
        '<input id="model-command" name="command" required maxlength="2000">'
        '<label for="model-timeout">Timeout in seconds (optional)</label>'
        '<input id="model-timeout" name="timeout" inputmode="decimal">'
        '<button type="submit">Add or change the model</button></form>')
