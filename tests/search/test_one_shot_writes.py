"""A write from a one-shot process leaves the search index to the next search; a process that
has the index open (the MCP server after a search, the warm server) keeps it current itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gitmem.search.index import SearchIndex
from gitmem.store.store import Store
from support import run_gitmem

# The CLI's own entry point, run in a fresh interpreter that then says what it had loaded.
PROBE = ("import sys, runpy\n"
         "sys.argv = ['gitmem', *sys.argv[1:]]\n"
         "try:\n"
         "    runpy.run_module('gitmem', run_name='__main__')\n"
         "finally:\n"
         "    print('whoosh loaded' if 'whoosh' in sys.modules else 'whoosh not loaded', file=sys.stderr)\n")


def test_a_one_shot_write_does_not_open_the_index_and_the_next_search_finds_it(store: Store) -> None:
    root = str(store.root)
    assert run_gitmem("--root", root, "remember", "Deploys run at noon", "--layer", "semantic").returncode == 0
    assert run_gitmem("--root", root, "search", "noon").returncode == 0  # builds the index
    written = subprocess.run([sys.executable, "-c", PROBE, "--root", root, "remember",
                              "The staging database listens on port 5433", "--layer", "semantic"],
                             capture_output=True, text=True)
    assert written.returncode == 0, written.stderr
    assert "whoosh not loaded" in written.stderr
    relpath = "global/semantic/general.md"
    assert SearchIndex(store.root, watch=False).refresh() == [relpath]  # left for the next search
    found = run_gitmem("--root", root, "search", "5433", "--json")
    assert found.returncode == 0, found.stderr
    assert [hit["title"] for hit in json.loads(found.stdout)] == ["The staging database listens on port 5433"]


def test_a_store_with_its_index_open_keeps_it_current_after_each_write(store: Store) -> None:
    from gitmem.verbs.entries import remember
    from gitmem.verbs.search import search

    remember(store, "Deploys run at noon", layer="semantic")
    assert search(store, "noon")  # opens the index in this process
    remember(store, "The staging database listens on port 5433", layer="semantic")
    assert SearchIndex(store.root, watch=False).refresh() == []  # indexed by the write itself


def test_a_process_that_never_searched_writes_without_opening_the_index(store_root: Path) -> None:
    from gitmem.verbs.entries import remember

    store = Store(store_root, cwd=store_root.parent)
    store.init()
    SearchIndex(store.root, watch=False).rebuild()
    remember(store, "Deploys run at noon", layer="semantic")
    assert store._search_index is None
    assert SearchIndex(store.root, watch=False).refresh() == ["global/semantic/general.md"]
    store.close()
