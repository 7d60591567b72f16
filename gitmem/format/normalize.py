"""Normalization and validation of memory files written by hand or through plain git.

The same rules serve three callers: the store (absorbing hand edits before its own write), the
pre-commit hook (staged files), and `gitmem check [--fix]` (the whole tree). Fixes touch only
the entries that need them; every other byte of the file stays as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gitmem.errors import ParseError
from gitmem.format.entry import IMPORTANCE_VALUES, VOLATILITY_VALUES, Entry, TopicFile
from gitmem.format.layers import LAYERS, classify_path, format_id, parse_id
from gitmem.format.markdown import (
    conflict_marker_lines,
    parse_topic_file,
    render_topic_file,
    split_lines,
)

# Allocates the next id number for (scope, layer); the caller keeps it consistent across files.
NumberAllocator = Callable[[str, str], int]
# Returns the other files that hold an id (excluding the one being checked).
IdLocator = Callable[[str, str], list[str]]


@dataclass(frozen=True)
class Problem:
    """One finding, printed as `path:line: reason`."""

    path: str
    line: int
    reason: str
    fixable: bool = False

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


@dataclass
class Outcome:
    """The result of normalizing one file."""

    path: str
    text: str
    changed: bool = False
    assigned: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def blocking(self) -> list[Problem]:
        return [p for p in self.problems if not p.fixable]


def _preamble_problems(path: str, topic: TopicFile) -> list[Problem]:
    """Text before the first entry must be headings, blank lines or comments."""
    problems = []
    start = len(split_lines(topic.frontmatter_raw)) + 1
    in_comment = False
    for offset, raw in enumerate(split_lines(topic.preamble)):
        line = raw.strip()
        if in_comment or line.startswith("<!--"):
            in_comment = "-->" not in line
            continue
        if not line or line.startswith("# ") or line == "#":
            continue
        problems.append(Problem(path, start + offset, "text outside any entry: add a '## ' heading above it"))
        break
    return problems


def _entry_problems(path: str, scope: str, layer: str, entry: Entry) -> list[Problem]:
    """Value checks that cannot be fixed automatically."""
    problems = []
    if not entry.title:
        problems.append(Problem(path, entry.line, "entry heading is empty"))
    importance = entry.fields.get("Importance")
    if importance is not None and importance not in IMPORTANCE_VALUES:
        problems.append(Problem(path, entry.line, f"bad Importance {importance!r} (use {'|'.join(IMPORTANCE_VALUES)})"))
    volatility = entry.fields.get("Volatility")
    if volatility is not None and volatility not in VOLATILITY_VALUES:
        problems.append(Problem(path, entry.line, f"bad Volatility {volatility!r} (use {'|'.join(VOLATILITY_VALUES)})"))
    if entry.id:
        parsed = parse_id(entry.id)
        if parsed is None:
            problems.append(Problem(path, entry.line, f"malformed Id {entry.id!r}"))
        elif parsed.scope != scope or parsed.layer != layer:
            problems.append(Problem(path, entry.line, f"Id {entry.id} does not belong to {scope}/{layer}"))
    return problems


def _fill_entry(entry: Entry, today: str) -> Entry | None:
    """The entry with missing dates filled, or None when nothing was missing."""
    created = entry.fields.get("Created") or today
    verified = entry.fields.get("Verified") or created
    if entry.fields.get("Created") and entry.fields.get("Verified"):
        return None
    return entry.with_fields(Created=created, Verified=verified)


def normalize_text(
    path: str,
    text: str,
    *,
    today: str,
    allocate: NumberAllocator,
    locate: IdLocator,
    fix: bool = True,
) -> Outcome:
    """Check a memory file and, when `fix`, assign missing ids and dates to the entries lacking them."""
    outcome = Outcome(path, text)
    role = classify_path(path)
    if role.kind not in ("topic", "single"):
        return outcome
    for line in conflict_marker_lines(text):
        outcome.problems.append(Problem(path, line, "conflict marker left in: resolve the conflict first"))
    try:
        topic = parse_topic_file(text, path)
    except ParseError as exc:
        outcome.problems.append(Problem(path, exc.line, exc.reason))
        return outcome
    if role.kind == "single":
        return outcome  # state, working and junk have free-form sections without ids
    spec = LAYERS[role.layer]
    outcome.problems.extend(_preamble_problems(path, topic))
    seen: dict[str, int] = {}
    for index, entry in enumerate(topic.entries):
        outcome.problems.extend(_entry_problems(path, role.scope, role.layer, entry))
        if entry.id:
            if entry.id in seen:
                outcome.problems.append(Problem(path, entry.line, f"duplicate Id {entry.id} (also at line {seen[entry.id]})"))
            else:
                seen[entry.id] = entry.line
                others = locate(entry.id, path)
                if others:
                    outcome.problems.append(Problem(path, entry.line, f"duplicate Id {entry.id} (also in {others[0]})"))
        updated = _fill_entry(entry, today)
        if not entry.id and spec.abbr:
            outcome.problems.append(Problem(path, entry.line, "entry has no Id", fixable=True))
            if fix:
                new_id = format_id(role.scope, role.layer, allocate(role.scope, role.layer))
                updated = (updated or entry).with_fields(Id=new_id)
                outcome.assigned.append(new_id)
        elif updated is not None:
            outcome.problems.append(Problem(path, entry.line, "entry has no Created/Verified date", fixable=True))
        if fix and updated is not None:
            topic.entries[index] = updated
    if fix:
        rendered = render_topic_file(topic)
        outcome.changed = rendered != text
        outcome.text = rendered
    return outcome
