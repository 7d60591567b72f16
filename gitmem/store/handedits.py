"""Normalizing memory files written outside gitmem (editor, plain git), with store-wide ids.

The rules per file are those of gitmem.format.normalize; this module adds what needs the whole
store: ids allocated past every number the catalog knows, duplicate Ids across files, and the
day an entry was first committed (for `gitmem check --fix`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from gitmem.errors import ParseError
from gitmem.format import layers as L
from gitmem.format.entry import Entry
from gitmem.format.markdown import parse_topic_file
from gitmem.format.normalize import CreatedLookup, Outcome, Problem, hint, normalize_text
from gitmem.git import binary as gitcli
from gitmem.git.gitlog import first_added_lines
from gitmem.store.catalog import Catalog

Committed = Callable[[str], "str | None"]  # a path's text in the last commit, None when absent
_ID_FIELD_RE = re.compile(r"^\*\*Id:\*\*[ \t]+(\S+)", re.MULTILINE)


def normalize_texts(catalog: Catalog, texts: dict[str, str], *, today: str, fix: bool,
                    created: CreatedLookup | None = None, gone: Iterable[str] = (),
                    committed: Committed | None = None) -> list[Outcome]:
    """Normalize given texts (working-tree or staged copies), ids allocated consistently.

    The caller brings the catalog up to date first (see catchup.catch_up). `gone` are files the
    texts are checked without (deleted in the commit being made): their Ids are free to appear
    in the texts (a file renamed, an entry moved). `committed` (the commit gates: a write's hand
    edits, the pre-commit hook) reads a file as the last commit holds it: a duplicate Id both
    files already held there is a hint, not an error, since the edit did not bring it (and
    refusing would stop every write to either file until someone settles it).
    """
    left = set(texts) | set(gone)
    taken: dict[tuple[str, str], int] = {}
    for relpath, text in texts.items():  # ids written by hand in these texts are taken too
        if L.classify_path(relpath).kind != "topic":
            continue
        for match in _ID_FIELD_RE.finditer(text):
            parsed = L.parse_id(match.group(1))
            if parsed is not None:  # in the scope and layer it names (see catalog._number)
                key = (parsed.scope, parsed.layer)
                taken[key] = max(taken.get(key, 0), parsed.number)
    allocated: dict[tuple[str, str], int] = {}

    def allocate(scope: str, layer: str) -> int:
        key = (scope, layer)
        if key not in allocated:  # one catalog query per layer, not one per entry
            allocated[key] = max(taken.get(key, 0), catalog.max_number(scope, layer))
        allocated[key] += 1
        return allocated[key]

    old: list[tuple[str, str, str]] = []  # (path, Id, other path) of duplicates already committed

    def already(entry_id: str, path: str, other: str) -> bool:
        found = committed is not None and _holds(committed, path, entry_id) and \
            _holds(committed, other, entry_id)
        if found:
            old.append((path, entry_id, other))
        return found

    def locate(entry_id: str, path: str) -> list[str]:
        # The given files are compared among themselves by _cross_file_duplicates.
        return [p for p in catalog.locate(entry_id)
                if p != path and p not in left and not already(entry_id, path, p)]

    outcomes = []
    seen_ids: dict[str, str] = {}
    for relpath in sorted(texts):
        if not L.is_memory_file(relpath):
            continue
        outcome = normalize_text(relpath, texts[relpath], today=today, allocate=allocate,
                                 locate=locate, fix=fix, created=created)
        _cross_file_duplicates(outcome, seen_ids, already)
        _committed_duplicates(outcome, old)
        outcomes.append(outcome)
    return outcomes


def _holds(committed: Committed, path: str, entry_id: str) -> bool:
    text = committed(path)
    return text is not None and re.search(
        rf"^\*\*Id:\*\*[ \t]+{re.escape(entry_id)}[ \t]*\r?$", text, re.MULTILINE) is not None


def _committed_duplicates(outcome: Outcome, old: list[tuple[str, str, str]]) -> None:
    lines = {e.id: e.line for e in outcome.topic.entries if e.id} if outcome.topic else {}
    for path, entry_id, other in dict.fromkeys(old):
        if path == outcome.path:
            outcome.problems.append(hint(path, lines.get(entry_id, 1), (
                f"duplicate Id {entry_id} (also in {other}, as in the last commit): "
                "`gitmem check --fix` settles it")))


def committed_reader(root: Path) -> Committed:
    """A file's text in HEAD through the git binary, read only when asked (a duplicate found)."""
    cache: dict[str, str | None] = {}

    def read(path: str) -> str | None:
        if path not in cache:
            data = gitcli.run(root, ["cat-file", "-p", f"HEAD:{path}"], check=False)
            cache[path] = data.decode("utf-8", "replace") if data else None
        return cache[path]

    return read


def _cross_file_duplicates(outcome: Outcome, seen: dict[str, str],
                           already: Callable[[str, str, str], bool]) -> None:
    if outcome.topic is None:
        return  # the file could not be parsed: that problem is already reported
    for entry in outcome.topic.entries:
        if entry.id and entry.id in seen and seen[entry.id] != outcome.path:
            if not already(entry.id, outcome.path, seen[entry.id]):
                outcome.problems.append(Problem(
                    outcome.path, entry.line, f"duplicate Id {entry.id} (also in {seen[entry.id]})"))
        elif entry.id:
            seen[entry.id] = outcome.path


def created_lookup(root: Path, texts: dict[str, str]) -> CreatedLookup:
    """A CreatedLookup for the entries of these texts that have no Created date: the day their
    Id line was first committed (in any file), else the day their heading first appeared in
    their file. One walk over the history of the memory files serves all of them."""
    wanted: set[str] = set()
    for relpath, text in texts.items():
        try:
            topic = parse_topic_file(text, relpath)
        except ParseError:
            continue
        for entry in topic.entries:
            if not entry.get("Created"):
                wanted.add(f"## {entry.title}")
                if entry.id:
                    wanted.add(f"**Id:** {entry.id}")
    found = first_added_lines(root, wanted, ["global", "workspaces"]) if wanted else {}
    by_line: dict[str, str] = {}
    for (_path, line), day in found.items():
        by_line[line] = min(day, by_line.get(line, day))

    def lookup(path: str, entry: Entry) -> str | None:
        if entry.id and f"**Id:** {entry.id}" in by_line:
            return by_line[f"**Id:** {entry.id}"]
        return found.get((path, f"## {entry.title}"))

    return lookup
