"""`gitmem new`: an entry template filled in, edited by a person, and recorded through the store.

The templates ship in `templates/` (entry.md, decision.md, state.md, working.md; topic.md is
the shape of a new topic file). An edited draft is recorded by the same verbs as the CLI
(remember, decision, state, working), so it is validated the same way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from gitmem import caller
from gitmem.errors import InvalidInputError
from gitmem.format import layers as L

if TYPE_CHECKING:
    from gitmem.store.store import Store
    from gitmem.verbs.entries import WriteResult

HELP = (
    "<!-- gitmem new: write the heading after '## ' and the text below it, adjust the fields,\n"
    "     then save and close. Leave the draft unchanged or empty to record nothing.\n"
    "     Id, Created and Verified are filled in by gitmem. -->\n"
)
TEMPLATE_FOR_LAYER = {"decisions": "decision.md", "state": "state.md", "working": "working.md"}
ASSIGNED_FIELDS = ("Id", "Created", "Verified", "Updated")


@dataclass(frozen=True)
class Draft:
    """What a person wrote into the template."""

    title: str
    body: str
    fields: dict[str, str] = field(default_factory=dict)


def template_name(layer: str) -> str:
    L.layer_spec(layer)
    if layer == "junk":
        raise InvalidInputError("junk is archaeology: nothing is written there with `gitmem new`")
    return TEMPLATE_FOR_LAYER.get(layer, "entry.md")


def fill(template: str, values: dict[str, str]) -> str:
    """Replace every {{name}} placeholder."""
    for key, value in values.items():
        template = template.replace("{{" + key + "}}", value)
    return template


def render_draft(layer: str, now: datetime, title: str = "") -> str:
    """The text the editor opens: a short help comment and the layer's template."""
    from gitmem.resources import read_text

    values = {"title": title, "body": "", "today": now.date().isoformat(),
              "now": now.strftime("%Y-%m-%d %H:%M")}
    return HELP + "\n" + fill(read_text(f"templates/{template_name(layer)}"), values)


def edit_draft(root: Path, original: str) -> tuple[str | None, Path]:
    """Open the template in $VISUAL/$EDITOR as a file under state/drafts/ (None: not saved),
    and the file's path. Text that is not UTF-8 is refused with the path of the draft, which
    is kept so nothing typed is lost; the caller removes it once the entry is recorded."""
    import click

    folder = root / "state" / "drafts"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"new-{caller.now().strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.md"
    path.write_text(original, encoding="utf-8")
    before = path.stat().st_mtime_ns
    click.edit(filename=str(path), extension=".md")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InvalidInputError(f"the draft is not UTF-8 text (line {line}, byte 0x{data[exc.start]:02x}): "
                                f"nothing recorded; your text is kept in {path}") from None
    saved = path.stat().st_mtime_ns != before or text != original
    return (text if saved else None), path


def read_draft(edited: str | None, original: str) -> Draft:
    """Parse an edited draft; an unchanged or empty one is refused."""
    from gitmem.format.markdown import parse_topic_file

    if edited is None or edited.replace("\r\n", "\n") == original:
        raise InvalidInputError("the draft was left unchanged: nothing recorded")
    text = edited.replace("\r\n", "\n").replace(HELP, "")
    if not text.strip():
        raise InvalidInputError("the draft is empty: nothing recorded")
    document = parse_topic_file(text, "<draft>")
    if len(document.entries) != 1:
        raise InvalidInputError(
            f"the draft must hold exactly one '## ' entry (found {len(document.entries)}): nothing recorded"
        )
    entry = document.entries[0]
    if not entry.title.strip():
        raise InvalidInputError("the entry has no heading: nothing recorded")
    if not entry.body.strip():
        raise InvalidInputError("the entry has no text: nothing recorded")
    fields = {k: v for k, v in entry.fields.items() if k not in ASSIGNED_FIELDS and v}
    return Draft(entry.title.strip(), entry.body.strip(), fields)


def record_draft(store: Store, draft: Draft, layer: str, *, topic: str | None = None,
                 scope: str = "global", allow_secret: bool = False) -> WriteResult:
    """Record a draft through the verb that owns its layer."""
    from gitmem.verbs.decisions import decision, parse_decision_body
    from gitmem.verbs.entries import remember

    fields = dict(draft.fields)
    if layer == "state":
        from gitmem.verbs.workfiles import record_state

        return record_state(store, draft.title, draft.body, allow_secret=allow_secret)
    if layer == "working":
        from gitmem.verbs.workfiles import WorkingUpdate, record_working

        return record_working(store, WorkingUpdate(draft.title, draft.body, allow_secret=allow_secret))
    importance = fields.pop("Importance", None)
    if layer == "decisions":
        parts = parse_decision_body(draft.body)
        rationale = parts.get("rationale")
        if not isinstance(rationale, str) or not rationale:
            raise InvalidInputError("a decision needs a **Rationale:** section")
        alternatives = parts.get("alternatives")
        context, consequences = parts.get("context"), parts.get("consequences")
        return decision(
            store, draft.title, rationale=rationale,
            context=context if isinstance(context, str) and context else None,
            alternatives=alternatives if isinstance(alternatives, list) else [],
            consequences=consequences if isinstance(consequences, str) and consequences else None,
            topic=topic, importance=importance, scope=scope, allow_secret=allow_secret,
        )
    return remember(
        store, draft.body, layer, topic=topic, title=draft.title, importance=importance,
        volatility=fields.pop("Volatility", None), until=fields.pop("Valid-until", None),
        source=fields.pop("Source", None), supersedes=fields.pop("Supersedes", None),
        scope=scope, extra_fields=fields or None, allow_secret=allow_secret,
    )
