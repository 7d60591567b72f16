"""Runtime memory records, their JSON file and their projections (pure functions of text).

`memories.json` is the source of truth of one scope's hot memory:

    {"schemaVersion": 1, "items": [{"id": "rt-3f9a2c1b", "target": "memory", "content": "...",
     "importance": "normal", "created_at": "2026-12-02T10:00:00Z", "updated_at": "...",
     "branches": ["main"]}]}

USER.md (target user) and MEMORY.md (target memory) are projections: each item on one line, items
separated by a line holding only `§`, in the order of the JSON list. Nothing else is in them, so
a person can edit them like any text file (see edits.py for how such edits come back).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from gitmem import caller
from gitmem.errors import InvalidInputError
from gitmem.format.records import conflict_of, dump_record_list, invalid_record, load_record_list

SCHEMA_VERSION = 1
TARGETS: tuple[str, ...] = ("user", "memory")
IMPORTANCE: tuple[str, ...] = ("critical", "normal", "low")
SEPARATOR = "§"
PROJECTIONS: dict[str, str] = {"user": "USER.md", "memory": "MEMORY.md"}
RECORDS_FILE = "memories.json"
_KNOWN = ("id", "target", "content", "importance", "created_at", "updated_at", "branches")
_SPACE_RE = re.compile(r"\s+")
_BRANCH_RE = re.compile(r"^[^\s~^:?*\[\\]+$")


@dataclass
class Item:
    """One runtime memory record; keys this version does not know are kept in `extra`."""

    id: str
    content: str
    target: str
    importance: str = "normal"
    created_at: str = ""
    updated_at: str = ""
    branches: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def conflict(self) -> dict[str, Any] | None:
        return conflict_of(self.extra)

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id, "target": self.target, "content": self.content,
            "importance": self.importance, "created_at": self.created_at,
            "updated_at": self.updated_at,
        }
        if self.branches:
            data["branches"] = list(self.branches)
        data.update(self.extra)
        return data


@dataclass
class RuntimeFile:
    """The parsed memories.json of one scope (top-level keys other than `items` kept)."""

    items: list[Item] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=lambda: {"schemaVersion": SCHEMA_VERSION})

    def of(self, target: str) -> list[Item]:
        return [item for item in self.items if item.target == target]

    def ids(self) -> set[str]:
        return {item.id for item in self.items}


# -- content rules ----------------------------------------------------------------------------
def normalize_content(text: str) -> str:
    """One line: NFC, every run of whitespace (newlines included) one space, trimmed."""
    return _SPACE_RE.sub(" ", unicodedata.normalize("NFC", text)).strip()


def content_problem(content: str, item_limit: int) -> str | None:
    """Why normalized `content` cannot be an item, or None."""
    if not content:
        return "is empty"
    if SEPARATOR in content:
        return f"contains {SEPARATOR}, which separates items in USER.md and MEMORY.md"
    size = len(content.encode("utf-8"))
    if size > item_limit:
        return f"is {size} bytes; one item holds at most {item_limit} bytes"
    return None


def check_content(text: str, item_limit: int) -> str:
    """The normalized content, or InvalidInputError naming the rule it breaks."""
    content = normalize_content(text)
    problem = content_problem(content, item_limit)
    if problem is not None:
        raise InvalidInputError(f"runtime memory text {problem}; nothing changed")
    return content


def check_choice(value: str, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise InvalidInputError(f"invalid {what} {value!r} (use {'|'.join(allowed)})")
    return value


def check_branches(branches: list[str] | tuple[str, ...], target: str) -> tuple[str, ...]:
    """Branch names for a `memory` item (deduplicated, in the given order)."""
    cleaned = tuple(dict.fromkeys(b.strip() for b in branches if b.strip()))
    if cleaned and target != "memory":
        raise InvalidInputError("--branch applies to target memory only; user items are visible everywhere")
    for name in cleaned:
        if not _BRANCH_RE.match(name) or name.startswith("-"):
            raise InvalidInputError(f"invalid branch name {name!r}")
    if cleaned:  # a name is committed as it is: a token there is refused, --allow-secret or not
        from gitmem.secrets.scan import refuse_secrets

        refuse_secrets("\n".join(cleaned), "branch", overridable=False)
    return cleaned


def content_stamp(content: str) -> str:
    """A short fingerprint of an item's text, for a caller to say which text it acted on
    without carrying the text itself (it may hold a secret let through)."""
    return hashlib.sha256(normalize_content(content).encode("utf-8")).hexdigest()[:16]


def new_id(taken: set[str]) -> str:
    """A record id two machines will not both pick: `rt-` and 8 random hex digits."""
    while True:
        candidate = f"rt-{secrets.token_hex(4)}"
        if candidate not in taken:
            return candidate


def timestamp(moment: datetime) -> str:
    """ISO 8601 in UTC to the second (`2026-12-02T10:00:00Z`); naive times are local."""
    return caller.as_local(moment).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_timestamp(value: str) -> datetime | None:
    """A stored timestamp as an aware datetime; None when missing or unreadable."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


# -- the JSON file ----------------------------------------------------------------------------
def load_records(text: str, path: str = RECORDS_FILE) -> RuntimeFile:
    """Parse memories.json; InvalidInputError naming the line when it is not readable."""
    raws, extra = load_record_list(text, path, "items")
    if not raws and not extra:
        return RuntimeFile()
    items = []
    taken: set[str] = set()
    for number, raw in enumerate(raws, 1):
        problem = invalid_record("items", number, raw)
        if problem is not None:
            raise InvalidInputError(f"{path}: {problem}")
        target = raw.get("target", "memory")
        branches = raw.get("branches") or []
        importance = raw.get("importance")
        ident = _unique_id(str(raw.get("id") or f"rt-item{number}"), raw["content"], taken)
        items.append(Item(
            id=ident,
            content=raw["content"],
            target=target if target in TARGETS else "memory",
            importance=importance if isinstance(importance, str) and importance in IMPORTANCE else "normal",
            created_at=str(raw.get("created_at") or ""),
            updated_at=str(raw.get("updated_at") or ""),
            branches=tuple(str(b) for b in branches) if isinstance(branches, list) else (),
            extra={k: v for k, v in raw.items() if k not in _KNOWN},
        ))
    return RuntimeFile(items, extra)


def _unique_id(ident: str, content: str, taken: set[str]) -> str:
    """The record's id; for a second record under an id (a block copied by hand to add an item),
    one of its own derived from its text (derived_id), so that a verb naming one item never acts
    on both."""
    candidate = ident if ident not in taken else derived_id(f"{ident}\0{content}", taken)
    taken.add(candidate)
    return candidate


def derived_id(seed: str, taken: set[str]) -> str:
    """An id made from `seed` (an item's text), not taken yet: the same at every read of a file
    until a write saves it, so an id a listing showed still names that item at the next call."""
    salt = 0
    while True:
        candidate = f"rt-{hashlib.sha256(f'{seed}{chr(0)}{salt}'.encode()).hexdigest()[:8]}"
        if candidate not in taken:
            return candidate
        salt += 1


def dump_records(records: RuntimeFile) -> str:
    """memories.json text: fixed key order, two-space indent, UTF-8 kept, final newline."""
    return dump_record_list(records.extra, "items", [item.as_json() for item in records.items],
                            SCHEMA_VERSION)


def without_duplicates(records: RuntimeFile) -> tuple[RuntimeFile, list[Item]]:
    """Drop later items whose target and content repeat an earlier one (two machines added the
    same fact); returns the file and what was dropped."""
    seen: set[tuple[str, str]] = set()
    kept: list[Item] = []
    dropped: list[Item] = []
    for item in records.items:
        key = (item.target, normalize_content(item.content))
        if key in seen and item.conflict is None:
            dropped.append(item)
            continue
        seen.add(key)
        kept.append(item)
    return RuntimeFile(kept, records.extra), dropped


# -- projections ------------------------------------------------------------------------------
def projection_body(contents: list[str]) -> str:
    """The bytes a budget counts: items joined by separator lines."""
    return f"\n{SEPARATOR}\n".join(contents)


def body_bytes(contents: list[str]) -> int:
    return len(projection_body(contents).encode("utf-8"))


def render_projection(contents: list[str]) -> str:
    """USER.md / MEMORY.md text for these items (empty text when there are none)."""
    return projection_body(contents) + "\n" if contents else ""


@dataclass(frozen=True)
class ProjectionLine:
    """An item line of a projection file as a person left it."""

    line: int
    content: str


def parse_projection(text: str, item_limit: int) -> tuple[list[ProjectionLine], list[tuple[int, str]]]:
    """(item lines, (line, reason) of lines that break the rules). Every non-blank line other
    than a lone `§` is one item: a person adding a line need not add a separator too."""
    items: list[ProjectionLine] = []
    problems: list[tuple[int, str]] = []
    for number, raw in enumerate(text.lstrip("\ufeff").splitlines(), 1):
        stripped = raw.strip()
        if not stripped or stripped == SEPARATOR:
            continue
        content = normalize_content(raw)
        problem = content_problem(content, item_limit)
        if problem is not None:
            problems.append((number, problem))
            continue
        items.append(ProjectionLine(number, content))
    return items, problems


# -- the snapshot annotation ------------------------------------------------------------------
def age_label(value: str, now: datetime) -> str:
    """Whole days since a timestamp: `3d`, `0d` under a day, `future`, or `unknown`."""
    moment = parse_timestamp(value)
    if moment is None:
        return "unknown"
    seconds = (caller.as_local(now).astimezone(UTC) - moment).total_seconds()
    if seconds < 0:
        return "future"
    return f"{int(seconds // 86400)}d"


def metadata_line(item: Item, now: datetime) -> str:
    """`[importance=critical; created=14d; updated=2d]`, plus branches or a conflict when set."""
    parts = [f"importance={item.importance}", f"created={age_label(item.created_at, now)}",
             f"updated={age_label(item.updated_at, now)}"]
    if item.branches:
        parts.append(f"branches={','.join(item.branches)}")
    if item.conflict is not None:
        parts.append("conflict: two machines changed it, see `gitmem conflicts`")
    return "[" + "; ".join(parts) + "]"
