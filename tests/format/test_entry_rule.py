"""The written rule for what an entry is (docs/writing-by-hand.md), case by case."""

from __future__ import annotations

import pytest

from gitmem.errors import ParseError
from gitmem.format import blocks
from gitmem.format.entry import Entry
from gitmem.format.layers import MAX_ID_NUMBER, classify_path, format_id, parse_id
from gitmem.format.markdown import (
    append_entry_text,
    decode_memory_bytes,
    heading_title,
    parse_topic_file,
    render_topic_file,
)
from gitmem.format.normalize import normalize_text
from gitmem.format.safetext import safe_text, safe_title

FIELDS = "**Id:** global-sem-0001\n**Importance:** normal\n**Created:** 2026-12-01\n**Verified:** 2026-12-01\n"
PATH = "global/semantic/db.md"


def normalize(text: str, path: str = PATH, **kwargs: object) -> tuple[str, list[str], list[str]]:
    """(normalized text, errors, hints) with ids numbered from 0042."""
    numbers = iter(range(42, 10**6))
    outcome = normalize_text(path, text, today="2026-12-02", allocate=lambda s, layer: next(numbers),
                             locate=lambda i, p: [], **kwargs)  # type: ignore[arg-type]
    return (outcome.text, [str(p) for p in outcome.blocking],
            [str(p) for p in outcome.problems if not p.is_error])


def test_text_appended_after_the_fields_belongs_to_the_entry_and_moves_above_them() -> None:
    text = "## DB host\nThe DB lives on db1.\n\n" + FIELDS + "See also ops/db.md\n\n## Next\nx\n"
    (entry, _) = parse_topic_file(text).entries
    assert entry.id == "global-sem-0001"
    assert entry.body == "The DB lives on db1.\n\nSee also ops/db.md"
    assert entry.shape.text_after_fields == 8
    fixed, errors, hints = normalize(text)
    assert not errors and any("text after the fields" in h for h in hints)
    assert fixed == ("## DB host\nThe DB lives on db1.\n\nSee also ops/db.md\n\n" + FIELDS
                     + "\n## Next\nx\n\n**Id:** global-sem-0042\n**Created:** 2026-12-02\n"
                       "**Verified:** 2026-12-02\n")
    assert normalize(fixed)[0] == fixed


def test_an_id_line_anywhere_in_the_entry_identifies_it() -> None:
    text = "## A\n**Id:** global-sem-0007\nbody\n\n**Importance:** high\n"
    (entry,) = parse_topic_file(text).entries
    assert entry.id == "global-sem-0007" and entry.body == "body"
    fixed, errors, _ = normalize(text)
    assert not errors
    assert fixed == "## A\nbody\n\n**Id:** global-sem-0007\n**Importance:** high\n"


def test_a_second_id_line_is_an_error_and_is_never_dropped() -> None:
    text = "## A\nbody\n\n**Id:** global-sem-0001\n**Id:** global-sem-0002\n**Importance:** high\n"
    (entry,) = parse_topic_file(text).entries
    assert entry.id == "global-sem-0001" and entry.extra_fields == (("Id", "global-sem-0002"),)
    fixed, errors, _ = normalize(text)
    assert fixed == text  # an entry with an error is never rewritten
    assert errors == ["global/semantic/db.md:5: entry global-sem-0001 has a second Id line "
                      "(global-sem-0002): keep one, give the other its own entry"]
    rendered = render_topic_file(parse_topic_file(text).__class__(entries=[entry.with_fields(Importance="low")]))
    assert rendered.count("**Id:**") == 2  # a rewrite keeps both lines
    assert parse_topic_file(text).find("global-sem-0002") == 0


def test_a_repeated_field_is_kept_and_the_first_value_counts() -> None:
    text = "## A\nbody\n\n**Id:** global-sem-0001\n**Importance:** high\n**Importance:** low\n"
    (entry,) = parse_topic_file(text).entries
    assert entry.fields["Importance"] == "high"
    _, errors, hints = normalize(text)
    assert not errors and hints == ["global/semantic/db.md:6: Importance given twice: the first value counts",
                                    "global/semantic/db.md:1: entry has no Created date "
                                    "(`gitmem check --fix` takes it from git history)"]
    rewritten = parse_topic_file(render_topic_file(
        parse_topic_file(text).__class__(entries=[entry.with_fields(Source="x")])))
    assert rewritten.entries[0].extra_fields == (("Importance", "low"),)


def test_an_unclosed_fence_is_closed_before_the_fields() -> None:
    text = "## Build notes\nBuild notes\n```sh\nmake all\n\n" + FIELDS + "\n## Second\nsecond\n\n**Id:** global-sem-0002\n"
    first, second = parse_topic_file(text).entries
    assert first.id == "global-sem-0001" and second.id == "global-sem-0002"
    assert first.body == "Build notes\n```sh\nmake all\n```"
    fixed, errors, _ = normalize(text)
    assert not errors and "make all\n```\n\n**Id:** global-sem-0001" in fixed


def test_a_fence_closed_after_the_fields_by_an_earlier_version_still_yields_the_id() -> None:
    text = "## Build notes\n```sh\nmake all\n\n" + FIELDS + "```\n\n## Second\nb\n\n**Id:** global-sem-0002\n"
    first, second = parse_topic_file(text).entries
    assert (first.id, second.id) == ("global-sem-0001", "global-sem-0002")
    assert first.body == "```sh\nmake all\n```"  # that closing line closes the body's fence


def test_a_fence_opened_after_the_fields_cannot_swallow_the_next_entry() -> None:
    text = "## A\na\n\n" + FIELDS + "```\n## B\n```\ncode\n```\n\n**Id:** global-sem-0002\n"
    first, second = parse_topic_file(text).entries
    assert (first.id, second.id, second.title) == ("global-sem-0001", "global-sem-0002", "B")
    assert first.body == "a\n\n```\n```"


def test_a_fence_before_the_first_entry_cannot_hide_it() -> None:
    text = "# topic\n```\n## A\nbody\n\n**Id:** global-sem-0001\n"
    (entry,) = parse_topic_file(text).entries
    assert entry.id == "global-sem-0001" and entry.title == "A"
    assert render_topic_file(parse_topic_file(text)) == text


def test_a_heading_inside_a_closed_fence_is_code() -> None:
    text = "## Script\n```sh\n## step one\nmake\n```\n\n**Id:** global-pro-0001\n"
    (entry,) = parse_topic_file(text).entries
    assert entry.body == "```sh\n## step one\nmake\n```"


@pytest.mark.parametrize("line", [" ## beta", "  ## beta", "   ## beta", "    ## beta", "\t## beta", "###x"])
def test_only_a_heading_at_column_zero_starts_an_entry(line: str) -> None:
    (entry,) = parse_topic_file(f"## alpha line\n{line}\ngamma\n").entries
    assert entry.body == f"{line}\ngamma"


def test_a_lone_cr_is_part_of_its_line() -> None:
    (entry,) = parse_topic_file("## A\nlone\r## not a heading\n").entries
    assert entry.body == "lone\r## not a heading"


def test_bom_and_crlf_are_kept() -> None:
    text = "\ufeff---\r\ntopic: t\r\n---\r\n## A\r\nbody\r\n\r\n**Id:** global-sem-0001\r\nafter\r\n"
    topic = parse_topic_file(text)
    assert topic.bom == "\ufeff" and topic.meta == {"topic": "t"}
    assert topic.entries[0].line == 4
    assert render_topic_file(topic) == text
    fixed, errors, _ = normalize(text)
    assert not errors
    assert fixed == ("\ufeff---\r\ntopic: t\r\n---\r\n\r\n## A\r\nbody\r\n\r\nafter\r\n\r\n"
                     "**Id:** global-sem-0001\r\n")


def test_field_runs_separated_by_blank_lines_join_but_a_text_paragraph_does_not() -> None:
    joined = parse_topic_file("## A\nbody\n\n**Id:** global-sem-0001\n\n**Related:** x\n").entries[0]
    assert joined.fields == {"Id": "global-sem-0001", "Related": "x"} and joined.body == "body"
    assert joined.shape.gaps_in_fields
    note = parse_topic_file("## A\nbody\n**Note:** kept as text\n\n**Id:** global-sem-0001\n").entries[0]
    assert note.body == "body\n**Note:** kept as text" and note.fields == {"Id": "global-sem-0001"}


def test_an_entry_with_only_unknown_fields_has_them_as_text() -> None:
    (entry,) = parse_topic_file("## A\n**Rationale:** because\n").entries
    assert entry.fields == {} and entry.body == "**Rationale:** because"


def test_a_closing_hash_run_is_not_part_of_a_title() -> None:
    assert heading_title("## Title ##") == "Title"
    assert heading_title("## C#") == "C#"
    assert heading_title("## ##") == ""
    assert heading_title(f"## {safe_title('Issue #')}") == "Issue \\#"


def test_safe_text_escapes_what_would_change_the_structure() -> None:
    given = "  first line kept indented\r\n## heading\n ## indented\n**Id:** global-sem-9\n" \
            "<<<<<<< ours\n```\n## in code\n**Importance:** high\nlone\rcr\n\n\n"
    assert safe_text(given) == (
        "  first line kept indented\n\\## heading\n \\## indented\n **Id:** global-sem-9\n"
        "\\<<<<<<< ours\n```\n## in code\n **Importance:** high\nlone\rcr\n```"
    )


def test_appending_after_an_id_less_entry_with_an_open_fence_closes_it_first() -> None:
    text = "## A\n```\ncode never closed\n"
    added = append_entry_text(text, Entry("B", "new", {"Id": "global-sem-0002"}))
    assert [e.title for e in parse_topic_file(added).entries] == ["A", "B"]


def test_normalize_assigns_ids_and_dates_new_entries_only() -> None:
    text = "## Old\nx\n\n**Id:** global-sem-0001\n\n## New\ny\n"
    fixed, errors, hints = normalize(text)
    assert not errors
    assert fixed == ("## Old\nx\n\n**Id:** global-sem-0001\n\n## New\ny\n\n**Id:** global-sem-0042\n"
                     "**Created:** 2026-12-02\n**Verified:** 2026-12-02\n")
    assert "global/semantic/db.md:1: entry has no Created date" in hints[0]


def test_with_history_an_entry_gets_the_day_it_was_first_committed_and_no_verification() -> None:
    text = "## Old\nx\n\n**Id:** global-sem-0001\n\n## Committed without id\ny\n\n## Brand new\nz\n"
    born = {"Old": "2024-03-05", "Committed without id": "2024-04-01"}
    fixed, _, _ = normalize(text, created=lambda path, entry: born.get(entry.title))
    assert fixed == ("## Old\nx\n\n**Id:** global-sem-0001\n**Created:** 2024-03-05\n\n"
                     "## Committed without id\ny\n\n**Id:** global-sem-0042\n**Created:** 2024-04-01\n\n"
                     "## Brand new\nz\n\n**Id:** global-sem-0043\n**Created:** 2026-12-02\n"
                     "**Verified:** 2026-12-02\n")


def test_malformed_ids_are_errors_and_ids_of_another_layer_are_kept_with_a_hint() -> None:
    assert parse_id("global-sem-99999999999999999999999") is None
    assert parse_id(f"global-sem-{MAX_ID_NUMBER}") is not None
    with pytest.raises(Exception, match="an Id past"):
        format_id("global", "semantic", MAX_ID_NUMBER + 1)
    text = ("## A\na\n\n**Id:** global-sem-99999999999999999999999\n\n"
            "## B\nb\n\n**Id:** global-sem-0042\n")
    _, errors, hints = normalize(text, path="global/procedural/x.md")
    assert errors == [
        "global/procedural/x.md:1: malformed Id 'global-sem-99999999999999999999999' "
        "(expected <scope>-<abbr>-<number>, the number below a billion)",
    ]
    assert "global/procedural/x.md:6: Id global-sem-0042 was given in global/semantic: " \
        "the entry keeps it here (an Id never changes)" in hints


def test_bytes_that_are_not_text_are_refused_with_their_line() -> None:
    with pytest.raises(ParseError, match=r"^x.md:2: not UTF-8 text \(byte 0xff\)"):
        decode_memory_bytes(b"## A\n\xff\n", "x.md")
    with pytest.raises(ParseError, match=r"^x.md:3: binary file"):
        decode_memory_bytes(b"a\nb\n\x00", "x.md")


def test_invalid_workspace_folders_and_hidden_files_are_not_memory_files() -> None:
    for path in ("workspaces/global/semantic/x.md", "workspaces/Bad Name/semantic/x.md",
                 "workspaces/con/semantic/x.md", "global/semantic/.#x.md"):
        assert classify_path(path).kind == "other", path
    assert classify_path("workspaces/ok/semantic/x.md").kind == "topic"


def test_parsing_is_linear_no_entry_rescans_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    scanned = []
    original = blocks.scan

    def counting(texts: list[str], **kwargs: bool) -> blocks.Scan:
        scanned.append(len(texts))
        return original(texts, **kwargs)

    monkeypatch.setattr("gitmem.format.markdown.scan", counting)
    monkeypatch.setattr("gitmem.format.blocks.scan", counting)
    # Each entry opens a fence it never closes and has no Id: every one is rewritten.
    entries = "".join(f"## Entry {i}\n```\ncode {i}\n\n**Importance:** low\n\n" for i in range(2000))
    lines = entries.count("\n")
    fixed, errors, _ = normalize(entries)
    assert not errors and fixed.count("**Id:**") == 2000
    assert sum(scanned) <= 6 * lines, "the file (or a growing part of it) was scanned once per entry"
