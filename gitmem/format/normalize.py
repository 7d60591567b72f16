"""Normalization and validation of memory files written by hand or through plain git.

The same rules serve three callers: the store (absorbing hand edits before its own write), the
pre-commit hook (staged files), and `gitmem check [--fix]` (the whole tree). Fixes touch only
the entries that need them; every other byte of the file stays as it was.

A problem is an *error* when it breaks the store (a malformed or duplicate Id, an unreadable
file, conflict markers, entries in a generated file, a name that cannot be checked out
everywhere): `gitmem check` exits 2, the pre-commit hook refuses the commit, a write refuses to
commit such a hand edit. Everything else is a *hint*: printed, never blocking. An entry that has
an error is never rewritten.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gitmem.errors import ParseError
from gitmem.format.entry import IMPORTANCE_VALUES, VOLATILITY_VALUES, Entry, TopicFile
from gitmem.format.layers import (
    LAYERS,
    FileRole,
    canonical_slug,
    classify_path,
    format_id,
    parse_id,
    topic_name_problem,
)
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
# The day an entry was first committed (its Id line, else its heading), None when it never was.
CreatedLookup = Callable[[str, Entry], str | None]


@dataclass(frozen=True)
class Problem:
    """One finding, printed as `path:line: reason`."""

    path: str
    line: int
    reason: str
    fixable: bool = False
    severity: str = "error"  # "error" breaks the store; "hint" is advice

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"

    @property
    def is_error(self) -> bool:
        return self.severity == "error"


def hint(path: str, line: int, reason: str, *, fixable: bool = False) -> Problem:
    return Problem(path, line, reason, fixable=fixable, severity="hint")


@dataclass
class Outcome:
    """The result of normalizing one file."""

    path: str
    text: str
    changed: bool = False
    assigned: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    topic: TopicFile | None = None  # the file as normalized (when it could be parsed)

    @property
    def blocking(self) -> list[Problem]:
        """The errors: what a write or a commit must not let through."""
        return [p for p in self.problems if p.is_error]


def _preamble_problems(path: str, topic: TopicFile) -> list[Problem]:
    """Text before the first entry is kept but not searchable: headings, blanks, comments are fine."""
    start = len(split_lines(topic.frontmatter_raw)) + 1
    in_comment = False
    for offset, raw in enumerate(split_lines(topic.preamble)):
        line = raw.strip()
        if in_comment or line.startswith("<!--"):
            in_comment = "-->" not in line
            continue
        if not line or line.startswith("# ") or line == "#":
            continue
        return [hint(path, start + offset, "text outside any entry (kept, not searchable): "
                                           "add a '## ' heading above it")]
    return []


def name_problems(path: str, role: FileRole) -> list[Problem]:
    """A topic file name that cannot be checked out everywhere (error) or is not canonical (hint)."""
    if role.kind != "topic":
        return []
    problem = topic_name_problem(role.slug)
    if problem is not None:
        return [Problem(path, 1, f"topic file name {problem}: rename the file")]
    wanted = canonical_slug(role.slug)
    if wanted != role.slug:
        suggestion = f" (e.g. {wanted}.md)" if wanted else ""
        return [hint(path, 1, f"topic file name {role.slug!r} is not one gitmem makes: "
                              f"lower-case letters, digits and '-'{suggestion}")]
    return []


def _entry_errors(path: str, role: FileRole, entry: Entry) -> list[Problem]:
    """What makes the entry break the store: its Id lines."""
    problems = []
    if entry.id:
        parsed = parse_id(entry.id)
        if parsed is None:
            problems.append(Problem(path, entry.line, f"malformed Id {entry.id!r} "
                                    "(expected <scope>-<abbr>-<number>, the number below a billion)"))
    for name, line in entry.shape.repeated:
        if name == "Id":
            others = [value for key, value in entry.extra_fields if key == "Id"]
            problems.append(Problem(path, line, f"entry {entry.id or '?'} has a second Id line "
                                    f"({', '.join(others)}): keep one, give the other its own entry"))
    return problems


def _moved_hint(path: str, role: FileRole, entry: Entry) -> list[Problem]:
    """An Id given in another layer or scope: the entry was moved here. Its Id stays (an Id is
    an identity: links and other machines name the entry by it) and keeps its number taken
    where it was given."""
    parsed = parse_id(entry.id) if entry.id else None
    if parsed is None or (parsed.scope, parsed.layer) == (role.scope, role.layer):
        return []
    return [hint(path, entry.line, f"Id {entry.id} was given in {parsed.scope}/{parsed.layer}: "
                                   "the entry keeps it here (an Id never changes)")]


DATE_FIELDS = ("Created", "Verified", "Valid-until")


def _is_date(value: str) -> bool:
    from datetime import date

    try:
        date.fromisoformat(value.strip())
    except ValueError:
        return False
    return len(value.strip()) == 10


def _entry_hints(path: str, role: FileRole, entry: Entry, numbered: bool) -> list[Problem]:
    """Advice: values gitmem does not know, and what normalization will fix."""
    problems = _moved_hint(path, role, entry)
    if not entry.title:
        problems.append(hint(path, entry.line, "entry heading is empty"))
    importance = entry.fields.get("Importance")
    if importance is not None and importance not in IMPORTANCE_VALUES:
        problems.append(hint(path, entry.line, f"bad Importance {importance!r} "
                                               f"(use {'|'.join(IMPORTANCE_VALUES)}; read as normal)"))
    volatility = entry.fields.get("Volatility")
    if volatility is not None and volatility not in VOLATILITY_VALUES:
        problems.append(hint(path, entry.line, f"bad Volatility {volatility!r} "
                                               f"(use {'|'.join(VOLATILITY_VALUES)}; guessed instead)"))
    for name in DATE_FIELDS:
        value = entry.fields.get(name)
        if value is not None and not _is_date(value):
            problems.append(hint(path, entry.line, f"bad {name} {value!r}: not a date (use YYYY-MM-DD)"))
    for name, line in entry.shape.repeated:
        if name != "Id":
            problems.append(hint(path, line, f"{name} given twice: the first value counts"))
    shape = entry.shape
    if shape.text_after_fields:
        problems.append(hint(path, shape.text_after_fields,
                             "text after the fields: it belongs to the entry and moves above them",
                             fixable=True))
    for line in shape.fields_elsewhere:
        problems.append(hint(path, line, "field line outside the field block: moves into it",
                             fixable=True))
    if shape.gaps_in_fields:
        problems.append(hint(path, shape.gaps_in_fields, "blank line inside the field block",
                             fixable=True))
    if shape.unclosed_fence:
        problems.append(hint(path, shape.unclosed_fence,
                             "code fence never closed: it is closed before the fields", fixable=True))
    if not entry.id and numbered:
        problems.append(hint(path, entry.line, "entry has no Id", fixable=True))
    elif not entry.get("Created"):
        problems.append(hint(path, entry.line, "entry has no Created date "
                                               "(`gitmem check --fix` takes it from git history)",
                             fixable=True))
    return problems


def _fixed(entry: Entry, new_id: str | None, today: str, born: str | None,
           date_known: bool) -> Entry | None:
    """The entry as normalization writes it, or None when it stays byte for byte.

    A brand-new entry (no Id yet) is dated the day it was first committed, else today, and
    counts as verified only when it is being written now. An entry with an Id gets a Created
    date only when its history is known (`check --fix`); Verified is never invented."""
    updates: dict[str, str] = {}
    if new_id is not None:
        updates["Id"] = new_id
    if not entry.id:
        if not entry.get("Created"):
            updates["Created"] = born or today
        if not entry.get("Verified") and born is None:
            updates["Verified"] = today
    elif date_known and not entry.get("Created"):
        updates["Created"] = born or today
    if updates or not entry.shape.canonical:
        return entry.with_fields(**updates)
    return None


def normalize_text(
    path: str,
    text: str,
    *,
    today: str,
    allocate: NumberAllocator,
    locate: IdLocator,
    fix: bool = True,
    created: CreatedLookup | None = None,
) -> Outcome:
    """Check a memory file and, when `fix`, give entries what they lack (Ids, dates, shape).

    `created` finds the day an entry was first committed (check --fix); without it, entries
    that have an Id keep their dates as they are (the write path and the pre-commit hook)."""
    outcome = Outcome(path, text)
    role = classify_path(path)
    if role.kind not in ("topic", "single"):
        return outcome
    for line in conflict_marker_lines(text):
        outcome.problems.append(Problem(path, line, "conflict marker left in: resolve the conflict first"))
    if outcome.problems:
        fix = False  # a file in conflict is resolved by a person first, then normalized
    outcome.problems.extend(name_problems(path, role))
    try:
        topic = parse_topic_file(text, path)
    except ParseError as exc:
        outcome.problems.append(Problem(path, exc.line, exc.reason))
        return outcome
    if role.kind == "single":
        return outcome  # state, working and junk have free-form sections without ids
    numbered = bool(LAYERS[role.layer].abbr)
    outcome.problems.extend(_preamble_problems(path, topic))
    seen: dict[str, int] = {}
    for index, entry in enumerate(topic.entries):
        errors = _entry_errors(path, role, entry)
        if entry.id:
            if entry.id in seen:
                errors.append(Problem(path, entry.line, f"duplicate Id {entry.id} (also at line {seen[entry.id]})"))
            else:
                seen[entry.id] = entry.line
                others = locate(entry.id, path)
                if others:
                    errors.append(Problem(path, entry.line, f"duplicate Id {entry.id} (also in {others[0]})"))
        outcome.problems.extend(errors)
        outcome.problems.extend(_entry_hints(path, role, entry, numbered))
        if not fix or errors:
            continue
        new_id = None
        if not entry.id and numbered:
            new_id = format_id(role.scope, role.layer, allocate(role.scope, role.layer))
            outcome.assigned.append(new_id)
        born = created(path, entry) if created is not None else None
        updated = _fixed(entry, new_id, today, born, created is not None)
        if updated is not None:
            topic.entries[index] = updated
    if fix:
        rendered = render_topic_file(topic)
        outcome.changed = rendered != text
        outcome.text = rendered
    outcome.topic = topic
    return outcome

