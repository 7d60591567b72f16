"""Entry write verbs: remember, forget, verify, decision, codebase (and legacy migration)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from . import layers as L
from .entry import IMPORTANCE_VALUES, VOLATILITY_VALUES, Entry, TopicFile, text_hash
from .errors import InvalidInputError
from .freshness import guess_volatility
from .fsio import read_text
from .markdown import CONFLICT_MARKER_RE, new_topic_file
from .paths import topic_slug
from .workspaces import register_workspace

if TYPE_CHECKING:
    from .store import Store, WriteTxn

MAX_TEXT_BYTES = 8 * 1024
TITLE_MAX = 80
_HEADING_LINE = re.compile(r"^(#{1,2})(\s|$)", re.MULTILINE)
_ENTRY_HEADING = re.compile(r"^ {0,3}##(\s|$)", re.MULTILINE)


@dataclass(frozen=True)
class WriteResult:
    """What a write verb did: the id it wrote (or found), where, and whether anything changed."""

    id: str | None
    path: str
    changed: bool
    note: str = ""


def check_text(text: str, what: str = "text") -> str:
    """Non-empty, at most 8 KiB of UTF-8; returns it trimmed."""
    cleaned = text.replace("\r\n", "\n").strip()
    if not cleaned:
        raise InvalidInputError(f"{what} must not be empty")
    size = len(cleaned.encode("utf-8"))
    if size > MAX_TEXT_BYTES:
        raise InvalidInputError(f"{what} is {size} bytes; the limit is {MAX_TEXT_BYTES} bytes (8 KiB)")
    return cleaned


def safe_body(text: str) -> str:
    """Escape lines that would otherwise start a new entry or look like conflict markers."""
    text = _HEADING_LINE.sub(lambda m: "\\" + m.group(0), text)
    return CONFLICT_MARKER_RE.sub(lambda m: "\\" + m.group(0), text)


def derive_title(text: str) -> str:
    """First line, without Markdown heading marks, cut at a word boundary."""
    first = text.strip().split("\n", 1)[0].lstrip("#").strip() or text.strip()[:TITLE_MAX]
    if len(first) <= TITLE_MAX:
        return first
    cut = first[:TITLE_MAX].rsplit(" ", 1)[0]
    return (cut if len(cut) > TITLE_MAX // 2 else first[:TITLE_MAX]).rstrip() + "…"


def check_choice(value: str | None, allowed: tuple[str, ...], name: str) -> str | None:
    if value is None:
        return None
    if value not in allowed:
        raise InvalidInputError(f"invalid {name} {value!r} (use {'|'.join(allowed)})")
    return value


def check_day(value: str | None, name: str) -> str | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value.strip()).isoformat()
    except ValueError:
        raise InvalidInputError(f"invalid {name} {value!r} (use YYYY-MM-DD)") from None


def target_scope(store: Store, txn: WriteTxn, layer: str, scope: str, workspace: str | None) -> str:
    """Resolve and prepare the scope a write goes to; workspace-only layers need a workspace."""
    spec = L.layer_spec(layer)
    if not spec.global_ok:
        scope = "workspace"
    key = store.scope_for(scope, workspace)
    L.check_layer_scope(layer, key)
    if key != L.GLOBAL:
        register_workspace(store, txn, key)
    migrate_legacy_layer(store, txn, key, layer)
    return key


def load_or_new_topic(store: Store, relpath: str, key: str, layer: str, topic: str) -> TopicFile:
    existing = store.read_file(relpath)
    if existing is not None:
        return existing
    return new_topic_file({"topic": topic, "layer": layer, "scope": key}, topic)


def remember(
    store: Store,
    text: str,
    layer: str,
    *,
    topic: str | None = None,
    title: str | None = None,
    importance: str | None = None,
    volatility: str | None = None,
    until: str | None = None,
    source: str | None = None,
    supersedes: str | None = None,
    scope: str = "global",
    workspace: str | None = None,
    force: bool = False,
    extra_fields: dict[str, str] | None = None,
    verb: str = "remember",
) -> WriteResult:
    """Add an entry; identical live text returns the existing id and writes nothing."""
    spec = L.layer_spec(layer)
    if spec.shape != "topics":
        raise InvalidInputError(f"layer {layer!r} is not written with remember (use `gitmem {layer}`)")
    body = safe_body(check_text(text))
    heading = " ".join((title or derive_title(text)).split())
    if not heading:
        raise InvalidInputError("title must not be empty")
    check_choice(importance, IMPORTANCE_VALUES, "importance")
    check_choice(volatility, VOLATILITY_VALUES, "volatility")
    until = check_day(until, "--until date")
    topic_name = (topic or "general").strip()
    slug = topic_slug(topic_name)
    with store.writing(verb) as txn:
        key = target_scope(store, txn, layer, scope, workspace)
        relpath = L.topic_path(key, layer, slug)
        for hit in store.catalog.find_text(key, layer, text_hash(body)):
            if hit.status == "live":
                txn.message = ""
                return WriteResult(hit.id, hit.path, False, "identical entry already recorded")
            if hit.status == "forgotten" and not force:
                raise InvalidInputError(
                    f"refused: this text was forgotten as {hit.id}; use --force, or `gitmem forget --undo {hit.id}`"
                )
        old = store.locate(supersedes) if supersedes else None
        new_id = L.format_id(key, layer, store.catalog.max_number(key, layer) + 1)
        today = store.today().isoformat()
        fields = {
            "Id": new_id,
            "Importance": importance or "normal",
            "Volatility": volatility or guess_volatility(text),
            "Created": today,
            "Verified": today,
        }
        if until:
            fields["Valid-until"] = until
        if source:
            fields["Source"] = " ".join(source.split())
        if old is not None:
            fields["Supersedes"] = old.entry.id or ""
        fields.update(extra_fields or {})
        if old is not None:
            mark_superseded(store, txn, old.path, old.entry.id or "", new_id)
        entry = Entry(title=heading, body=body, fields=fields)
        if not store.append_entry(txn, relpath, entry):
            document = load_or_new_topic(store, relpath, key, layer, topic_name)
            document.entries.append(entry)
            store.write_topic(txn, relpath, document)
        txn.message = f"{verb}: {new_id} ({layer}/{slug})"
        return WriteResult(new_id, relpath, True)


def mark_superseded(store: Store, txn: WriteTxn, relpath: str, old_id: str, new_id: str) -> None:
    document = store.read_file(relpath)
    assert document is not None
    index = document.find(old_id)
    assert index is not None
    document.entries[index] = document.entries[index].with_fields(Superseded_by=new_id)
    store.write_topic(txn, relpath, document)


def update_entry(store: Store, verb: str, entry_id: str, **fields: str | None) -> WriteResult:
    """Set or clear fields of one entry (forget, verify); no commit when nothing changes."""
    with store.writing(verb) as txn:
        found = store.locate(entry_id)
        document = store.read_file(found.path)
        assert document is not None
        index = document.find(entry_id)
        assert index is not None
        updated = document.entries[index].with_fields(**fields)
        if updated.fields == document.entries[index].fields:
            return WriteResult(entry_id, found.path, False, "already so; nothing changed")
        document.entries[index] = updated
        store.write_topic(txn, found.path, document)
        txn.message = f"{verb}: {entry_id}"
        return WriteResult(entry_id, found.path, True)


def forget(store: Store, entry_id: str, *, undo: bool = False) -> WriteResult:
    if undo:
        return update_entry(store, "forget --undo", entry_id, Forgotten=None)
    return update_entry(store, "forget", entry_id, Forgotten=store.today().isoformat())


def verify(store: Store, entry_id: str) -> WriteResult:
    return update_entry(store, "verify", entry_id, Verified=store.today().isoformat())


DECISION_SECTIONS = ("Context", "Rationale", "Alternatives considered", "Consequences")


def render_decision_body(
    context: str | None, rationale: str, alternatives: list[str], consequences: str | None
) -> str:
    parts = []
    if context:
        parts.append(f"**Context:**\n{safe_body(check_text(context, 'context'))}")
    parts.append(f"**Rationale:**\n{safe_body(check_text(rationale, 'rationale'))}")
    if alternatives:
        items = "\n".join(f"- {' '.join(a.split())}" for a in alternatives if a.strip())
        parts.append(f"**Alternatives considered:**\n{items}")
    if consequences:
        parts.append(f"**Consequences:**\n{safe_body(check_text(consequences, 'consequences'))}")
    return "\n\n".join(parts)


def parse_decision_body(body: str) -> dict[str, str | list[str]]:
    """Read the fixed sections of a decision back into fields."""
    result: dict[str, str | list[str]] = {}
    pattern = re.compile(r"^\*\*(" + "|".join(DECISION_SECTIONS) + r"):\*\*[ \t]*$", re.MULTILINE)
    matches = list(pattern.finditer(body))
    for position, match in enumerate(matches):
        end = matches[position + 1].start() if position + 1 < len(matches) else len(body)
        content = body[match.end() : end].strip()
        name = match.group(1).lower().replace(" considered", "")
        if name == "alternatives":
            result[name] = [line[2:].strip() for line in content.splitlines() if line.startswith("- ")]
        else:
            result[name] = content
    return result


def decision(
    store: Store,
    statement: str,
    *,
    rationale: str,
    context: str | None = None,
    alternatives: list[str] | None = None,
    consequences: str | None = None,
    topic: str | None = None,
    importance: str | None = None,
    scope: str = "global",
    workspace: str | None = None,
) -> WriteResult:
    """Record a settled choice with why it won, in the fixed decision shape."""
    heading = " ".join(check_text(statement, "decision").split())
    body = render_decision_body(context, rationale, alternatives or [], consequences)
    return remember(
        store, body, "decisions", topic=topic, title=heading, importance=importance,
        volatility="stable", scope=scope, workspace=workspace, verb="decision",
    )


def codebase(
    store: Store,
    topic: str,
    text: str,
    *,
    importance: str | None = None,
    workspace: str | None = None,
) -> WriteResult:
    """Record what a path or subsystem does; re-recording the topic updates its entry."""
    body = safe_body(check_text(text))
    check_choice(importance, IMPORTANCE_VALUES, "importance")
    slug = topic_slug(topic)
    with store.writing("codebase") as txn:
        key = target_scope(store, txn, "codebase", "workspace", workspace)
        relpath = L.topic_path(key, "codebase", slug)
        document = load_or_new_topic(store, relpath, key, "codebase", topic.strip())
        today = store.today().isoformat()
        live = [i for i, e in enumerate(document.entries) if not e.is_forgotten and not e.is_superseded]
        if live:
            index = live[-1]
            current = document.entries[index]
            if current.body == body and (importance is None or current.get("Importance") == importance):
                return WriteResult(current.id, relpath, False, "already recorded; nothing changed")
            document.entries[index] = current.with_body(body).with_fields(
                Verified=today, Importance=importance or current.get("Importance") or "normal"
            )
            entry_id = current.id
        else:
            entry_id = L.format_id(key, "codebase", store.catalog.max_number(key, "codebase") + 1)
            document.entries.append(Entry(topic.strip(), body, {
                "Id": entry_id, "Importance": importance or "normal", "Volatility": "normal",
                "Created": today, "Verified": today,
            }))
        store.write_topic(txn, relpath, document)
        txn.message = f"codebase: {entry_id} ({slug})"
        return WriteResult(entry_id, relpath, True)


def migrate_legacy_layer(store: Store, txn: WriteTxn, key: str, layer: str) -> list[str]:
    """Move entries still kept directly in a layer file into topic files (idempotent)."""
    if L.layer_spec(layer).shape != "topics":
        return []
    relpath = L.layer_index_path(key, layer)
    try:
        text = read_text(store.path(relpath))
    except FileNotFoundError:
        return []
    if not _ENTRY_HEADING.search(text):
        return []  # a generated index has no entry headings: no need to parse it
    legacy = store.read_file(relpath)
    if legacy is None or not legacy.entries:
        return []
    moved: dict[str, TopicFile] = {}
    numbers = [parsed.number for e in legacy.entries if e.id and (parsed := L.parse_id(e.id))]
    next_number = max([store.catalog.max_number(key, layer), *numbers])
    for entry in legacy.entries:
        topic_name = entry.get("Topic") or "general"
        if "Topic" in entry.fields:
            entry = entry.with_fields(Topic=None)
        if not entry.id:
            next_number += 1
            entry = entry.with_fields(Id=L.format_id(key, layer, next_number))
        elif entry.raw is not None and not entry.raw.endswith(("\n", "\r")):
            entry = entry.with_fields()  # the file's last line had no newline: render canonically
        target = L.topic_path(key, layer, topic_slug(topic_name))
        if target not in moved:
            moved[target] = load_or_new_topic(store, target, key, layer, topic_name)
        moved[target].entries.append(entry)
    for target, document in moved.items():
        store.write_topic(txn, target, document)
    # The layer file becomes the generated index once the catalog sees the topic files.
    store.write_file(txn, relpath, "")
    store.catalog.refresh(list(moved), store.read_file)
    return list(moved)
