"""Front matter of the simple kind is read without YAML (gitmem/notes/frontmatter.py), and
reads exactly as YAML reads it; anything else still goes to YAML."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gitmem.notes.basic_memory import read_note
from gitmem.notes.frontmatter import simple_front_matter
from gitmem.notes.model import ReadContext
from gitmem.notes.sections import split_front_matter

WORDS = ["title", "type", "tags", "permalink", "Component 7", "note", "yes", "No", "null", "~",
         "12", "0x1f", "1.5", ".inf", "2024-01-02", "a:b", "a: b", "# c", "x #y", "'q'", '"q"',
         "[a, b]", "[a, 1]", "[]", "[ ]", "[a, ]", "{a: b}", "- a", "Ana's notes", "on", "(draft)",
         "a, b", "-", ":", "  ", "\t", "é", "<<", "=", "!tag", "&x", "*x", "|", ">", "%", "@"]
LINE = st.tuples(st.sampled_from(["title", "type", "tags", "k-1", "_x", "yes", " title", "-x", ""]),
                 st.sampled_from([":", ": ", ":  ", " :", ""]),
                 st.lists(st.sampled_from(WORDS) | st.text("ab ,[]:#'-.1", max_size=5),
                          max_size=3).map(" ".join),
                 st.sampled_from(["", " ", "  "])).map("".join)


def _yaml(raw: str) -> object:
    try:
        return yaml.load(raw, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return "error"


@settings(deadline=None, database=None, max_examples=400)
@given(st.lists(LINE, max_size=5).map(lambda lines: "".join(f"{line}\n" for line in lines)))
@example("title: Component 7\ntype: note\ntags: [area-7, bench]\npermalink: component-7\n")
@example("title: 2024-01-02\n")
@example("tags: [a, 1]\n")
@example("title:\n")
@example("title: a\ntitle: b\n")
def test_the_simple_reading_is_what_yaml_reads(raw: str) -> None:
    simple = simple_front_matter(raw)
    if simple is not None:
        assert simple == (_yaml(raw) or {}), raw


def test_the_usual_notes_are_read_simply_and_the_rest_by_yaml() -> None:
    assert simple_front_matter("title: Coffee Brewing\ntype: note\ntags: [coffee, brewing]\n") == {
        "title": "Coffee Brewing", "type": "note", "tags": ["coffee", "brewing"]}
    for raw in ("title: 'quoted'\n", "created: 2024-01-02\n", "tags:\n  - a\n", "title: a # c\n",
                "title: Café\n", "draft: yes\n"):
        assert simple_front_matter(raw) is None, raw
        assert split_front_matter(f"---\n{raw}---\n\nbody\n", "n.md")[0] == yaml.safe_load(raw)


def test_a_note_reads_the_same_either_way(tmp_path: Path) -> None:
    note = tmp_path / "people" / "ana.md"
    note.parent.mkdir()
    note.write_text("---\ntitle: Ana\ntags: [team, design]\npermalink: people/ana\n---\n\n# Ana\n\n"
                    "Ana leads design.\n\n## Observations\n- [fact] Ana prefers sketches #style\n")
    simple = read_note(note, tmp_path, ReadContext(home=tmp_path))
    quoted = note.read_text().replace("title: Ana", "title: 'Ana'")  # the same, read by YAML
    note.write_text(quoted)
    assert read_note(note, tmp_path, ReadContext(home=tmp_path)).notes == simple.notes
