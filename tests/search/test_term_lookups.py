"""The in-memory term dictionary (segments.TermDictionary) answers prefixes, doc frequencies and
postings exactly as whoosh's own per-term API does, on a real index of several segments with a
deleted document; and a view keeps the stored fields it read, within its bound."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import pytest

from gitmem.search import cache as segment_cache
from gitmem.search import reader, segments
from gitmem.search.index import SearchIndex
from gitmem.search.reader import View
from gitmem.search.segments import TERMS, TermDictionary

WORDS = ("staging", "stage", "stagecoach", "deploy", "deployment", "rollback", "postgres",
         "latency", "検索", "検索語", "café", "zebra", "a", "ab", "abc")


def topic(name: str, count: int, start: int) -> str:
    entries = [f"## {name} {n}\n**Id:** global-sem-{start + n:04d}\n\n"
               f"{' '.join(WORDS[(n + k) % len(WORDS)] for k in range(4))} port {5000 + n} "
               f"{name}-{n}.md\n" for n in range(count)]
    return f"# {name}\n\n" + "\n".join(entries)


@pytest.fixture
def view(tmp_path: Path) -> Iterator[View]:
    root = tmp_path / "store"
    semantic = root / "global/semantic"
    semantic.mkdir(parents=True)
    (semantic / "ports.md").write_text(topic("Ports", 40, 0))
    (semantic / "links.md").write_text(topic("Links", 20, 200))
    index = SearchIndex(root, watch=False)
    assert index.search("staging")
    (semantic / "hosts.md").write_text(topic("Hosts", 30, 100))
    assert index.search("hosts")  # a second segment
    (semantic / "ports.md").write_text(topic("Ports", 39, 0))  # deletions in the first
    assert index.search("ports")
    current = index._current_view()
    assert len(current.leaves()) >= 2
    assert any(leaf.has_deletions() for leaf, _offset in current.leaves())
    yield current
    index.close()


def _terms(leaf: Any) -> list[str]:
    return [raw.decode("utf-8") for raw in leaf.lexicon(TERMS)]


def _postings(matcher: Any) -> list[tuple[int, float]]:
    if matcher is None:
        return []
    return [(doc, weight) for ids, weights in segments.matcher_blocks(matcher)
            for doc, weight in zip(list(ids), weights, strict=True)]


def _prefixes(terms: list[str]) -> set[str]:
    found = {"", "zz", "\u00e9", "検", "aa", "~"}
    for term in terms:
        found.update(term[:size] for size in (1, 2, 3, len(term)))
    return found


@pytest.mark.parametrize("every", [1, 2, 3, 32])
def test_the_dictionary_answers_as_whoosh_does(view: View, every: int,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(segments, "SAMPLE_EVERY", every)
    for leaf, _offset in view.leaves():
        dictionary = TermDictionary(leaf)
        assert dictionary._info is not None  # the fast path
        terms = _terms(leaf)
        assert any(t.startswith("検索") for t in terms) and "café" in terms
        for term in [*terms, "absent", "", "zzzz", "0"]:
            assert dictionary.doc_frequency(leaf, term) == leaf.doc_frequency(TERMS, term), term
            whoosh = segments.raw_postings(leaf, TERMS, term)
            assert _postings(dictionary.postings(leaf, term)) == _postings(whoosh), term
        for prefix in _prefixes(terms):
            for limit in (1, 3, 1000):
                expected = [(raw, leaf.doc_frequency(TERMS, raw.decode("utf-8")))
                            for raw in islice(leaf.expand_prefix(TERMS, prefix), limit)]
                assert dictionary.prefixed(leaf, prefix, limit) == expected, (prefix, limit)


def test_without_the_fast_path_the_public_api_answers_the_same(view: View) -> None:
    for leaf, _offset in view.leaves():
        fast, slow = TermDictionary(leaf), TermDictionary(leaf)
        slow._fast, slow._info = False, None
        for term in [*_terms(leaf), "absent"]:
            assert slow.doc_frequency(leaf, term) == fast.doc_frequency(leaf, term)
            assert _postings(slow.postings(leaf, term)) == _postings(fast.postings(leaf, term))
        for prefix in ("sta", "検", "", "zz"):
            assert slow.prefixed(leaf, prefix, 50) == fast.prefixed(leaf, prefix, 50)


def test_a_view_merges_the_segments_as_the_whole_reader_does(view: View) -> None:
    whole = view.reader
    for prefix in ("sta", "dep", "検", "host", "", "zz"):
        for limit in (2, 200):
            terms = [raw.decode("utf-8") for raw in islice(whole.expand_prefix(TERMS, prefix), limit)]
            found = view.prefixed(prefix, limit)
            assert list(found) == terms, prefix
            assert all(found[t] == whole.doc_frequency(TERMS, t) for t in terms)
    for term in ("staging", "hosts", "ports", "検索", "absent"):
        assert view.doc_frequency(term) == whole.doc_frequency(TERMS, term)


def test_a_view_keeps_the_stored_fields_it_read_within_its_bound(
        view: View, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "STORED_KEPT", 5)
    docs = range(view.reader.doc_count_all())
    for doc in docs:
        assert view.stored(doc) == view.reader.stored_fields(doc)
        assert len(view._stored) <= 5
    assert list(view._stored) == list(docs)[-5:]  # the oldest went first
    assert view.stored(docs[-1]) is view.stored(docs[-1])


def _merged(view: View, term: str) -> list[tuple[int, float]]:
    """A term's postings over every segment, global doc numbers, as the reader's API gives them."""
    found = []
    for leaf, offset in view.leaves():
        found += [(offset + doc, weight) for doc, weight in _postings(segments.raw_postings(leaf, TERMS, term))]
    return found


def test_the_index_keeps_the_postings_it_decoded_within_its_bound(
        view: View, monkeypatch: pytest.MonkeyPatch) -> None:
    """A term's postings are decoded once per segment (someone typing asks for the same
    expansions again and again), the same as read afresh, and at most POSTINGS_KEPT are kept."""
    monkeypatch.setattr(segment_cache, "POSTINGS_KEPT", 40)
    cache = view.cache
    terms = [raw.decode("utf-8") for raw in view.reader.lexicon(TERMS)]
    for term in [*terms, "absent", *terms]:
        got = [(doc, weight) for ids, weights in view.postings(TERMS, term)
               for doc, weight in zip(list(ids), weights, strict=True)]
        assert got == _merged(view, term), term
        assert cache._postings_size <= 40 or len(cache._postings) == 1
        assert cache._postings_size == sum(len(ids) for ids, _w in cache._postings.values())
    (name, kept), (ids, _weights) = next(iter(cache._postings.items()))
    leaf = next(leaf for leaf, _offset in view.leaves() if segments.segment_name(leaf) == name)
    assert cache.postings(leaf, kept)[0] is ids  # read from memory the second time


def test_readers_on_many_threads_share_a_dictionary_and_each_reads_its_own_file(tmp_path: Path) -> None:
    """Eight readers of one index (a warm server's calls) share each segment's dictionary; their
    postings, read at the same time, are each what one reader alone reads."""
    import threading

    root = tmp_path / "store"
    semantic = root / "global/semantic"
    semantic.mkdir(parents=True)
    (semantic / "ports.md").write_text(topic("Ports", 300, 0))
    first = SearchIndex(root, watch=False)
    assert first.search("staging")
    indexes = [first, *(SearchIndex(root, watch=False) for _ in range(7))]
    assert all(index.search("staging") for index in indexes)
    views = [index._current_view() for index in indexes]
    expected = {word: [list(map(list, block)) for block in views[0].postings(TERMS, word)] for word in WORDS}
    wrong: list[str] = []
    start = threading.Barrier(len(views))

    def read(view: View) -> None:
        start.wait()
        for _round in range(40):
            for word in WORDS:
                try:
                    got = [list(map(list, block)) for block in view.postings(TERMS, word)]
                except Exception as exc:  # noqa: BLE001 - a garbled read: counted below
                    wrong.append(f"{word}: {type(exc).__name__}")
                    continue
                if got != expected[word]:
                    wrong.append(word)

    threads = [threading.Thread(target=read, args=(view,)) for view in views]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    for index in indexes:
        index.close()
    assert wrong == []


def test_a_long_lived_process_decodes_the_biggest_posting_lists_ahead(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With decode_ahead on (the warm server, the page), the first search sets a thread decoding
    each segment's biggest posting lists, within AHEAD_SHARE of the bound; off (a CLI process), a
    search decodes only what it asks for. Answers are the same either way."""
    root = tmp_path / "store"
    semantic = root / "global/semantic"
    semantic.mkdir(parents=True)
    (semantic / "ports.md").write_text(topic("Ports", 60, 0))
    (semantic / "hosts.md").write_text(topic("Hosts", 30, 100))
    monkeypatch.setattr(segment_cache, "POSTINGS_KEPT", 400)
    monkeypatch.setattr(segment_cache, "AHEAD_MIN_DOCS", 50)  # the first topic's segment (60) only
    answers = []
    for on in (False, True):
        monkeypatch.setattr(segment_cache, "_ahead", False)
        segment_cache._shared.clear()
        index = SearchIndex(root, watch=False)
        segment_cache.decode_ahead(on)
        try:
            answers.append([(hit.path, hit.line) for hit in index.search("zebra")])
            cache = index._current_view().cache
            for thread in [t for t in threading.enumerate() if t.name == "gitmem-decode-ahead"]:
                thread.join(30)
            terms = {term for _name, term in cache._postings}
            if not on:
                assert terms == {"zebra"} and not cache._ahead
                continue
            view = index._current_view()
            assert cache._ahead == {segments.segment_name(leaf) for leaf, _offset in view.leaves()}
            assert {"port", "md", "zebra"} <= terms  # "port" and "md" are in every entry
            ahead = sum(len(ids) for (_name, term), (ids, _w) in cache._postings.items() if term != "zebra")
            assert 0 < ahead <= 400 * segment_cache.AHEAD_SHARE
            before = {segments.segment_name(leaf) for leaf, _offset in view.leaves()}
            (semantic / "racks.md").write_text(topic("Racks", 3, 300))  # a write: a small segment
            assert index.search("racks")
            small = {segments.segment_name(leaf) for leaf, _offset in index._current_view().leaves()} - before
            assert small and small <= cache._ahead  # taken as done: no thread, nothing decoded ahead
            assert not any(t.name == "gitmem-decode-ahead" for t in threading.enumerate())
            assert not {"port", "md"} & {term for name, term in cache._postings if name in small}
        finally:
            segment_cache.decode_ahead(False)
            index.close()
    assert answers[0] == answers[1] and answers[0]
