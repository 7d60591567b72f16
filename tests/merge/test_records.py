"""Record files (runtime memories, document indexes) merge record by record, with real conflicts."""

from __future__ import annotations

import json
from typing import Any

from gitmem.merge.files import merge_file
from gitmem.merge.records import record_conflicts

RUNTIME = "workspaces/shop/runtime/memories.json"
DOCS = "global/documents/index.json"


def dumps(items: list[dict[str, Any]], key: str = "items") -> str:
    return json.dumps({"schemaVersion": 1, key: items}, indent=2) + "\n"


def rec(ident: str, content: str, updated: str = "2026-01-01T00:00:00Z", **extra: Any) -> dict[str, Any]:
    return {"id": ident, "target": "memory", "content": content, "importance": "normal",
            "updated_at": updated, **extra}


def test_different_fields_of_one_record_merge_and_the_later_timestamp_wins() -> None:
    base = dumps([rec("rt-1", "a")])
    ours = dumps([rec("rt-1", "a2", "2026-02-01T00:00:00Z")])
    theirs = dumps([{**rec("rt-1", "a", "2026-03-01T00:00:00Z"), "importance": "critical"}])
    result = merge_file(RUNTIME, base, ours, theirs)
    assert result is not None and not result.conflicts
    assert json.loads(result.text)["items"] == [
        {**rec("rt-1", "a2", "2026-03-01T00:00:00Z"), "importance": "critical"}]


def test_two_different_edits_of_one_field_are_a_conflict_keeping_both() -> None:
    base = dumps([rec("rt-1", "a"), rec("rt-2", "b")])
    ours = dumps([rec("rt-1", "ours", "2026-02-01T00:00:00Z"), rec("rt-2", "b")])
    theirs = dumps([rec("rt-1", "theirs", "2026-03-01T00:00:00Z"), rec("rt-2", "b2")])
    result = merge_file(RUNTIME, base, ours, theirs)
    assert result is not None
    items = json.loads(result.text)["items"]
    assert items[0]["content"] == "ours" and items[0]["conflict"]["fields"] == ["content"]
    assert items[0]["conflict"]["theirs"]["content"] == "theirs"
    assert items[1] == rec("rt-2", "b2")
    assert [(c.path, c.entry_id, c.kind) for c in result.conflicts] == [(RUNTIME, "rt-1", "both-edited")]
    assert "<<<<<<<" not in result.text
    assert record_conflicts(result.text) == [("rt-1", "ours")]
    assert record_conflicts(dumps([rec("rt-2", "b")])) == []


def test_a_record_added_under_the_same_number_on_both_sides_is_renumbered_on_ours() -> None:
    doc = lambda n, title: {"id": f"global-doc-{n:04d}", "title": title, "filename": f"{title}.md"}  # noqa: E731
    base = dumps([doc(1, "base")], "documents")
    ours = dumps([doc(1, "base"), doc(2, "mine")], "documents")
    theirs = dumps([doc(1, "base"), doc(2, "theirs"), doc(3, "more")], "documents")
    result = merge_file(DOCS, base, ours, theirs)
    assert result is not None and not result.conflicts
    assert result.renumbered == {"global-doc-0002": "global-doc-0004"}
    titles = {d["id"]: d["title"] for d in json.loads(result.text)["documents"]}
    assert titles == {"global-doc-0001": "base", "global-doc-0002": "theirs",
                      "global-doc-0003": "more", "global-doc-0004": "mine"}


def test_archive_lists_merge_by_appending_both_sides() -> None:
    path = "global/runtime/USER.archive.md"
    base = "# Items that left USER.md\n\n- rt-1 one\n"
    result = merge_file(path, base, base + "- rt-2 two\n", base + "- rt-3 three\n")
    assert result is not None and not result.conflicts
    assert result.text == base + "- rt-2 two\n- rt-3 three\n"


def test_projections_are_regenerated_not_merged() -> None:
    result = merge_file("global/runtime/MEMORY.md", "a\n", "a\n§\nb\n", "a\n§\nc\n")
    assert result is not None and result.regenerate and not result.conflicts


def test_a_record_in_conflict_keeps_where_each_version_came_from() -> None:
    from gitmem.format.records import conflict_origins
    from gitmem.merge.common import Labels
    from gitmem.merge.records import conflict_labels

    base = dumps([rec("rt-1", "a")])
    ours = dumps([rec("rt-1", "ours", "2026-02-01T00:00:00Z")])
    theirs = dumps([rec("rt-1", "theirs", "2026-03-01T00:00:00Z")])
    labels = Labels("beta 7a921e7c3418", "alpha f91bc3a26865")
    for path, key in ((RUNTIME, "items"), (DOCS, "documents")):
        result = merge_file(path, dumps(json.loads(base)["items"], key),
                            dumps(json.loads(ours)["items"], key),
                            dumps(json.loads(theirs)["items"], key), labels=labels)
        assert result is not None
        conflict = json.loads(result.text)[key][0]["conflict"]
        assert conflict_origins(conflict) == ("beta 7a921e7c3418", "alpha f91bc3a26865")
        assert conflict_labels(result.text) == {"rt-1": ("beta 7a921e7c3418", "alpha f91bc3a26865")}
    plain = merge_file(RUNTIME, base, ours, theirs)  # a merge that names no side stores none
    assert plain is not None
    assert conflict_origins(json.loads(plain.text)["items"][0]["conflict"]) == (None, None)
