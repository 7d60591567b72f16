"""The legacy-layer probes (`check`, `check --fix`, the runtime archive) read a layer file by the
one entry rule: an indented `##`, `###` or `##word` is not an entry; `##` alone or before a tab
is (and outside an entry a fence does not hide one)."""

from __future__ import annotations

import pytest

from gitmem.runtime.archive import _legacy_layer
from gitmem.store.store import Store
from gitmem.verbs.check import legacy_layers
from gitmem.verbs.legacy import migrate_legacy_layer

NOT_ENTRIES = "# Semantic\n\n   ## indented three spaces\n\t## a tab\n##no-space\n### h3\n"


def test_indented_or_other_level_headings_make_no_legacy_layer(store: Store) -> None:
    (store.root / "global/semantic.md").write_text(NOT_ENTRIES)
    assert legacy_layers(store)[0] == []
    assert not _legacy_layer(store, "global", "semantic")
    with store.writing("probe") as txn:
        assert migrate_legacy_layer(store, txn, "global", "semantic") == []
    assert (store.root / "global/semantic.md").read_text() == NOT_ENTRIES


@pytest.mark.parametrize("heading", ["##\tTabbed heading", "##", "## Plain", "```\r\n## fenced"])
def test_every_entry_heading_makes_a_legacy_layer(store: Store, heading: str) -> None:
    (store.root / "global/semantic.md").write_text(f"# Semantic\r\n\r\n{heading}\r\nA fact.\r\n")
    assert legacy_layers(store)[0] == [("global", "semantic")]
    assert _legacy_layer(store, "global", "semantic")
    with store.writing("probe") as txn:
        assert migrate_legacy_layer(store, txn, "global", "semantic") == ["global/semantic/general.md"]
