"""Normalizing memory files written outside gitmem (editor, plain git), with store-wide ids.

The rules per file are those of gitmem.format.normalize; this module adds what needs the whole
store: ids allocated past every number the catalog knows, and duplicate Ids across files.
"""

from __future__ import annotations

import re

from gitmem.format import layers as L
from gitmem.format.markdown import parse_topic_file
from gitmem.format.normalize import Outcome, Problem, normalize_text
from gitmem.store.catalog import Catalog

_ID_FIELD_RE = re.compile(r"^\*\*Id:\*\*[ \t]+(\S+)", re.MULTILINE)


def normalize_texts(catalog: Catalog, texts: dict[str, str], *, today: str, fix: bool) -> list[Outcome]:
    """Normalize given texts (working-tree or staged copies), ids allocated consistently.

    The caller brings the catalog up to date first (see catchup.catch_up).
    """
    allocated: dict[tuple[str, str], int] = {}
    for text in texts.values():  # ids written by hand in these texts are taken too
        for match in _ID_FIELD_RE.finditer(text):
            parsed = L.parse_id(match.group(1))
            if parsed is not None:
                key = (parsed.scope, parsed.layer)
                allocated[key] = max(allocated.get(key, 0), parsed.number)

    def allocate(scope: str, layer: str) -> int:
        key = (scope, layer)
        allocated[key] = max(allocated.get(key, 0), catalog.max_number(scope, layer)) + 1
        return allocated[key]

    def locate(entry_id: str, path: str) -> list[str]:
        # The given files are compared among themselves by _cross_file_duplicates.
        return [p for p in catalog.locate(entry_id) if p != path and p not in texts]

    outcomes = []
    seen_ids: dict[str, str] = {}
    for relpath in sorted(texts):
        if not L.is_memory_file(relpath):
            continue
        outcome = normalize_text(relpath, texts[relpath], today=today,
                                 allocate=allocate, locate=locate, fix=fix)
        _cross_file_duplicates(outcome, seen_ids)
        outcomes.append(outcome)
    return outcomes


def _cross_file_duplicates(outcome: Outcome, seen: dict[str, str]) -> None:
    try:
        topic = parse_topic_file(outcome.text, outcome.path)
    except Exception:  # noqa: BLE001 - the parse problem is already reported
        return
    for entry in topic.entries:
        if entry.id and entry.id in seen and seen[entry.id] != outcome.path:
            outcome.problems.append(
                Problem(outcome.path, entry.line, f"duplicate Id {entry.id} (also in {seen[entry.id]})")
            )
        elif entry.id:
            seen[entry.id] = outcome.path
