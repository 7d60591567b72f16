"""An Id is one entry: the merge keys by Id when the base has it (pure functions, no git)."""

from __future__ import annotations

import pytest

from gitmem.errors import ConflictError
from gitmem.format.conflicts import (
    HeldBlocks,
    conflict_blocks,
    keep_blocks,
    parse_label,
    versions_of,
)
from gitmem.format.markdown import parse_topic_file
from gitmem.merge.common import Labels
from gitmem.merge.entries import merge_topic_text
from gitmem.merge.prep import ConflictBlocks, renumber_local_ids

PATH = "global/semantic/staging.md"
HEAD = "---\ntopic: staging\n---\n# staging\n\n"


def one_liner(text: str, number: int = 1, **fields: str) -> str:
    """An entry as `remember` writes a one-line fact: the heading is the text."""
    lines = [f"## {text}", text, "", f"**Id:** global-sem-{number:04d}", "**Importance:** normal",
             "**Created:** 2026-11-01", *(f"**{k}:** {v}" for k, v in fields.items())]
    return "\n".join(lines) + "\n"


BASE = HEAD + one_liner("Host is 10.0.0.7") + "\n" + one_liner("User is app", 2)
OURS = HEAD + one_liner("Host is 10.0.0.9") + "\n" + one_liner("User is app", 2)
THEIRS = HEAD + one_liner("Host is 10.0.0.8") + "\n" + one_liner("User is app", 2)


def test_two_edits_of_an_entry_the_base_has_are_never_renumbered() -> None:
    """Heading and body both changed on both sides: still the same entry (was a renumbering)."""
    rewritten, renumbered, notes = renumber_local_ids({PATH: (BASE, OURS)}, {PATH: (BASE, THEIRS)})
    assert (rewritten, renumbered, notes) == ({}, {}, [])


def test_two_edits_of_an_entry_make_one_labelled_block_around_it() -> None:
    labels = Labels("laptop-b 3f2c1d0e9b8a", "laptop-a 7e6d5c4b3a21")
    result = merge_topic_text(PATH, BASE, OURS, THEIRS, labels=labels)
    assert not result.renumbered
    [conflict] = result.conflicts
    assert conflict.entry_id == "global-sem-0001" and conflict.kind == "both-edited"
    [block] = conflict_blocks(result.text)
    assert block.text.startswith("<<<<<<< laptop-b 3f2c1d0e9b8a\n## Host is 10.0.0.9\n")
    assert block.text.endswith(">>>>>>> laptop-a 7e6d5c4b3a21\n")
    assert "User is app" not in block.text
    assert [v.label for v in block.versions] == ["laptop-b 3f2c1d0e9b8a", "laptop-a 7e6d5c4b3a21"]
    assert [parse_label(v.label) for v in block.versions] == [("laptop-b", "3f2c1d0e9b8a"),
                                                              ("laptop-a", "7e6d5c4b3a21")]


def test_new_entries_under_one_new_id_are_renumbered_on_this_side() -> None:
    ours = BASE + "\n" + one_liner("Queue alarm at 500", 3)
    theirs = BASE + "\n" + one_liner("Cache warmup 40 s", 3)
    rewritten, renumbered, _notes = renumber_local_ids({PATH: (BASE, ours)}, {PATH: (BASE, theirs)})
    assert renumbered == {"global-sem-0003": "global-sem-0004"}
    assert "**Id:** global-sem-0004" in rewritten[PATH]


def test_edits_of_different_parts_combine() -> None:
    """Forgotten on one machine, re-verified on the other: no conflict, both changes kept."""
    base = HEAD + one_liner("Host is 10.0.0.7", Verified="2026-11-01")
    ours = HEAD + one_liner("Host is 10.0.0.7", Verified="2026-11-01", Forgotten="2026-11-20")
    theirs = HEAD + one_liner("Host is 10.0.0.7", Verified="2026-11-21")
    result = merge_topic_text(PATH, base, ours, theirs)
    assert not result.conflicts and "<<<<<<<" not in result.text
    [entry] = parse_topic_file(result.text).entries
    assert entry.fields["Forgotten"] == "2026-11-20" and entry.fields["Verified"] == "2026-11-21"
    assert any("combined" in note for note in result.notes)


def test_verified_on_both_sides_keeps_the_later_day_and_body_edits_still_conflict() -> None:
    base = HEAD + one_liner("Host is 10.0.0.7", Verified="2026-11-01")
    ours = HEAD + one_liner("Host is 10.0.0.7", Verified="2026-11-03")
    theirs = HEAD + one_liner("Host is 10.0.0.7", Verified="2026-11-02")
    result = merge_topic_text(PATH, base, ours, theirs)
    assert not result.conflicts and "**Verified:** 2026-11-03" in result.text
    clash = merge_topic_text(PATH, base, ours.replace("2026-11-01\n**Verified", "2026-11-02\n**Verified"),
                             theirs.replace("Importance:** normal", "Importance:** high"))
    assert not clash.conflicts  # Created changed here, Importance there: different parts
    both = merge_topic_text(PATH, base, ours.replace("normal", "low"), theirs.replace("normal", "high"))
    assert [c.entry_id for c in both.conflicts] == ["global-sem-0001"]


def test_an_earlier_block_is_never_combined_piecewise() -> None:
    """A side that verified the entry against an incoming block: one flat block, no fields lost."""
    block = f"<<<<<<< b 1111111\n{one_liner('Host is 10.0.0.9')}=======\n{one_liner('Host is 10.0.0.8')}>>>>>>> a 2222222\n"
    theirs = HEAD + block + "\n" + one_liner("User is app", 2)
    held = ConflictBlocks()
    merged = merge_topic_text(PATH, held.protect(BASE), held.protect(BASE.replace(
        "**Created:** 2026-11-01\n", "**Created:** 2026-11-01\n**Verified:** 2026-11-30\n", 1)),
        held.protect(theirs) or "")
    restored = held.restore(merged.text, BASE, PATH)
    [flat] = conflict_blocks(restored)
    assert "10.0.0.9" in flat.text and "10.0.0.8" in flat.text and "2026-11-30" in flat.text


def test_versions_of_a_nested_block_keep_their_labels() -> None:
    inner = "<<<<<<< b 1111111\n## X\none\n=======\n## X\ntwo\n>>>>>>> a 2222222\n"
    nested = f"<<<<<<< c 3333333\n## X\nthree\n=======\n{inner}>>>>>>> theirs\n"
    assert [(v.label, v.text.splitlines()[1]) for v in versions_of(nested)] == [
        ("c 3333333", "three"), ("b 1111111", "one"), ("a 2222222", "two")]


def test_held_blocks_come_back_byte_for_byte_and_a_changed_block_is_refused() -> None:
    text = HEAD + "<<<<<<< b 1111111\n" + one_liner("Host is 10.0.0.9") + "=======\n" + \
        one_liner("Host is 10.0.0.8") + ">>>>>>> a 2222222\n\n" + one_liner("User is app", 2)
    held = HeldBlocks()
    plain = held.hold(text)
    assert "<<<<<<<" not in plain and held.put_back(plain) == text
    topic = parse_topic_file(plain)
    assert [e.id for e in topic.entries] == ["global-sem-0001", "global-sem-0002"]
    assert held.block(topic.entries[0].body) is not None and held.block(topic.entries[1].body) is None
    keep_blocks(PATH, text, text + "\n## Another\nx\n")  # the block is still there: fine
    with pytest.raises(ConflictError, match="gitmem resolve global-sem-0001"):
        keep_blocks(PATH, text, text.replace("=======\n", ""))
