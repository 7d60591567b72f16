"""Every reader of entries agrees with the one rule (gitmem/format/blocks.py) on generated files.

The readers that look at a file without the full parse — the line finder `entry_lines`, the
single-entry reader `entry_at`, the search hit's field reader (verbs/suspects.py), the pre-commit
check of generated layer files (githooks/precommit.py), the legacy-layer probe of `check --fix`
(verbs/legacy.py) and of the runtime archive (runtime/archive.py) — find the same entries, at the
same lines, with the same fields, as `parse_topic_file` on files with fences, indented headings,
`##` inside code, BOM and CRLF.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from entrygen import apply, build_files, hand_edits, line_strategy, markdown_bodies
from gitmem.errors import GitmemError
from gitmem.format.markdown import entry_at, entry_lines, parse_topic_file, split_lines
from gitmem.githooks.precommit import _legacy_entries
from gitmem.verbs.suspects import entry_fields

CHECKS = settings(deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
PATHS = ["global/semantic/a.md", "global/semantic/b.md"]
HEADS = ["", "---\ntopic: t\n---\n# t\n\n", "\ufeff---\r\ntopic: t\r\n---\r\n", "---\n: [bad\n---\n"]
TRICKY = ["## real", "   ## indented", "```", "## in code?", "~~~", "##", "##\ttab", " ```",
          "**Id:** global-sem-0001", "```sh", "    ## four", "**Verified:** 2026-01-01"]


@st.composite
def entry_files(draw: st.DrawFn) -> str:
    """A whole topic file: hand-edited `remember` output, or free lines under a frontmatter."""
    if draw(st.booleans()):
        files = build_files(draw(st.lists(markdown_bodies(), min_size=1, max_size=4)), PATHS)
        if files.bodies:
            for op in draw(hand_edits(list(files.bodies), PATHS)):
                apply(files, op)
        return files.texts[draw(st.sampled_from(PATHS))]
    lines = draw(st.lists(st.one_of(st.sampled_from(TRICKY), line_strategy), max_size=30))
    text = draw(st.sampled_from(HEADS)) + "\n".join(lines) + draw(st.sampled_from(["", "\n"]))
    return text.replace("\n", "\r\n") if draw(st.booleans()) else text


def _read_back(text: str) -> dict[int, dict[str, str]]:
    """line -> fields of each entry, as the full parse sees them."""
    return {entry.line: dict(entry.fields) for entry in parse_topic_file(text, lenient=True).entries}


@contextlib.contextmanager
def _on_disk(text: str) -> Iterator[Path]:
    """The text in a topic file of its own, removed after the example (hypothesis runs many)."""
    with tempfile.TemporaryDirectory(prefix="gitmem-readers-") as folder:
        path = Path(folder) / "topic.md"
        path.write_bytes(text.encode("utf-8"))
        yield path


@CHECKS
@given(entry_files())
@example("---\ntopic: t\n---\n```\n## in code\n```\n   ## indented\n")
@example("## a\n```\n## still a\n```\n**Id:** global-sem-0001\n##\tb\r\n")
def test_every_entry_reader_agrees_with_the_full_parse(text: str) -> None:
    expected = _read_back(text)
    assert entry_lines(text) == sorted(expected)
    others = [n for n in range(1, len(split_lines(text)) + 2) if n not in expected]
    with _on_disk(text) as path:
        for line, fields in expected.items():
            entry = entry_at(text, line)
            assert entry is not None and dict(entry.fields) == fields
            assert entry_fields(path, line) == fields
        for line in others:
            assert entry_at(text, line) is None
            assert entry_fields(path, line) == {}
    try:
        parse_topic_file(text)
    except GitmemError:  # frontmatter that does not parse: the hook's check leaves it to `check`
        return
    assert [p.line for p in _legacy_entries("global/semantic.md", text)] == sorted(expected)
