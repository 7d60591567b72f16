"""A global working.md an older gitmem left: working memory is per workspace, never global. One
holding only the template is retired by `gitmem check --fix` (it stays in git history); one
someone wrote in is a hint."""

from __future__ import annotations

from gitmem.errors import ParseError
from gitmem.format import layers as L
from gitmem.format.markdown import parse_topic_file
from gitmem.format.normalize import Problem, hint
from gitmem.store.store import Store, WriteTxn
from gitmem.store.tree import read_memory_text
from gitmem.verbs.workfiles import WORKING_PREAMBLE

GLOBAL_WORKING = L.single_file_path(L.GLOBAL, "working")
# Sections an older gitmem wrote into every working file, and the placeholder text of templates.
_TEMPLATE_SECTIONS = {"task", "next steps", "plan", "blocked by", "recent activity", "{{title}}"}
_PLACEHOLDERS = {"what you are in the middle of.", "", "-", "- ", "(none)", "none", "nothing yet", "_nothing yet_"}


def _template_lines() -> set[str]:
    return {" ".join(line.split()).casefold() for line in WORKING_PREAMBLE.splitlines() if line.strip()
            and not line.startswith("# ")}


def template_only(text: str) -> bool:
    """True when a working file holds nothing but the template: its heading and ownership text,
    and sections without content (a stamp at most)."""
    try:
        document = parse_topic_file(text)
    except ParseError:
        return False
    known = _template_lines()
    for line in document.preamble.splitlines():
        folded = " ".join(line.split()).casefold()
        if folded and not line.startswith("# ") and folded not in known:
            return False
    for entry in document.entries:
        if entry.title.strip().casefold() not in _TEMPLATE_SECTIONS:
            return False
        if set(entry.fields) - {"Updated", "Verified"}:
            return False
        if any(" ".join(line.split()).casefold() not in _PLACEHOLDERS and "{{" not in line
               for line in entry.body.splitlines()):
            return False
    return True


def global_working_problem(store: Store) -> Problem | None:
    """global/working.md: retired by `check --fix` when it holds only the template; a hint
    when someone wrote in it (working memory belongs to a workspace)."""
    try:
        text = read_memory_text(store.root, GLOBAL_WORKING)
    except (FileNotFoundError, ParseError):
        return None  # absent; an unreadable one is reported by the normalization rules
    if template_only(text):
        return Problem(GLOBAL_WORKING, 1, "a global working.md holding only the template, left by an "
                       "older gitmem: working memory is per workspace (`gitmem check --fix` retires it)",
                       fixable=True)
    return hint(GLOBAL_WORKING, 1, "working memory is per workspace and the context card never shows a "
                "global one: move what it says to a workspace (`gitmem working -w KEY ...`), then delete it")


def retire_global_working(store: Store, txn: WriteTxn) -> list[str]:
    """Remove a template-only global/working.md (it stays in git history); the paths removed."""
    problem = global_working_problem(store)
    if problem is None or not problem.fixable:
        return []
    return [GLOBAL_WORKING] if store.remove_file(txn, GLOBAL_WORKING) else []
