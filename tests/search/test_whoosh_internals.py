"""search/segments.py is the one module that reads whoosh's private codec objects (for speed; each
fast path falls back to the public API when the classes differ). This test fails loudly on a
whoosh-ng release that renames or reshapes any of them, so that the fast paths never turn into
a crash, or silently into the slow path: every class name, attribute and signature relied on is
checked on a real index, and the fast paths are checked to be the ones taken."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from gitmem.search import segments
from gitmem.search.index import SearchIndex

TOPIC = "# Ports\n\n" + "".join(
    f"## Port {n}\n**Id:** global-sem-{n:04d}\n\nstaging listens on port {5000 + n}.\n\n"
    for n in range(1, 30))


@pytest.fixture
def leaf(tmp_path: Path) -> Iterator[Any]:
    root = tmp_path / "store"
    (root / "global/semantic").mkdir(parents=True)
    (root / "global/semantic/ports.md").write_text(TOPIC)
    index = SearchIndex(root, watch=False)
    assert index.search("staging")
    (root / "global/semantic/hosts.md").write_text(
        "# Hosts\n\n## Staging host\n**Id:** global-sem-0100\n\nstaging runs on 10.0.0.9.\n")
    assert index.search("10.0.0.9")  # a second segment
    view = index._current_view()
    leaves = view.leaves()
    assert len(leaves) == 2
    [ports] = [leaf for leaf, _offset in leaves if leaf.doc_count_all() == 29]
    yield ports
    index.close()


def test_whoosh_ng_is_a_release_this_module_was_written_for() -> None:
    major = int(version("whoosh-ng").split(".")[0])
    assert major == 5, "search/segments.py reads whoosh-ng 5 internals: check them, then the pin"


def _common_term(leaf: Any) -> str:
    """A term every entry of the segment holds ("listens", as the analyser keeps it)."""
    terms = [raw.decode() for raw in leaf.lexicon(segments.TERMS)]
    return next(t for t in terms if t.startswith("listen"))


def test_the_posting_fast_path_finds_what_it_reads(leaf: Any) -> None:
    term = _common_term(leaf)
    matcher = segments.raw_postings(leaf, segments.TERMS, term)
    assert type(matcher).__name__ == "W3LeafMatcher"
    assert hasattr(matcher, "_byteids") and not matcher._byteids  # numeric ids: the fast path
    for name in ("_read_data", "_read_weights", "_next_block", "is_active"):
        assert callable(getattr(matcher, name)), name
    assert hasattr(matcher, "_data") and hasattr(matcher, "_weights")
    terms = leaf._terms
    assert list(inspect.signature(terms.matcher).parameters)[:3] == ["fieldname", "tbytes", "format_"]
    wrapped = leaf.postings(segments.TERMS, term)
    assert type(wrapped).__name__ in ("FilterMatcher", "W3LeafMatcher")
    if type(wrapped).__name__ == "FilterMatcher":
        assert hasattr(wrapped, "child")
    blocks = list(segments.matcher_blocks(matcher))
    assert sum(len(list(ids)) for ids, _weights in blocks) == 29


def test_the_column_and_deletion_fast_paths_find_what_they_read(leaf: Any) -> None:
    reader = leaf.column_reader("facts", translate=False)
    assert type(reader).__qualname__ == "NumericColumn.Reader"
    for name in ("_dbfile", "_basepos", "_count"):
        assert hasattr(reader, name), name
    assert callable(reader._dbfile.get)
    assert len(segments.column_values(leaf, "facts")) == leaf.doc_count_all()
    assert isinstance(leaf.deleted_docs_set, frozenset | set)
    assert list(segments.deleted_docs(leaf)) == []


def test_the_term_dictionary_fast_path_finds_what_it_reads(leaf: Any) -> None:
    terms = leaf._terms
    table = terms._tindex
    assert type(terms).__name__ == "W3TermsReader" and type(table).__name__ == "OrderedHashReader"
    assert segments.TERMS in terms._fieldmap
    for name in ("dbfile", "startofdata", "endofdata", "indexbase", "indexlen", "extras"):
        assert hasattr(table, name), name
    assert "indextype" in table.extras and callable(table.dbfile.get_array)
    dictionary = segments.TermDictionary(leaf)
    assert dictionary._fast
    found = dictionary.containing(leaf, "iste", 10)
    assert found and found == segments.TermDictionary._walk(leaf, "iste", 10)


def test_every_leaf_names_its_segment(leaf: Any) -> None:
    assert segments.segment_name(leaf)
