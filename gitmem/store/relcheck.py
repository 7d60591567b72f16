"""Checks of the fields that point elsewhere (Related, Paths), for `gitmem check` and the
pre-commit hook: an unknown relation type, a typed link to an id the store does not hold, a link
of an entry to itself and a Paths item outside the repository are problems (`path:line`);
untyped links and free text, as older entries wrote them, are kept and reported as hints.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from gitmem.errors import ParseError
from gitmem.format import layers as L
from gitmem.format.entry import Entry
from gitmem.format.markdown import parse_topic_file
from gitmem.format.normalize import Problem, hint
from gitmem.format.references import RELATION_TYPES, field_line, parse_paths, parse_related
from gitmem.store.catalog import Catalog

TYPES = "|".join(RELATION_TYPES)


_ID_LINE = re.compile(r"^\*\*Id:\*\*[ \t]+(\S+)", re.MULTILINE)
_MARKERS = ("**Related:**", "**Paths:**")


def _entries(texts: dict[str, str]) -> dict[str, list[Entry]]:
    """The entries of the topic files that hold a field this check looks at."""
    out = {}
    for relpath, text in texts.items():
        if L.classify_path(relpath).kind != "topic" or not any(m in text for m in _MARKERS):
            continue
        try:
            out[relpath] = parse_topic_file(text, relpath).entries
        except ParseError:
            continue  # reported by the format check
    return out


def relation_findings(catalog: Catalog, texts: dict[str, str],
                      gone: Iterable[str] = ()) -> tuple[list[Problem], list[Problem]]:
    """(problems, hints) of the Related and Paths fields in these topic file texts.

    An id exists when one of the texts holds it, or the catalog places it in a file that is
    neither among the texts (their copy wins) nor gone.
    """
    parsed = _entries(texts)
    here = {m.group(1) for text in texts.values() for m in _ID_LINE.finditer(text)}
    skip = set(texts) | set(gone)

    def exists(entry_id: str) -> bool:
        return entry_id in here or any(p not in skip for p in catalog.locate(entry_id))

    problems: list[Problem] = []
    hints: list[Problem] = []
    for relpath, entries in sorted(parsed.items()):
        for entry in entries:
            _check_related(relpath, entry, exists, problems, hints)
            _check_paths(relpath, entry, problems)
    return problems, hints


def _check_related(relpath: str, entry: Entry, exists: Callable[[str], bool],
                   problems: list[Problem], hints: list[Problem]) -> None:
    value = entry.fields.get("Related", "")
    if not value.strip():
        return
    line = entry.line + field_line(entry.raw, "Related")
    for item in parse_related(value):
        if item.type is not None and not item.known_type:
            problems.append(Problem(relpath, line, f"unknown relation type {item.type!r} in"
                                    f" Related: {item.raw} (use {TYPES})"))
            continue
        if item.target is None:
            hints.append(hint(relpath, line, f"Related holds free text {item.raw!r}: kept as"
                                 f" it is; a link is TYPE:ID ({TYPES})"))
            continue
        if item.space is None and item.target == entry.id:
            problems.append(Problem(relpath, line, f"{entry.id} is related to itself"))
            continue
        dangling = item.space is None and not exists(item.target)
        if item.type is None:
            note = " (and no entry has that id)" if dangling else ""
            hints.append(hint(relpath, line, f"untyped link {item.raw!r}{note}: write it as"
                                 f" TYPE:{item.ref} ({TYPES})"))
        elif dangling:
            problems.append(Problem(relpath, line, f"Related: {item.raw} points to"
                                    f" {item.target}, which does not exist"))


def _check_paths(relpath: str, entry: Entry, problems: list[Problem]) -> None:
    value = entry.fields.get("Paths")
    if value is None:
        return
    _good, bad = parse_paths(value)
    line = entry.line + field_line(entry.raw, "Paths")
    for item in bad:
        problems.append(Problem(relpath, line, f"Paths: {item!r} is not a path inside the"
                                " workspace repository (no absolute paths, no '..')"))
