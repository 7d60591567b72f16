"""Properties of the entry rule, in process (the store round trips are in tests/store).

- Text given to a write parses back as written (modulo the documented escapes), for random
  Markdown and every CommonMark spec example: no Id lost, no entry created.
- Random sequences of hand edits, then normalization and a write: every Id still names one
  entry with its text, no entry appears that was not written, entries that needed nothing keep
  their bytes.
- The line rule agrees with a CommonMark parser (markdown-it) on entry headings and fences.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from entrygen import (
    Files,
    apply,
    body_kept,
    build_files,
    hand_edits,
    markdown_bodies,
    remembered,
)
from fixtures.commonmark import examples
from gitmem.format.blocks import FIELD_RE, KNOWN_FIELDS, scan
from gitmem.format.layers import parse_id
from gitmem.format.markdown import (
    CONFLICT_MARKER_RE,
    append_entry_text,
    parse_topic_file,
    render_topic_file,
    split_lines,
    strip_eol,
)
from gitmem.format.normalize import normalize_text
from gitmem.format.safetext import clean_text, safe_text

FAST = settings(deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
HEAD = "---\ntopic: t\nlayer: semantic\n---\n# t\n\n"


def _write(text: str, bodies: list[str]) -> tuple[str, dict[str, tuple[str, str]]]:
    """Append an entry per body the way `remember` does; (file text, id -> (title, body))."""
    written = {}
    for number, body in enumerate(bodies, 1):
        entry = remembered(body, f"global-sem-{number:04d}")
        if entry is None:
            continue
        if number % 2:  # the append fast path and the parse-render path must agree
            text = append_entry_text(text, entry)
        else:
            topic = parse_topic_file(text)
            topic.entries.append(entry)
            text = render_topic_file(topic)
        written[str(entry.id)] = (entry.title, entry.body)
    return text, written


def _assert_read_back(text: str, written: dict[str, tuple[str, str]]) -> None:
    entries = parse_topic_file(text).entries
    assert [e.id for e in entries] == list(written), "an Id was lost or an entry appeared"
    for entry in entries:
        assert (entry.title, entry.body) == written[str(entry.id)]
        assert entry.shape.canonical and not entry.extra_fields
    assert render_topic_file(parse_topic_file(text)) == text


@FAST
@given(st.lists(markdown_bodies(), min_size=1, max_size=4), st.sampled_from(["", HEAD, "\ufeff" + HEAD]))
def test_text_given_to_a_write_parses_back_as_written(bodies: list[str], head: str) -> None:
    text, written = _write(head, bodies)
    _assert_read_back(text, written)


def test_every_commonmark_example_round_trips_through_a_write() -> None:
    cases = examples()
    assert len(cases) == 649
    kept = 0
    for start in range(0, len(cases), 25):  # a topic file of 25 entries each
        text, written = _write(HEAD, list(cases[start:start + 25]))
        _assert_read_back(text, written)
        kept += len(written)
    assert kept == sum(1 for case in cases if case.strip(" \t\r\n"))


# -- safe text ---------------------------------------------------------------------------------

_HEADING_ESCAPE = re.compile(r"^( {0,3})\\(##(?:[ \t]|$))")


def _documented_change(original: str, safe: str) -> bool:
    """`safe` is `original` as it is, or with one of the documented escapes."""
    if safe == original:
        return True
    if safe == " " + original and FIELD_RE.match(original) and FIELD_RE.match(original)[1] in KNOWN_FIELDS:
        return True
    if safe == "\\" + original and CONFLICT_MARKER_RE.match(original):
        return True
    return _HEADING_ESCAPE.sub(r"\1\2", safe) == original


@FAST
@given(markdown_bodies())
@example("    \r ")  # a "\r" that reaches the end only once the spaces after it are dropped
@example("a\r \n\r \r\n")
def test_safe_text_changes_only_what_is_documented(text: str) -> None:
    safe = safe_text(text)
    assert safe_text(safe) == safe  # idempotent
    cleaned = clean_text(text).split("\n")
    lines = safe.split("\n") if safe else []
    extra = len(lines) - len(cleaned if safe else [])
    assert extra in (0, 1)
    if extra:
        assert re.fullmatch(r"`{3,}|~{3,}", lines[-1]), "only a closing fence may be added"
    for original, now in zip(cleaned, lines, strict=False):
        assert _documented_change(original, now), (original, now)


# -- hand edits --------------------------------------------------------------------------------

PATHS = ["global/semantic/a.md", "global/semantic/b.md"]


def _normalize(files: Files) -> dict[str, list[str]]:
    """Normalize every file as a write does (store-wide ids); returns the errors per file."""
    taken = [parse_id(e.id) for t in files.texts.values() for e in parse_topic_file(t).entries if e.id]
    top = max([p.number for p in taken if p is not None], default=0)

    def allocate(scope: str, layer: str) -> int:
        nonlocal top
        top += 1
        return top

    holders: dict[str, set[str]] = {}
    for p, t in files.texts.items():
        for e in parse_topic_file(t, p).entries:
            holders.setdefault(str(e.id), set()).add(p)

    def locate(entry_id: str, path: str) -> list[str]:
        return sorted(holders.get(entry_id, set()) - {path})

    errors = {}
    for path in sorted(files.texts):
        outcome = normalize_text(path, files.texts[path], today="2026-12-03",
                                 allocate=allocate, locate=locate)
        files.texts[path] = outcome.text
        errors[path] = [str(p) for p in outcome.blocking]
    return errors


def _entries(files: Files) -> list[tuple[str, object]]:
    return [(path, entry) for path, text in files.texts.items()
            for entry in parse_topic_file(text, path).entries]


def _bytes(entries: list[tuple[str, object]], only_canonical: bool = False) -> set[tuple[str, str]]:
    """(path, text) of entries, up to their last line (a write may add a blank line after one)."""
    return {(path, entry.raw.rstrip("\r\n")) for path, entry in entries  # type: ignore[attr-defined]
            if not only_canonical or (entry.shape.canonical and not entry.extra_fields)}  # type: ignore[attr-defined]


@FAST
@given(st.lists(markdown_bodies(), min_size=2, max_size=5), st.data())
def test_hand_edits_then_normalization_and_a_write_lose_nothing(bodies: list[str], data: st.DataObject) -> None:
    files = build_files(bodies, PATHS)
    ids = list(files.bodies)
    if not ids:
        return
    for op in data.draw(hand_edits(ids, PATHS)):
        apply(files, op)
    before = _bytes(_entries(files), only_canonical=True)
    _normalize(files)
    entries = _entries(files)
    for path, entry in entries:  # normalized, or left as written because of an error
        assert entry.shape.canonical or entry.extra_fields, (path, entry.title)
    assert before <= _bytes(entries), "an entry that needed nothing was rewritten"
    again = dict(files.texts)
    _normalize(files)
    assert files.texts == again  # normalization is idempotent
    added = remembered("written after the hand edits", "global-sem-0999")
    assert added is not None
    files.texts[PATHS[0]] = append_entry_text(files.texts[PATHS[0]], added)
    after = _entries(files)
    assert _bytes(entries) <= _bytes(after), "a write changed another entry"
    by_id: dict[str, list[object]] = {}
    for _path, entry in after:
        by_id.setdefault(entry.id, []).append(entry)
    assert len(after) == len(ids) + 1, "an entry appeared or disappeared"
    assert set(by_id) == {*ids, "global-sem-0999"}, "an Id was lost or invented"
    for entry_id in ids:
        (entry,) = by_id[entry_id]
        assert body_kept(files.bodies[entry_id], entry.body), entry_id


# -- the rule against a CommonMark parser ------------------------------------------------------

def _markdown_it_headings(text: str) -> list[int]:
    from markdown_it import MarkdownIt

    md = MarkdownIt("zero").enable(["heading", "fence", "code"])
    tokens = md.parse(text)
    lines = text.split("\n")
    return [t.map[0] for t in tokens if t.type == "heading_open" and t.tag == "h2" and t.level == 0
            and t.map is not None and lines[t.map[0]].startswith("##")]


@FAST
@given(st.lists(st.one_of(st.sampled_from(["## h", "##", "```", "~~~", "````", " ```", "    ```",
                                           "```x", "``` `y`", "   ~~~", "text", "", "\t```"]),
                          st.text(alphabet="#`~ \tab", max_size=8)), max_size=30))
def test_entry_headings_and_fences_agree_with_markdown_it(lines: list[str]) -> None:
    text = "## first\n" + "\n".join(lines) + "\n"
    assert not any(FIELD_RE.match(line) for line in lines)
    texts = [strip_eol(line) for line in split_lines(text)]
    assert scan(texts).headings == _markdown_it_headings(text)
