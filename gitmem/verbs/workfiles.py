"""The two single-file workspace layers: state.md (the repository now) and working.md (the agent's head)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from gitmem.errors import InvalidInputError
from gitmem.format import layers as L
from gitmem.format.conflicts import HeldBlocks
from gitmem.format.entry import Entry, TopicFile
from gitmem.format.markdown import new_topic_file
from gitmem.store.settings import working_limits
from gitmem.verbs.blocks import HeldFile, open_held, save_held
from gitmem.verbs.entries import WriteResult, check_text, safe_body, target_scope

if TYPE_CHECKING:
    from gitmem.store.store import Store

STATE_PREAMBLE = (
    "# State — {key}\n\n"
    "What this repository is right now: layout, what is running, what is pending, health.\n"
    "Each section is replaced when it changes (never appended) and carries its own **Verified:** date.\n\n"
)
WORKING_PREAMBLE = (
    "# Working memory — {key}\n\n"
    "THIS FILE BELONGS TO THE AGENT. It is not repository state (that is state.md) and not\n"
    "durable memory (those are the layered entries). It is your own head for this workspace.\n\n"
    "You own it. Read it, edit it, and keep it honest. Write it with `gitmem working`, or edit\n"
    "this file directly. Nothing else writes here, so a stale or empty file means the intent\n"
    "was never recorded.\n\n"
)
WORKING_SECTIONS = ("Task", "Next steps", "Plan", "Blocked by")
ACTIVITY = "Recent activity"


def _section_name(name: str, allowed: tuple[str, ...] | None) -> str:
    cleaned = " ".join(name.split())
    if not cleaned:
        raise InvalidInputError("section must not be empty")
    if cleaned.startswith("#") or len(cleaned) > 80:
        raise InvalidInputError(f"invalid section name {name!r}")
    if allowed is None:
        from gitmem.secrets.scan import refuse_secrets

        refuse_secrets(cleaned, "section name", overridable=False)  # a heading of the file
        return cleaned
    for candidate in allowed:
        if candidate.lower() == cleaned.lower():
            return candidate
    raise InvalidInputError(f"unknown working section {name!r} (use: {', '.join(allowed)})")


def _load(store: Store, relpath: str, layer: str, preamble: str) -> HeldFile:
    """The file with its conflict blocks held aside (see blocks.py), or a new one."""
    edit = open_held(store, relpath)
    if edit is None:
        document = new_topic_file({"layer": layer}, "")
        document.frontmatter_raw = ""
        document.meta = {}
        edit = HeldFile(relpath, "", HeldBlocks(), document)
    edit.document.preamble = preamble  # the header is gitmem's: rewritten canonically on every write
    return edit


def _replace_section(document: TopicFile, section: str, body: str, fields: dict[str, str]) -> bool:
    """Replace a section's body and fields (or append it); False when nothing changed."""
    index = document.find_title(section)
    if index is None:
        document.entries.append(Entry(section, body, fields))
        return True
    current = document.entries[index]
    if current.body == body and all(current.fields.get(k) == v for k, v in fields.items()):
        return False
    document.entries[index] = dataclasses.replace(current, body=body, raw=None).with_fields(**fields)
    return True


def record_state(store: Store, section: str, content: str, *, workspace: str | None = None,
                 allow_secret: bool = False) -> WriteResult:
    """Replace one section of state.md; re-stating it re-verifies it."""
    name = _section_name(section, None)
    body = safe_body(check_text(content, "content", allow_secret=allow_secret))
    with store.writing("state", allow_secret=allow_secret) as txn:
        key = target_scope(store, txn, "state", "workspace", workspace)
        relpath = L.single_file_path(key, "state")
        edit = _load(store, relpath, "state", STATE_PREAMBLE.format(key=key))
        edit.refuse_section(name, "state")
        _replace_section(edit.document, name, body, {"Verified": store.today().isoformat()})
        save_held(store, txn, edit)
        txn.message = f"state: {key} / {name}"
        return WriteResult(None, relpath, bool(txn.touched))


def _stamp(now: datetime) -> str:
    return now.strftime("%Y-%m-%dT%H:%M")


def _append_activity(body: str, note: str, now: datetime, max_items: int, max_chars: int) -> str:
    """Rolling log, newest last: identical consecutive notes are not repeated; trimmed oldest-first."""
    items = [line for line in body.split("\n") if line.startswith("- ")]
    note = " ".join(note.split())
    if items and items[-1].split(" — ", 1)[-1] == note:
        return body
    items.append(f"- {now.strftime('%Y-%m-%d %H:%M')} — {note}")
    while len(items) > max_items or (len(items) > 1 and len("\n".join(items)) > max_chars):
        items.pop(0)
    return "\n".join(items)


@dataclass(frozen=True)
class WorkingUpdate:
    section: str | None = None
    content: str | None = None
    activity: str | None = None
    clear_activity: bool = False
    allow_secret: bool = False  # record text that holds a likely secret anyway


def record_working(store: Store, update: WorkingUpdate, *, workspace: str | None = None) -> WriteResult:
    """Replace a working section and/or add an activity note."""
    if update.section is None and update.activity is None and not update.clear_activity:
        raise InvalidInputError("nothing to record: pass --section with --content, or --activity")
    if (update.section is None) != (update.content is None):
        raise InvalidInputError("--section and --content go together")
    name = _section_name(update.section, WORKING_SECTIONS) if update.section else None
    allow = update.allow_secret
    body = (safe_body(check_text(update.content, "content", allow_secret=allow))
            if update.content is not None else None)
    note = (check_text(update.activity, "activity note", allow_secret=allow)
            if update.activity is not None else None)
    limits = working_limits(store.registry)
    with store.writing("working", allow_secret=allow) as txn:
        key = target_scope(store, txn, "working", "workspace", workspace)
        relpath = L.single_file_path(key, "working")
        edit = _load(store, relpath, "working", WORKING_PREAMBLE.format(key=key))
        document = edit.document
        for touched in [name] if name else []:
            edit.refuse_section(touched, "working")
        if update.clear_activity or note is not None:
            edit.refuse_section(ACTIVITY, "working")
        now = store.now()
        stamp = {"Updated": _stamp(now)}
        if name is not None and body is not None:
            _replace_section(document, name, body, stamp)
        if update.clear_activity:
            _replace_section(document, ACTIVITY, "", stamp)
        if note is not None:
            index = document.find_title(ACTIVITY)
            current = document.entries[index].body if index is not None else ""
            log = _append_activity(current, note, now, limits["activityMaxItems"],
                                   limits["activityMaxChars"])
            if log != current:
                _replace_section(document, ACTIVITY, log, stamp)
        save_held(store, txn, edit)
        txn.message = f"working: {key}" + (f" / {name}" if name else "") + (" / activity" if note else "")
        return WriteResult(None, relpath, bool(txn.touched))


def working_updated(document: TopicFile) -> datetime | None:
    """Newest Updated stamp over the working sections."""
    stamps = []
    for entry in document.entries:
        try:
            stamps.append(datetime.fromisoformat(entry.get("Updated")))
        except ValueError:
            continue
    return max(stamps, default=None)
