"""Fields that point elsewhere: **Related:** (other entries, typed) and **Paths:** (files of the
workspace repository). Pure parsing and rendering; checks against the store live in store/.

A Related value is a comma-separated list. Each item is `TYPE:ID` (a typed link), `TYPE:SPACE/ID`
(a link into a mounted space), a bare `ID` (an untyped link, as older entries wrote them) or free
text (kept as it is, never dropped). Types:

- semantic, entity: symmetric (A is about the same thing / the same entity as B);
  `gitmem relate` records them on both entries.
- causal: `causal:X` on A means X is a cause of A (A follows from X).
- temporal: `temporal:X` on A means X came before A.
The directional ones are recorded on the entry that points back, like Supersedes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from gitmem.format.layers import parse_id

RELATION_TYPES: tuple[str, ...] = ("temporal", "semantic", "causal", "entity")
SYMMETRIC: frozenset[str] = frozenset({"semantic", "entity"})
_TYPED_RE = re.compile(r"^([A-Za-z][A-Za-z-]*):\s*(\S+)$")
_SPACE_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


@dataclass(frozen=True)
class Relation:
    """One item of a Related value; `raw` is the text it was read from (kept on re-render)."""

    raw: str
    type: str | None = None  # None: untyped (a bare id, or free text)
    target: str | None = None  # the entry id, when the item names one
    space: str | None = None  # a mounted space the target lives in; None: the same store

    @property
    def known_type(self) -> bool:
        return self.type is None or self.type in RELATION_TYPES

    @property
    def ref(self) -> str | None:
        """`ID` or `SPACE/ID`, as commands accept it."""
        if self.target is None:
            return None
        return f"{self.space}/{self.target}" if self.space else self.target


def _target(text: str) -> tuple[str | None, str | None]:
    """(space, id) of `ID` or `SPACE/ID`; (None, None) when it is not an id."""
    space, _, rest = text.rpartition("/")
    if space and not _SPACE_RE.match(space):
        return None, None
    if parse_id(rest) is None:
        return None, None
    return space or None, rest


def parse_item(item: str) -> Relation:
    text = item.strip()
    match = _TYPED_RE.match(text)
    if match:
        space, target = _target(match.group(2))
        if target is not None:
            return Relation(text, match.group(1).lower(), target, space)
    space, target = _target(text)
    if target is not None:
        return Relation(text, None, target, space)
    return Relation(text)


def parse_related(value: str) -> list[Relation]:
    """Every item of a Related value, in order (empty items dropped)."""
    return [parse_item(part) for part in value.split(",") if part.strip()]


def render_related(items: list[Relation]) -> str:
    return ", ".join(item.raw for item in items)


def typed(kind: str, ref: str) -> Relation:
    """A new typed item for `ref` (`ID` or `SPACE/ID`)."""
    return parse_item(f"{kind}:{ref}")


def add_relation(value: str, kind: str, ref: str) -> str | None:
    """The Related value with `kind:ref` added; None when it is already there."""
    items = parse_related(value)
    new = typed(kind, ref)
    if any(i.type == new.type and i.ref == new.ref for i in items):
        return None
    return render_related([*items, new])


def field_line(raw: str | None, name: str) -> int:
    """0-based offset of the `**name:**` line inside an entry's text (0 when unknown)."""
    if not raw:
        return 0
    prefix = f"**{name}:**"
    for offset, line in enumerate(raw.splitlines()):
        if line.startswith(prefix):
            return offset
    return 0


def parse_paths(value: str) -> tuple[list[str], list[str]]:
    """(clean repository-relative paths, items refused: absolute, '..', empty after cleaning)."""
    good: list[str] = []
    bad: list[str] = []
    for part in value.split(","):
        text = part.strip().strip("`")
        if not text:
            continue
        pure = PurePosixPath(text.replace("\\", "/"))
        if pure.is_absolute() or ".." in pure.parts or re.match(r"^[A-Za-z]:", text) or not pure.parts:
            bad.append(text)
            continue
        clean = pure.as_posix()
        good.append(clean + "/" if text.endswith("/") and clean != "." else clean)
    return good, bad


def path_matches(pattern: str, changed: str) -> bool:
    """Whether a changed file falls under an entry's path (a file, or a folder and below)."""
    base = pattern.rstrip("/")
    if base in ("", "."):
        return True
    return changed == base or changed.startswith(base + "/")
