"""A topic file renamed with plain git (`git mv a.md b.md && git commit`): the pre-commit hook
makes its front matter and title follow the new name, as `gitmem mv-topic` writes them
(format/renames.py). git reports a rename as the old path deleted and the new one added; the
added file is paired with the deleted topic file its front matter or title names (else, when
the commit renames one topic file of the scope, with that one)."""

from __future__ import annotations

from collections.abc import Sequence

from gitmem.errors import GitmemError
from gitmem.format import layers as L
from gitmem.format.entry import TopicFile
from gitmem.format.markdown import parse_topic_file, render_topic_file
from gitmem.format.normalize import Outcome
from gitmem.format.renames import follow_rename, title_of
from gitmem.git.binary import StagedChange


def follow_renames(outcomes: Sequence[Outcome], changes: Sequence[StagedChange]) -> list[str]:
    """Give each renamed topic file's outcome the text that names its new place; returns the
    paths changed so."""
    gone = [role for role in (L.classify_path(c.path) for c in changes if c.status == "D")
            if role.kind == "topic"]
    added = [c.path for c in changes if c.status == "A" and L.classify_path(c.path).kind == "topic"]
    done = []
    for outcome in outcomes:
        after = L.classify_path(outcome.path)
        if outcome.path not in added or outcome.blocking or not gone:
            continue
        try:
            document = parse_topic_file(outcome.text, outcome.path)
        except GitmemError:
            continue
        scope_gone = [r for r in gone if r.scope == after.scope]
        scope_added = [p for p in added if L.classify_path(p).scope == after.scope]
        before = _named(document, scope_gone) or (
            scope_gone[0] if len(scope_gone) == 1 and len(scope_added) == 1 else None)
        if before is not None and follow_rename(document, before, after, after.slug):
            outcome.text = render_topic_file(document)
            outcome.changed = True
            done.append(outcome.path)
    return done


def _named(document: TopicFile, gone: list[L.FileRole]) -> L.FileRole | None:
    """The deleted topic file whose name the document's `topic` or `# title` still gives."""
    names = {str(n) for n in (document.meta.get("topic"), title_of(document.preamble)) if n}
    slugs = names | {L.canonical_slug(n) for n in names}
    return next((role for role in gone if role.slug in slugs), None)
