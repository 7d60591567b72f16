"""Stores a careful user can end up with: an Id written by hand in another shape, a folder where a
layer index belongs, a memory.json edited wrongly, a brand-new or empty search index."""

from __future__ import annotations

import json

import pytest

from gitmem.capture import relevance
from gitmem.secrets import mask
from gitmem.store.store import Store
from gitmem.verbs.entries import remember
from support import Cli, git


def test_show_finds_an_entry_whose_id_was_written_in_another_shape(store: Store, gm: Cli) -> None:
    remember(store, "A fact", "semantic", topic="notes")
    path = store.root / "global" / "semantic" / "notes.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n## Odd one\nBody.\n\n**Id:** global-sem-x12\n",
                    encoding="utf-8")
    git(store.root, "commit", "-qam", "by hand")
    shown = gm("show", "global-sem-x12")
    assert shown.exit_code == 0 and "Odd one" in shown.output
    assert gm("show", "no-such-thing").exit_code == 2  # still named malformed when nothing has it
    assert gm("show", "bad id!").exit_code == 2


def test_a_folder_named_like_a_layer_index_stops_no_verb(store: Store, gm: Cli) -> None:
    folder = store.root / "global" / "procedural.md"
    folder.mkdir()
    (folder / "note.txt").write_text("someone's folder\n", encoding="utf-8")
    written = gm("remember", "Run the tests first", "--layer", "procedural", "--topic", "steps")
    assert written.exit_code == 0, written.output
    assert "global/procedural.md is a folder: the layer index was not written" in written.output
    assert (folder / "note.txt").is_file()
    for verb in (("status",), ("list",), ("search", "tests"), ("context",), ("system",),
                 ("show", "global-pro-0001"), ("reindex",)):
        result = gm(*verb)
        assert result.exit_code in (0, 1), (verb, result.output)
        assert "internal error" not in result.output
    assert "global/procedural.md:1: a folder where the layer index belongs" in gm("status").output
    assert gm("check").exit_code == 2


@pytest.mark.parametrize(("freshness", "named"), [
    ({"stable": "a year"}, "'settings.freshness.stable'"),
    ({"normal": 0}, "'settings.freshness.normal'"),
    ({"volatile": 2.5}, "'settings.freshness.volatile'"),
    (30, "'settings.freshness' must be an object"),
])
def test_a_bad_freshness_setting_is_named_and_never_committed(store: Store, gm: Cli, freshness: object,
                                                              named: str) -> None:
    """memory.json with a bad setting: gitmem reads the last good one, says so naming the key,
    and leaves the edit uncommitted as it is (store/lastgood.py)."""
    path = store.root / "memory.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["settings"]["freshness"] = freshness
    path.write_text(json.dumps(data), encoding="utf-8")
    edited = path.read_text(encoding="utf-8")
    result = gm("remember", "A fact", "--layer", "semantic")
    assert result.exit_code == 0 and named in result.output and "Traceback" not in result.output
    assert "gitmem reads the version committed in" in result.output
    assert named in gm("status").output and gm("check").exit_code == 2
    assert path.read_text(encoding="utf-8") == edited
    assert git(store.root, "status", "--porcelain", "--", "memory.json").strip() == "M memory.json"


def test_search_on_a_new_or_empty_index_says_no_matches(gm: Cli) -> None:
    for _ in range(2):  # no index yet, then an index holding nothing
        result = gm("search", "anything")
        assert result.exit_code == 1 and result.output.strip() == "no matches"
        assert gm("reindex").exit_code == 0
    assert gm("search", "deploy", "--layer", "documents").exit_code == 1


def test_capture_hides_secrets_with_the_shapes_every_read_uses() -> None:
    assert relevance.hide_secrets is mask.hide_secrets
