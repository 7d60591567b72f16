"""Entry and TopicFile values: the in-memory shape of a topic file (no I/O)."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from typing import Any

# Canonical order of known metadata fields; unknown fields follow in their original order.
FIELD_ORDER: tuple[str, ...] = (
    "Id",
    "Importance",
    "Volatility",
    "Created",
    "Verified",
    "Valid-until",
    "Source",
    "Supersedes",
    "Superseded-by",
    "Forgotten",
    "Related",
    "Commit",
    "Updated",  # working memory's sections: when the agent last wrote each (graded in hours)
)
IMPORTANCE_VALUES: tuple[str, ...] = ("critical", "high", "normal", "low")
VOLATILITY_VALUES: tuple[str, ...] = ("stable", "normal", "volatile")
IMPORTANCE_RANK: dict[str, int] = {"critical": 3, "high": 2, "normal": 1, "low": 0}


def normalize_text(text: str) -> str:
    """Text as compared for dedup: case-folded, whitespace collapsed, trimmed."""
    # str.split() splits at exactly the characters \s matches (str.isspace), several times faster.
    return " ".join(text.split()).casefold()


def text_hash(text: str) -> str:
    """A short stable digest of normalized text (dedup key)."""
    return hashlib.sha1(normalize_text(text).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Shape:
    """Where a parsed entry's text departs from the canonical shape (1-based lines, 0 = none).

    Normalization renders such an entry canonically; `gitmem check` names what it found.
    """

    text_after_fields: int = 0  # text found after the field block (moved above it)
    fields_elsewhere: tuple[int, ...] = ()  # known field lines outside the field block (moved in)
    gaps_in_fields: int = 0  # blank lines inside the field block (removed)
    unclosed_fence: int = 0  # a fence opened in the text and never closed (closed)
    repeated: tuple[tuple[str, int], ...] = ()  # (field, line) of a field given a second time

    @property
    def canonical(self) -> bool:
        return not (self.text_after_fields or self.fields_elsewhere or self.gaps_in_fields
                    or self.unclosed_fence)


CANONICAL = Shape()


@dataclass(frozen=True)
class Entry:
    """One `## heading` entry. `raw` holds its original text; None means render canonically.

    `body` and `fields` are the entry as normalization would write it (see gitmem.format.markdown);
    `extra_fields` are field lines given again after a first value of the same name: they are
    kept, after the others, and never win.
    """

    title: str
    body: str
    fields: dict[str, str] = field(default_factory=dict)
    line: int = 0
    raw: str | None = None
    extra_fields: tuple[tuple[str, str], ...] = ()
    shape: Shape = CANONICAL
    open_fence: str = ""  # the fence `raw` leaves open (only the last entry of a file can)

    @property
    def id(self) -> str | None:
        return self.fields.get("Id") or None

    def get(self, name: str, default: str = "") -> str:
        return self.fields.get(name, default)

    def with_fields(self, **updates: str | None) -> Entry:
        """A copy with fields set (None removes one); the copy renders canonically."""
        fields = dict(self.fields)
        for key, value in updates.items():
            name = key.replace("_", "-")
            name = name[0].upper() + name[1:]
            if value is None:
                fields.pop(name, None)
            else:
                fields[name] = value
        return dataclasses.replace(self, fields=fields, raw=None, shape=CANONICAL, open_fence="")

    def with_body(self, body: str, title: str | None = None) -> Entry:
        return dataclasses.replace(
            self, body=body, title=self.title if title is None else title, raw=None,
            shape=CANONICAL, open_fence="",
        )

    def ordered_fields(self) -> list[tuple[str, str]]:
        """Known fields in canonical order, then unknown ones as they came."""
        known = [(name, self.fields[name]) for name in FIELD_ORDER if name in self.fields]
        unknown = [(k, v) for k, v in self.fields.items() if k not in FIELD_ORDER]
        return known + unknown

    @property
    def content_hash(self) -> str:
        return text_hash(self.body or self.title)

    @property
    def is_forgotten(self) -> bool:
        return bool(self.fields.get("Forgotten"))

    @property
    def is_superseded(self) -> bool:
        return bool(self.fields.get("Superseded-by"))

    @property
    def status(self) -> str:
        """live | forgotten | superseded (expiry depends on the day: see freshness)."""
        if self.is_forgotten:
            return "forgotten"
        if self.is_superseded:
            return "superseded"
        return "live"


@dataclass
class TopicFile:
    """A parsed topic (or single-layer) file; rendering an unmodified one gives its bytes back.

    `problem` is set only by a lenient parse (for the catalog): (line, reason) of what makes the
    file unreadable for everything else.
    """

    frontmatter_raw: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    preamble: str = ""
    entries: list[Entry] = field(default_factory=list)
    newline: str = "\n"
    bom: str = ""  # a UTF-8 byte order mark the file starts with, kept as it was
    problem: tuple[int, str] | None = None

    def find(self, entry_id: str) -> int | None:
        """Index of the entry with this id (or with a second Id line naming it), or None."""
        for index, entry in enumerate(self.entries):
            if entry.id == entry_id:
                return index
        for index, entry in enumerate(self.entries):
            if ("Id", entry_id) in entry.extra_fields:
                return index
        return None

    def find_title(self, title: str) -> int | None:
        """Index of the first entry whose heading equals `title` (case-insensitive)."""
        wanted = normalize_text(title)
        for index, entry in enumerate(self.entries):
            if normalize_text(entry.title) == wanted:
                return index
        return None


def one_line(value: str) -> str:
    """A heading or field value as one line: a line break in it would start a line the parser
    reads as another field, another entry or a conflict marker."""
    return value.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
