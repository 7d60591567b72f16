"""Three-way merge: entry-by-entry topic merge, JSON merges, line merge and dispatch by path."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.format.entry import Entry, TopicFile
from gitmem.format.markdown import (
    conflict_marker_lines,
    parse_topic_file,
    render_frontmatter,
    render_topic_file,
)
from gitmem.merge.entries import MergeResult, merge_lines, merge_topic_text
from gitmem.merge.files import merge_file, merge_json_records, merge_json_registry

PATH = "global/semantic/tools.md"
HEAD = "---\ntopic: tools\nlayer: semantic\nscope: global\n---\n# Tools\n\n"


def entry(number: int, title: str, body: str, nl: str = "\n", **fields: str) -> str:
    """A canonical entry with Id global-sem-<number>."""
    lines = [f"## {title}", body, "", f"**Id:** global-sem-{number:04d}"]
    lines += [f"**{name}:** {value}" for name, value in fields.items()]
    return nl.join(lines) + nl


def topic(*entries: str, head: str = HEAD) -> str:
    return head + "\n".join(entries)


def ids(text: str) -> list[str]:
    return [e.id or "" for e in parse_topic_file(text).entries]


def bodies(text: str) -> dict[str, str]:
    return {e.id or e.title: e.body for e in parse_topic_file(text).entries}


A, B, C = entry(1, "Alpha", "alpha body"), entry(2, "Beta", "beta body"), entry(3, "Gamma", "gamma")
BASE = topic(A, B, C)


# ---- fast paths and one-sided changes ----------------------------------------------------


def test_identical_and_one_sided_inputs_return_the_other_side_byte_for_byte() -> None:
    edited = topic(A, entry(2, "Beta", "beta edited"), C)
    assert merge_topic_text(PATH, BASE, BASE, BASE).text == BASE
    assert merge_topic_text(PATH, BASE, edited, BASE).text == edited
    assert merge_topic_text(PATH, BASE, BASE, edited).text == edited
    assert merge_topic_text(PATH, BASE, edited, edited).text == edited


def test_edit_on_one_side_wins_and_untouched_entries_keep_their_bytes() -> None:
    ours = topic(A + "\n", B, C)  # a harmless blank line is not an edit
    theirs = topic(A, entry(2, "Beta", "beta theirs"), C)
    result = merge_topic_text(PATH, BASE, ours, theirs)
    assert result.text == topic(A + "\n", entry(2, "Beta", "beta theirs"), C)
    assert not result.conflicts and not result.notes


def test_identical_edits_on_both_sides_are_taken_once() -> None:
    edit = entry(2, "Beta", "same edit")
    result = merge_topic_text(PATH, BASE, topic(A, edit, C), topic(A, edit, C, entry(4, "D", "d")))
    assert ids(result.text) == [
        "global-sem-0001",
        "global-sem-0002",
        "global-sem-0003",
        "global-sem-0004",
    ]
    assert bodies(result.text)["global-sem-0002"] == "same edit"
    assert not result.conflicts


def test_deleted_on_one_side_untouched_on_the_other_is_deleted() -> None:
    result = merge_topic_text(PATH, BASE, topic(A, C), topic(A, B, C, entry(4, "D", "d")))
    assert ids(result.text) == ["global-sem-0001", "global-sem-0003", "global-sem-0004"]
    assert not result.notes


def test_edit_beats_delete_without_markers_and_is_noted() -> None:
    theirs = topic(A, entry(2, "Beta", "beta kept"), C)
    for ours_, theirs_ in ((topic(A, C), theirs), (theirs, topic(A, C))):
        result = merge_topic_text(PATH, BASE, ours_, theirs_)
        assert bodies(result.text)["global-sem-0002"] == "beta kept"
        assert not result.conflicts and not conflict_marker_lines(result.text)
        assert any("global-sem-0002" in n and "deleted" in n for n in result.notes)


# ---- new entries and renumbering ----------------------------------------------------------


def test_new_entries_on_both_sides_are_kept_in_a_deterministic_order() -> None:
    ours = topic(A, B, entry(4, "Ours new", "o"), C)
    theirs = topic(entry(9, "Theirs first", "t0"), A, B, C, entry(5, "Theirs last", "t"))
    result = merge_topic_text(PATH, BASE, ours, theirs)
    assert ids(result.text) == [
        "global-sem-0009",
        "global-sem-0001",
        "global-sem-0002",
        "global-sem-0004",
        "global-sem-0003",
        "global-sem-0005",
    ]
    assert merge_topic_text(PATH, BASE, ours, theirs) == result


def test_theirs_only_entries_follow_their_predecessor_in_theirs() -> None:
    ours = topic(C, A, B)  # reordered on ours: ours' order wins
    theirs = topic(A, entry(4, "After alpha", "x"), entry(5, "Next", "y"), B, C)
    result = merge_topic_text(PATH, BASE, ours, theirs)
    assert ids(result.text)[1:] == [
        "global-sem-0001",
        "global-sem-0004",
        "global-sem-0005",
        "global-sem-0002",
    ]


def test_entries_appended_on_both_sides_put_ours_first() -> None:
    ours = topic(A, B, C, entry(4, "Ours new", "o"))
    theirs = topic(A, B, C, entry(5, "Theirs new", "t"))
    result = merge_topic_text(PATH, BASE, ours, theirs)
    assert ids(result.text)[3:] == ["global-sem-0004", "global-sem-0005"]
    assert result.text == ours + "\n" + entry(5, "Theirs new", "t")


def test_hand_written_entry_added_on_both_sides_is_kept_once() -> None:
    hand = "## Hand\nsame text\n"
    result = merge_topic_text(PATH, BASE, topic(A, B, C, hand), topic(A, C, hand))
    assert [e.title for e in parse_topic_file(result.text).entries] == ["Alpha", "Gamma", "Hand"]


def test_same_new_id_same_content_is_kept_once() -> None:
    new = entry(4, "Delta", "delta")
    result = merge_topic_text(PATH, BASE, topic(A, B, C, new), topic(A, B + "\n", C, new))
    assert ids(result.text).count("global-sem-0004") == 1
    assert not result.renumbered and not result.conflicts


def test_same_new_id_different_content_renumbers_theirs_past_every_known_number() -> None:
    ours = topic(A, B, C, entry(4, "Ours delta", "from ours"))
    theirs = topic(A, B, C, entry(4, "Theirs delta", "from theirs"), entry(5, "Epsilon", "e"))
    result = merge_topic_text(PATH, BASE, ours, theirs, taken_ids=lambda scope, layer: {1, 17})
    assert result.renumbered == {"global-sem-0004": "global-sem-0018"}
    parsed = {e.id: e for e in parse_topic_file(result.text).entries}
    assert parsed["global-sem-0004"].title == "Ours delta"
    assert parsed["global-sem-0018"].title == "Theirs delta"
    assert parsed["global-sem-0018"].body == "from theirs"
    assert "global-sem-0005" in parsed
    assert any("global-sem-0018" in n for n in result.notes)
    assert not result.conflicts
    assert len(set(ids(result.text))) == len(ids(result.text))


def test_renumbering_without_taken_ids_uses_numbers_of_the_three_files() -> None:
    base = topic(A, entry(12, "Twelve", "t"))
    ours = topic(A, entry(12, "Twelve", "t"), entry(13, "O", "o"))
    theirs = topic(A, entry(13, "T", "t"), entry(14, "T2", "u"))
    result = merge_topic_text(PATH, base, ours, theirs)  # theirs deleted Twelve: deleted
    assert result.renumbered == {"global-sem-0013": "global-sem-0015"}
    assert ids(result.text) == [
        "global-sem-0001",
        "global-sem-0013",
        "global-sem-0015",
        "global-sem-0014",
    ]


# ---- conflicts ----------------------------------------------------------------------------


def test_different_edits_get_markers_around_that_entry_only() -> None:
    ours_b, theirs_b = entry(2, "Beta", "ours edit"), entry(2, "Beta", "theirs edit")
    ours, theirs = topic(A, ours_b, C), topic(A, theirs_b, C, entry(4, "New", "n"))
    result = merge_topic_text(PATH, BASE, ours, theirs)
    expected_block = f"<<<<<<< ours\n{ours_b}=======\n{theirs_b}>>>>>>> theirs\n"
    assert expected_block in result.text
    assert result.text.startswith(HEAD + A + "\n<<<<<<< ours\n")
    assert [(c.kind, c.entry_id, c.title) for c in result.conflicts] == [
        ("both-edited", "global-sem-0002", "Beta")
    ]
    assert result.conflicts[0].ours == ours_b and result.conflicts[0].theirs == theirs_b
    assert len(conflict_marker_lines(result.text)) == 3
    parsed = parse_topic_file(result.text).entries
    # Entries around and inside the block still parse with their fields.
    assert [e.id for e in parsed] == [
        "global-sem-0001",
        "global-sem-0002",
        "global-sem-0002",
        "global-sem-0003",
        "global-sem-0004",
    ]
    assert [e.body for e in parsed][1:3] == ["ours edit", "theirs edit"]


def test_conflict_markers_in_a_crlf_file_are_found_and_the_file_still_parses() -> None:
    nl = "\r\n"
    base = topic(entry(1, "A", "a", nl), entry(2, "B", "b", nl), head=f"# T{nl}{nl}")
    ours = topic(entry(1, "A", "a1", nl), entry(2, "B", "b", nl), head=f"# T{nl}{nl}")
    theirs = topic(entry(1, "A", "a2", nl), entry(2, "B", "b", nl), head=f"# T{nl}{nl}")
    result = merge_topic_text(PATH, base, ours, theirs)
    assert len(conflict_marker_lines(result.text)) == 3
    assert "\n" not in result.text.replace("\r\n", "")
    assert [e.id for e in parse_topic_file(result.text).entries] == [
        "global-sem-0001",
        "global-sem-0001",
        "global-sem-0002",
    ]


def test_conflict_on_last_entry_without_final_newline() -> None:
    base = topic(A, "## Last\nx\n\n**Id:** global-sem-0002")
    ours = topic(A, "## Last\nours\n\n**Id:** global-sem-0002")
    theirs = topic(A, "## Last\ntheirs\n\n**Id:** global-sem-0002")
    result = merge_topic_text(PATH, base, ours, theirs)
    assert result.text.endswith("**Id:** global-sem-0002\n>>>>>>> theirs\n")
    assert "**Id:** global-sem-0002\n=======\n" in result.text
    assert [e.body for e in parse_topic_file(result.text).entries][1:] == ["ours", "theirs"]


# ---- hand-written entries, header, robustness ---------------------------------------------


def test_entries_without_id_match_by_content_then_title() -> None:
    hand = "## Hand note\nwritten by hand\n"
    base = topic(A, hand)
    ours = topic(A, hand, "## Another\nmore\n")
    theirs = topic(A, "## Hand note\nwritten by hand, edited\n")
    result = merge_topic_text(PATH, base, ours, theirs)
    assert bodies(result.text) == {
        "global-sem-0001": "alpha body",
        "Hand note": "written by hand, edited",
        "Another": "more",
    }
    both = merge_topic_text(PATH, base, topic(A, "## Hand note\nours\n"), theirs)
    assert [(c.entry_id, c.title) for c in both.conflicts] == [(None, "Hand note")]


def test_hand_written_entry_given_an_id_on_one_side_is_the_same_entry() -> None:
    hand = "## Hand note\nwritten by hand\n"
    ours = topic(A, "## Hand note\nwritten by hand\n\n**Id:** global-sem-0002\n")
    result = merge_topic_text(PATH, topic(A, hand), ours, topic(A, hand, entry(3, "T", "t")))
    assert ids(result.text) == ["global-sem-0001", "global-sem-0002", "global-sem-0003"]


def test_code_fence_with_hashes_is_body_not_an_entry() -> None:
    fenced = entry(2, "Beta", "```sh\n## not a heading\necho hi\n```")
    theirs = topic(A, fenced, C)
    result = merge_topic_text(PATH, BASE, topic(A, B, C, entry(4, "D", "d")), theirs)
    assert ids(result.text) == [
        "global-sem-0001",
        "global-sem-0002",
        "global-sem-0003",
        "global-sem-0004",
    ]
    assert "## not a heading" in bodies(result.text)["global-sem-0002"]


def test_header_changed_on_one_side_is_taken_and_on_both_combined_or_ours() -> None:
    theirs_head = HEAD.replace("# Tools", "# Tools and more")
    result = merge_topic_text(PATH, BASE, topic(A, B), topic(A, B, C, head=theirs_head))
    assert result.text.startswith(theirs_head) and ids(result.text)[-1] == "global-sem-0002"
    ours_head = HEAD.replace("topic: tools", "topic: tooling")
    combined = merge_topic_text(
        PATH, BASE, topic(A, B, C, head=ours_head), topic(A, B, head=theirs_head)
    )
    assert combined.text.startswith(ours_head.replace("# Tools", "# Tools and more"))
    clash = merge_topic_text(
        PATH,
        BASE,
        topic(A, B, C, head=HEAD + "ours line\n\n"),
        topic(A, B, head=HEAD + "theirs line\n\n"),
    )
    # Free text above the first entry, edited differently on both sides: neither side's words
    # are lost (ours, then theirs, as git's union merge), and no marker breaks the file.
    assert clash.text.startswith(HEAD + "ours line\n\ntheirs line\n\n")
    assert any("kept both" in n for n in clash.notes) and not clash.conflicts
    fronts = merge_topic_text(
        PATH,
        BASE,
        topic(A, B, head=HEAD.replace("topic: tools", "topic: ours") + "ours line\n\n"),
        topic(A, B, head=HEAD.replace("topic: tools", "topic: theirs") + "theirs line\n\n"),
    )
    assert fronts.text.startswith(HEAD.replace("topic: tools", "topic: ours"))
    assert "ours line" in fronts.text and "theirs line" in fronts.text
    assert any("front matter edited differently" in n for n in fronts.notes)


def test_unreadable_frontmatter_falls_back_to_a_line_merge() -> None:
    bad = "---\nkey: [unclosed\n---\n" + A
    result = merge_topic_text(PATH, BASE, bad, topic(A, B, C, entry(4, "D", "d")))
    assert "line by line" in result.notes[0]
    assert "<<<<<<< ours" in result.text


def test_base_none_treats_both_sides_as_additions() -> None:
    result = merge_topic_text(PATH, None, topic(A), topic(A, B))
    assert ids(result.text) == ["global-sem-0001", "global-sem-0002"]
    assert not result.conflicts


# ---- property tests -----------------------------------------------------------------------

WORD = st.text(alphabet="abcdefgxyzé記憶漢字テスト", min_size=1, max_size=6)
LINE = st.lists(WORD, min_size=1, max_size=4).map(" ".join)
FENCE = LINE.map(lambda line: f"```\n## {line}\n```")
BODY = st.lists(st.one_of(LINE, FENCE), max_size=3).map("\n".join)
SPEC = st.tuples(LINE, BODY)
ACTION = st.sampled_from(["keep", "keep", "edit0", "edit1", "delete"])


@dataclass
class Side:
    text: str
    actions: list[str]
    new: list[tuple[str, str]]


def make_entry(number: int, spec: tuple[str, str]) -> Entry:
    return Entry(title=spec[0], body=spec[1], fields={"Id": f"global-sem-{number:04d}"})


def render(entries: list[Entry], nl: str) -> str:
    head = render_frontmatter({"topic": "t", "layer": "semantic"}, nl)
    return render_topic_file(TopicFile(head, {}, f"# T{nl}{nl}", entries, nl))


def mutate(base: str, actions: list[str], new: list[tuple[str, str]], flip: bool) -> str:
    """A side: base entries kept (same bytes), edited or deleted, then new ones appended."""
    parsed = parse_topic_file(base)
    entries = []
    for entry_, action in zip(parsed.entries, actions, strict=True):
        if action.startswith("edit"):
            entries.append(entry_.with_body(f"{entry_.body}\nedited {action}".lstrip("\n")))
        elif action == "keep":
            entries.append(entry_)
    start = len(parsed.entries) + 1
    entries += [make_entry(start + i, spec) for i, spec in enumerate(new)]
    parsed.entries = entries
    text = render_topic_file(parsed)
    if flip:  # the other line-ending style for the whole file
        text = (
            text.replace("\r\n", "\n") if parsed.newline == "\r\n" else text.replace("\n", "\r\n")
        )
    return text


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[str, Side, Side]:
    specs = draw(st.lists(SPEC, max_size=5))
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    base = render([make_entry(i + 1, spec) for i, spec in enumerate(specs)], nl)
    sides = []
    shared_new = draw(st.lists(SPEC, max_size=2))
    for _ in range(2):
        actions = draw(st.lists(ACTION, min_size=len(specs), max_size=len(specs)))
        new = draw(st.one_of(st.just(shared_new), st.lists(SPEC, max_size=2)))
        sides.append(Side(mutate(base, actions, new, draw(st.booleans())), actions, new))
    return base, sides[0], sides[1]


def expected_entries(
    base: str, ours: Side, theirs: Side, result: MergeResult
) -> tuple[dict[str, str], set[str]]:
    """id -> body every surviving entry must have, and the ids that must conflict."""
    want: dict[str, str] = {}
    conflicts: set[str] = set()
    for index, entry_ in enumerate(parse_topic_file(base).entries):
        o, t = ours.actions[index], theirs.actions[index]
        assert entry_.id
        if "delete" in (o, t) and "edit" not in o + t:
            continue
        if o.startswith("edit") and t.startswith("edit") and o != t:
            conflicts.add(entry_.id)
            continue
        edit = o if o.startswith("edit") else t if t.startswith("edit") else ""
        want[entry_.id] = f"{entry_.body}\nedited {edit}".lstrip("\n") if edit else entry_.body
    start = len(parse_topic_file(base).entries) + 1
    for i, (title, body) in enumerate(ours.new):
        want[f"global-sem-{start + i:04d}"] = make_entry(0, (title, body)).body
    for i, (title, body) in enumerate(theirs.new):
        old = f"global-sem-{start + i:04d}"
        want[result.renumbered.get(old, old)] = make_entry(0, (title, body)).body
    return want, conflicts


def normalized_bodies(text: str) -> list[tuple[str, str]]:
    return [
        (e.id or "", parse_topic_file(render([e], "\n")).entries[0].body)
        for e in parse_topic_file(text).entries
    ]


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_property_entry_merge(scenario: tuple[str, Side, Side]) -> None:
    base, ours, theirs = scenario
    result = merge_topic_text(PATH, base, ours.text, theirs.text)
    assert merge_topic_text(PATH, base, ours.text, theirs.text) == result  # deterministic
    want, conflicts = expected_entries(base, ours, theirs, result)
    parsed = parse_topic_file(result.text).entries
    counts = Counter(e.id for e in parsed)
    assert set(counts) == set(want) | conflicts
    assert {i for i, n in counts.items() if n > 1} == conflicts  # ids unique outside conflicts
    assert all(counts[i] == 2 for i in conflicts)
    assert {c.entry_id for c in result.conflicts} == conflicts
    assert len(conflict_marker_lines(result.text)) == 3 * len(conflicts)
    for e in parsed:
        if e.id not in conflicts:
            assert e.body == want[e.id or ""], e.id


@settings(deadline=None)
@given(scenarios())
def test_property_one_side_equal_to_base(scenario: tuple[str, Side, Side]) -> None:
    base, x, _ = scenario
    assert merge_topic_text(PATH, base, x.text, base).text == x.text
    assert merge_topic_text(PATH, base, base, x.text).text == x.text
    assert merge_topic_text(PATH, base, x.text, x.text).text == x.text
    if x.text == base:
        return
    # Past the fast path: the other side differs from base only by its line endings.
    flipped = base.replace("\r\n", "\n") if "\r\n" in base else base.replace("\n", "\r\n")
    slow = merge_topic_text(PATH, base, x.text, flipped)
    assert slow.text == x.text and not slow.notes and not slow.conflicts
    unflipped = merge_topic_text(PATH, base, flipped, x.text)
    assert normalized_bodies(unflipped.text) == normalized_bodies(x.text)
    assert not unflipped.conflicts


# ---- JSON merges --------------------------------------------------------------------------


def dumps(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


REGISTRY = {
    "schemaVersion": 1,
    "git": {"remote": "origin", "branch": "main"},
    "workspaces": {"app": {"title": "App"}},
    "spaces": [],
}


def test_registry_merges_workspaces_by_key_and_keeps_ours_on_scalar_conflict() -> None:
    ours = json.loads(json.dumps(REGISTRY))
    theirs = json.loads(json.dumps(REGISTRY))
    ours["workspaces"]["api"] = {"title": "API"}
    ours["git"]["branch"] = "trunk"
    theirs["workspaces"]["web"] = {"title": "Web"}
    theirs["workspaces"]["app"]["title"] = "The app"
    theirs["git"]["branch"] = "master"
    result = merge_json_registry(dumps(REGISTRY), dumps(ours), dumps(theirs))
    merged = json.loads(result.text)
    assert list(merged["workspaces"]) == ["app", "api", "web"]
    assert merged["workspaces"]["app"]["title"] == "The app"
    assert merged["git"]["branch"] == "trunk"
    assert result.notes == ["memory.json: git.branch: changed differently on both sides; kept ours"]
    assert not result.conflicts and result.text.endswith("}\n") and '\n  "git"' in result.text


def test_registry_deletions_and_lists_of_records() -> None:
    base = {
        "workspaces": {"a": {"title": "A"}, "b": {"title": "B"}},
        "spaces": [{"name": "team", "active": True}],
    }
    ours = {"workspaces": {"a": {"title": "A"}}, "spaces": [{"name": "team", "active": False}]}
    theirs = {
        "workspaces": {"a": {"title": "A"}, "b": {"title": "B2"}},
        "spaces": [{"name": "team", "active": True}, {"name": "me", "active": True}],
    }
    result = merge_json_registry(dumps(base), dumps(ours), dumps(theirs))
    merged = json.loads(result.text)
    assert merged["workspaces"]["b"] == {"title": "B2"}  # edit beats delete
    assert merged["spaces"] == [{"name": "team", "active": False}, {"name": "me", "active": True}]
    assert any("workspaces.b" in n for n in result.notes)


def test_invalid_json_falls_back_to_line_merge() -> None:
    result = merge_json_registry("{}\n", "{oops\n", '{"a": 1}\n')
    assert "not valid JSON" in result.notes[0] and result.conflicts


def test_records_merge_by_id_field_by_field() -> None:
    base = {
        "version": 1,
        "documents": [
            {"id": "d1", "title": "One", "lastAccessedAt": 1},
            {"id": "d2", "title": "Two", "lastAccessedAt": 1},
        ],
    }
    ours = {
        "version": 1,
        "documents": [
            {"id": "d1", "title": "One!", "lastAccessedAt": 1},
            {"id": "d3", "title": "Three", "lastAccessedAt": 2},
        ],
    }
    theirs = {
        "version": 1,
        "documents": [
            {"id": "d1", "title": "One", "lastAccessedAt": 5},
            {"id": "d2", "title": "Two", "lastAccessedAt": 1},
            {"id": "d4", "title": "Four", "lastAccessedAt": 3},
        ],
    }
    result = merge_json_records(dumps(base), dumps(ours), dumps(theirs))
    assert json.loads(result.text)["documents"] == [
        {"id": "d1", "title": "One!", "lastAccessedAt": 5},
        {"id": "d3", "title": "Three", "lastAccessedAt": 2},
        {"id": "d4", "title": "Four", "lastAccessedAt": 3},
    ]
    assert not result.notes


def test_runtime_memories_without_ids_match_by_content() -> None:
    def rec(content: str, updated: str = "2026-01-01") -> dict[str, str]:
        return {"content": content, "target": "memory", "updated_at": updated}

    base = [rec("uses uv"), rec("tabs")]
    ours = [rec("uses uv", "2026-02-01"), rec("tabs"), rec("ours fact")]
    theirs = [rec("uses uv"), rec("theirs fact")]  # removed "tabs"
    result = merge_json_records(dumps(base), dumps(ours), dumps(theirs))
    assert json.loads(result.text) == [
        rec("uses uv", "2026-02-01"),
        rec("ours fact"),
        rec("theirs fact"),
    ]


def test_records_custom_key_and_compact_crlf_style_kept() -> None:
    base = '[{"slug": "a", "v": 1}]\r\n'
    ours = '[{"slug": "a", "v": 2}]\r\n'
    theirs = '[{"slug": "a", "v": 1}, {"slug": "b", "v": 1}]\r\n'
    result = merge_json_records(base, ours, theirs, key="slug")
    assert result.text == '[{"slug": "a", "v": 2}, {"slug": "b", "v": 1}]\r\n'


# ---- line merge ---------------------------------------------------------------------------


def test_line_merge_combines_non_overlapping_edits() -> None:
    base = "a\nb\nc\nd\ne\n"
    result = merge_lines("x.txt", base, "A\nb\nc\nd\ne\n", "a\nb\nc\nd\ne\nf\n")
    assert result.text == "A\nb\nc\nd\ne\nf\n" and not result.conflicts


def test_line_merge_marks_overlapping_edits() -> None:
    result = merge_lines("x.txt", "a\nb\nc\n", "a\nours\nc\n", "a\ntheirs\nc\n")
    assert result.text == "a\n<<<<<<< ours\nours\n=======\ntheirs\n>>>>>>> theirs\nc\n"
    assert [(c.kind, c.title, c.ours, c.theirs) for c in result.conflicts] == [
        ("lines", "line 2", "ours\n", "theirs\n")
    ]
    same = merge_lines("x.txt", "a\nb\nc\n", "a\nsame\nc\nz\n", "a\nsame\nc\n")
    assert same.text == "a\nsame\nc\nz\n" and not same.conflicts


def test_line_merge_ignores_line_ending_changes_and_handles_missing_base() -> None:
    result = merge_lines("x", "a\nb\nc\n", "a\nB\nc\n", "a\r\nb\r\nc\r\nd\r\n")
    assert result.text == "a\nB\nc\nd\n"
    both_new = merge_lines("x", None, "one\n", "two")
    assert both_new.text == "<<<<<<< ours\none\n=======\ntwo\n>>>>>>> theirs\n"


# ---- dispatch by path ---------------------------------------------------------------------


def test_merge_file_dispatch() -> None:
    index = merge_file("global/semantic.md", "x\n", "ours\n", "theirs\n")
    assert index is not None and index.regenerate and index.text == "ours\n"
    system = merge_file("SYSTEM.md", "x\n", "x\n", "theirs\n")
    assert system is not None and system.regenerate and system.text == "theirs\n"
    same = merge_file("SYSTEM.md", "x\n", "y\n", "y\n")
    assert same is not None and not same.regenerate
    human = merge_file("workspaces/app/INDEX.md", "a\nb\n", "A\nb\n", "a\nB\n")
    assert human is not None and human.conflicts and human.conflicts[0].kind == "lines"
    topic_ = merge_file(PATH, BASE, topic(A, B), topic(A, B, C, entry(4, "D", "d")))
    assert topic_ is not None and ids(topic_.text)[-1] == "global-sem-0004"
    single = merge_file(
        "workspaces/app/state.md",
        "## Branch\nmain\n",
        "## Branch\nmain\n\n## Tests\ngreen\n",
        "## Branch\ndev\n",
    )
    assert single is not None and bodies(single.text) == {"Branch": "dev", "Tests": "green"}
    registry = merge_file("memory.json", '{"a": 1}', '{"a": 1, "b": 2}', '{"a": 1, "c": 3}')
    assert registry is not None and json.loads(registry.text) == {"a": 1, "b": 2, "c": 3}
    runtime = merge_file(
        "global/runtime/memories.json", "[]", '[{"content": "x"}]', '[{"content": "y"}]'
    )
    assert runtime is not None and len(json.loads(runtime.text)) == 2
    docs = merge_file("documents/index.json", "[]", '[{"id": "a"}]', '[{"id": "b"}]')
    assert docs is not None and json.loads(docs.text) == [{"id": "a"}, {"id": "b"}]


def test_merge_file_deletions() -> None:
    assert merge_file(PATH, BASE, None, None) is None
    assert merge_file(PATH, BASE, None, BASE) is None
    assert merge_file(PATH, BASE, BASE, None) is None
    added = merge_file(PATH, None, None, BASE)
    assert added is not None and added.text == BASE and not added.notes
    kept = merge_file(PATH, BASE, None, topic(A))
    assert kept is not None and kept.text == topic(A) and "deleted on ours" in kept.notes[0]
    generated = merge_file("global/semantic.md", "x\n", "y\n", None)
    assert generated is not None and generated.regenerate


def test_marker_lines_after_fields_do_not_hide_them_but_plain_text_is_kept() -> None:
    marked = parse_topic_file("## A\nbody\n\n**Id:** global-sem-0001\n=======\n").entries[0]
    assert (marked.id, marked.body) == ("global-sem-0001", "body")
    setext = parse_topic_file("## A\nTitle\n=======\n").entries[0]
    assert (setext.fields, setext.body) == ({}, "Title\n=======")
