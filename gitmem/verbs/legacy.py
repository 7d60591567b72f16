"""What older stores left behind, and how `gitmem check --fix` settles it: entries kept directly
in a layer file move into topic files (idempotent); a global working.md holding only the
template (working memory is per workspace, never global) is retired."""

from __future__ import annotations

from gitmem.errors import ParseError
from gitmem.format import layers as L
from gitmem.format.entry import TopicFile
from gitmem.format.markdown import entry_lines, new_topic_file, parse_topic_file
from gitmem.format.normalize import Problem, hint
from gitmem.store.paths import topic_slug
from gitmem.store.store import Store, WriteTxn
from gitmem.store.tree import read_memory_text


def migrate_legacy_layer(store: Store, txn: WriteTxn, key: str, layer: str) -> list[str]:
    """Move entries still kept directly in a layer file into topic files (idempotent)."""
    if L.layer_spec(layer).shape != "topics":
        return []
    relpath = L.layer_index_path(key, layer)
    try:
        text = read_memory_text(store.root, relpath)
    except FileNotFoundError:
        return []
    except ParseError:
        return []  # nothing to move that can be read; `gitmem check` reports the file
    if not entry_lines(text):
        return []  # a generated index has no entry headings: no need to parse it
    legacy = store.read_file(relpath)
    if legacy is None or not legacy.entries:
        return []
    moved: dict[str, TopicFile] = {}
    numbers = [parsed.number for e in legacy.entries if e.id and (parsed := L.parse_id(e.id))]
    next_number = max([store.catalog.max_number(key, layer), *numbers])
    for entry in legacy.entries:
        topic_name = entry.get("Topic") or "general"
        if "Topic" in entry.fields:
            entry = entry.with_fields(Topic=None)
        if not entry.id:
            next_number += 1
            entry = entry.with_fields(Id=L.format_id(key, layer, next_number))
        elif entry.raw is not None and not entry.raw.endswith(("\n", "\r")):
            entry = entry.with_fields()  # the file's last line had no newline: render canonically
        target = L.topic_path(key, layer, topic_slug(topic_name))
        if target not in moved:
            moved[target] = store.read_file(target) or new_topic_file(
                {"topic": topic_name, "layer": layer, "scope": key}, topic_name)
        moved[target].entries.append(entry)
    for target, document in moved.items():
        store.write_topic(txn, target, document)
    # The layer file becomes the generated index once the catalog sees the topic files.
    store.write_file(txn, relpath, "")
    store.catalog.refresh(list(moved), store.read_file)
    return list(moved)


GLOBAL_WORKING = L.single_file_path(L.GLOBAL, "working")
# Sections an older gitmem wrote into every working file, and the placeholder text of templates.
_TEMPLATE_SECTIONS = {"task", "next steps", "plan", "blocked by", "recent activity", "{{title}}"}
_PLACEHOLDERS = {"what you are in the middle of.", "", "-", "- ", "(none)", "none", "nothing yet", "_nothing yet_"}


def _template_lines() -> set[str]:
    from gitmem.verbs.workfiles import WORKING_PREAMBLE

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
