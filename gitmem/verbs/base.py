"""What the write verbs share: their result, input checks, and the scope a write goes to."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from gitmem.errors import InvalidInputError
from gitmem.format import layers as L
from gitmem.format.entry import TopicFile
from gitmem.format.markdown import new_topic_file
from gitmem.format.safetext import clean_text, safe_text, safe_title
from gitmem.secrets.scan import refuse_secrets
from gitmem.store.store import Store, WriteTxn
from gitmem.verbs.legacy import migrate_legacy_layer

MAX_TEXT_BYTES = 8 * 1024
TITLE_MAX = 80


@dataclass(frozen=True)
class WriteResult:
    """What a write verb did: the id it wrote (or found), where, and whether anything changed."""

    id: str | None
    path: str
    changed: bool
    note: str = ""


def check_text(text: str, what: str = "text", *, allow_secret: bool = False) -> str:
    """Non-empty, at most 8 KiB of UTF-8, no NUL, no likely secret (unless allowed);
    returns it cleaned (see format.safetext)."""
    if "\x00" in text:
        raise InvalidInputError(f"{what} holds a NUL character: memory files are text")
    cleaned = clean_text(text)
    if not cleaned.strip():
        raise InvalidInputError(f"{what} must not be empty")
    size = len(cleaned.encode("utf-8"))
    if size > MAX_TEXT_BYTES:
        raise InvalidInputError(f"{what} is {size} bytes; the limit is {MAX_TEXT_BYTES} bytes (8 KiB)")
    refuse_secrets(cleaned, what, allow=allow_secret)
    return cleaned


def safe_body(text: str) -> str:
    """The text as it lands in an entry: lines that would read as entry headings, fields or
    conflict markers escaped, an unclosed fence closed (see format.safetext)."""
    return safe_text(text)


def derive_title(text: str) -> str:
    """First line, without Markdown heading marks, cut at a word boundary. A secret in it (let
    through with --allow-secret) is masked first: a cut through a token would leave a part no
    mask recognises, shown wherever the title is."""
    from gitmem.secrets.mask import hide_secrets

    first = text.strip().split("\n", 1)[0].lstrip("#").strip() or text.strip()[:TITLE_MAX]
    first = hide_secrets(first)
    if len(first) <= TITLE_MAX:
        return first
    cut = first[:TITLE_MAX].rsplit(" ", 1)[0]
    return (cut if len(cut) > TITLE_MAX // 2 else first[:TITLE_MAX]).rstrip() + "…"


def heading_for(text: str, title: str | None) -> str:
    """The entry heading: the given title or one derived from the text, safe on one line."""
    heading = safe_title(title if title is not None else derive_title(text))
    if not heading:
        raise InvalidInputError("title must not be empty")
    return heading


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
        store.register_workspace(txn, key)
    migrate_legacy_layer(store, txn, key, layer)
    return key


def load_or_new_topic(store: Store, relpath: str, key: str, layer: str, topic: str) -> TopicFile:
    existing = store.read_file(relpath)
    if existing is not None:
        return existing
    return new_topic_file({"topic": topic, "layer": layer, "scope": key}, topic)


def record_ref(record: dict[str, Any]) -> str:
    """How a listed entry is named: its reference or Id, else where it is (an entry written by
    hand has no Id until the next write commits it)."""
    return record.get("ref") or record.get("id") or f"{record['path']}:{record['line']}, no Id yet"
