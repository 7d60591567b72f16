"""Reading one index segment straight from whoosh's codec objects: posting blocks, a numeric
column, deletions and the term dictionary (what is kept per segment: cache.py).

Works on the reader objects `index.py` opens without importing whoosh. The fast paths read
whole blocks, columns and dictionary files at once through codec internals; each falls back to
whoosh's public per-item API when the objects are not the expected classes (tests compare both).
This is the only module that touches whoosh's private objects; tests/search/test_whoosh_internals.py
checks every class, attribute and signature it relies on, and pyproject.toml pins whoosh-ng < 6.
"""

from __future__ import annotations

import struct
import sys
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, islice
from typing import Any

TERMS = "terms"
_RECORD = struct.Struct("!ii")  # key length, value length of one term-dictionary record
_FIELD = struct.Struct("!H")  # a dictionary key starts with its field number
_DOC_FREQUENCY = struct.Struct("!I")  # a term info's doc frequency, after a flags byte and weight
_INFO_DOCS = 5  # where in a term info its doc frequency is
SAMPLE_EVERY = 32  # dictionary keys kept in memory for bisection: one in this many


def segment_name(leaf: Any) -> str | None:
    """The id of the segment a leaf reader reads; None for a reader of no segment (an index
    left without documents opens as whoosh's EmptyReader)."""
    segment = leaf.segment()
    return None if segment is None else str(segment.segment_id())


def matcher_blocks(matcher: Any) -> Iterator[tuple[Iterable[int], Sequence[float]]]:
    """(doc ids, weights) of a posting list, a whole block at a time when the codec allows."""
    if type(matcher).__name__ == "FilterMatcher":
        matcher = matcher.child  # deleted documents are dropped later, when ranking
    if type(matcher).__name__ == "W3LeafMatcher" and not getattr(matcher, "_byteids", True):
        # whoosh stores postings in pickled blocks of delta-coded ids; decoding a whole block
        # at once avoids several Python calls per posting (a test checks this path against the
        # generic one below).
        while matcher.is_active():
            if matcher._data is None:
                matcher._read_data()
            matcher._read_weights()
            yield accumulate(matcher._data[0]), matcher._weights
            matcher._next_block()
        return
    ids: list[int] = []
    weights: list[float] = []
    while matcher.is_active():
        ids.append(matcher.id())
        weights.append(matcher.weight())
        matcher.next()
    yield ids, weights


def raw_postings(leaf: Any, fieldname: str, term: str) -> Any:
    """A segment's posting matcher for a term, deletions not applied; None when absent."""
    if (fieldname, term) not in leaf:
        return None
    terms = getattr(leaf, "_terms", None)
    if terms is not None and hasattr(terms, "matcher"):
        # Straight from the codec: whoosh's postings() wraps the matcher to skip deleted docs,
        # which decodes the first block once more; deleted docs are dropped when ranking.
        return terms.matcher(fieldname, term.encode("utf-8"), leaf.schema[fieldname].format)
    return leaf.postings(fieldname, term)


def column_values(leaf: Any, name: str) -> array[int]:
    """All values of a numeric column of one segment, read at once when the codec allows."""
    reader = leaf.column_reader(name, translate=False)
    count = leaf.doc_count_all()
    dbfile = getattr(reader, "_dbfile", None)
    if type(reader).__qualname__ == "NumericColumn.Reader" and dbfile is not None:
        values = array("Q")
        values.frombytes(dbfile.get(reader._basepos, reader._count * 8))
        if sys.byteorder == "little":
            values.byteswap()  # whoosh writes columns big-endian
        values.extend([0] * (count - len(values)))  # trailing default values are not written
        return values
    return array("Q", (reader[doc] for doc in range(count)))


def deleted_docs(leaf: Any) -> Iterable[int]:
    """Deleted doc numbers of one segment."""
    known = getattr(leaf, "deleted_docs_set", None)
    if isinstance(known, frozenset | set):
        return known
    return [doc for doc in range(leaf.doc_count_all()) if leaf.is_deleted(doc)]


class TermDictionary:
    """The `terms` field's terms of one segment: those that contain a fragment, those that start
    with a prefix, and how many entries hold a term.

    The fast path holds the segment's dictionary file region in memory (keys and term infos,
    ~60 bytes per term) with the offset of every record in key order. A fragment is searched
    with `bytes.find` (C), each hit mapped to its record by bisection: no Python work per term,
    only per hit; a prefix or a whole term is found by bisecting the sorted keys, with no file
    read (whoosh's own lookups read the file a few times per term). Without the expected codec
    classes it uses whoosh's public per-item API (`lexicon`, `expand_prefix`, `doc_frequency`).
    """

    def __init__(self, leaf: Any) -> None:
        self._data = b""
        self._starts: Sequence[int] = ()  # file offset of every record, ascending
        self._base = 0  # file offset of the first record (= offset 0 of `_data`)
        self._field = b""
        self._fast = False
        self._samples: list[bytes] | None = None  # every SAMPLE_EVERY-th key, for bisection
        self._info: Any = None  # the codec's term info class
        terms = getattr(leaf, "_terms", None)
        table = getattr(terms, "_tindex", None)
        if type(terms).__name__ == "W3TermsReader" and type(table).__name__ == "OrderedHashReader":
            self._load(terms, table)
            info = getattr(sys.modules.get(type(terms).__module__), "W3TermInfo", None)
            if hasattr(info, "from_bytes") and hasattr(terms, "_codec") and hasattr(terms, "_postfile"):
                self._info = info  # no reader's file is kept: the dictionary is shared

    def _load(self, terms: Any, table: Any) -> None:
        fieldmap = getattr(terms, "_fieldmap", {})
        self._fast = True
        if TERMS not in fieldmap:
            return  # no term of that field in this segment: nothing to find
        dbfile = table.dbfile
        start, end = table.startofdata, table.endofdata
        self._data = dbfile.get(start, end - start)
        self._starts = dbfile.get_array(table.indexbase, table.extras["indextype"], table.indexlen)
        self._base = start
        self._field = _FIELD.pack(fieldmap[TERMS])

    def containing(self, leaf: Any, fragment: str, limit: int) -> list[str]:
        """Up to `limit` terms of `leaf` (this dictionary's segment) containing `fragment`."""
        if not self._fast:
            return self._walk(leaf, fragment, limit)
        needle = fragment.encode("utf-8")
        data, starts, base, field = self._data, self._starts, self._base, self._field
        found: list[str] = []
        hit = data.find(needle)
        while hit >= 0 and len(found) < limit:
            record = starts[bisect_right(starts, hit + base) - 1] - base
            key_length, value_length = _RECORD.unpack_from(data, record)
            key = record + _RECORD.size
            if key + _FIELD.size <= hit and hit + len(needle) <= key + key_length \
                    and data.startswith(field, key):
                found.append(data[key + _FIELD.size:key + key_length].decode("utf-8"))
                hit = data.find(needle, key + key_length + value_length)  # next record
            else:
                hit = data.find(needle, hit + 1)  # inside a length or a term info: not a term
        return found

    def biggest(self, leaf: Any, postings: int) -> list[str]:
        """The terms with the most postings, most first, up to `postings` postings in all
        (none without the in-memory dictionary: whoosh's own walk costs seconds)."""
        if not self._fast:
            return []
        chosen: list[str] = []
        for raw, frequency in sorted(self.prefixed(leaf, "", len(self._starts)),
                                     key=lambda pair: pair[1], reverse=True):
            postings -= frequency
            if postings < 0:
                break
            chosen.append(raw.decode("utf-8"))
        return chosen

    def prefixed(self, leaf: Any, prefix: str, limit: int) -> list[tuple[bytes, int]]:
        """Up to `limit` terms of `leaf` starting with `prefix` (UTF-8, in dictionary order) with
        their doc frequencies: the records are sorted by key, so a bisection finds the first
        and the rest follow it."""
        if not self._fast:
            return [(raw, int(leaf.doc_frequency(TERMS, raw.decode("utf-8"))))
                    for raw in islice(leaf.expand_prefix(TERMS, prefix), limit)]
        wanted = self._field + prefix.encode("utf-8")
        data, starts, base, unpack = self._data, self._starts, self._base, _RECORD.unpack_from
        found: list[tuple[bytes, int]] = []
        first = self._first_at_least(wanted)
        for index in range(first, min(first + limit, len(starts))):
            record = starts[index] - base
            key_length = unpack(data, record)[0]
            key = record + _RECORD.size
            if not data.startswith(wanted, key) or key_length < len(wanted):
                break
            found.append((data[key + _FIELD.size:key + key_length],
                          _DOC_FREQUENCY.unpack_from(data, key + key_length + _INFO_DOCS)[0]))
        return found

    def doc_frequency(self, leaf: Any, term: str) -> int:
        """Entries of `leaf` holding `term` (deleted ones included, as whoosh counts them)."""
        if not self._fast:
            return int(leaf.doc_frequency(TERMS, term))
        key = self._field + term.encode("utf-8")
        index = self._first_at_least(key)
        if index == len(self._starts) or self._key(index) != key:
            return 0
        record = self._starts[index] - self._base
        key_length = _RECORD.unpack_from(self._data, record)[0]
        return int(_DOC_FREQUENCY.unpack_from(self._data, record + _RECORD.size + key_length
                                              + _INFO_DOCS)[0])

    def postings(self, leaf: Any, term: str) -> Any:
        """The posting matcher of `term` in `leaf` (deletions not applied); None when absent. The
        fast path takes the term info from memory and opens the postings as whoosh's
        `W3TermsReader.matcher` does (whoosh looks the term up in the file twice first)."""
        if self._info is None:
            return raw_postings(leaf, TERMS, term)
        tbytes = term.encode("utf-8")
        key = self._field + tbytes
        index = self._first_at_least(key)
        if index == len(self._starts) or self._key(index) != key:
            return None
        record = self._starts[index] - self._base
        key_length, value_length = _RECORD.unpack_from(self._data, record)
        value = record + _RECORD.size + key_length
        info = self._info.from_bytes(self._data[value:value + value_length])
        # The asking leaf's own postings file: this dictionary is shared by the readers of every
        # thread (SegmentCache), and one file handle read from two threads at once returns garbage.
        terms = getattr(leaf, "_terms", None)
        if terms is None or not hasattr(terms, "_postfile"):
            return raw_postings(leaf, TERMS, term)
        return terms._codec.postings_reader(terms._postfile, info, leaf.schema[TERMS].format,
                                            term=(TERMS, tbytes))

    def _key(self, index: int) -> bytes:
        """The key (field number, then term) of the record at `index` in key order."""
        record = self._starts[index] - self._base
        key_length = _RECORD.unpack_from(self._data, record)[0]
        return self._data[record + _RECORD.size:record + _RECORD.size + key_length]

    def _first_at_least(self, key: bytes) -> int:
        """Index of the first record whose key is not less than `key`: a bisection of every
        SAMPLE_EVERY-th key (in C), then of the few records between two of them."""
        count = len(self._starts)
        if not self._field:
            return count
        if self._samples is None:  # once per segment: reading every key would cost ~2 us each
            self._samples = [self._key(index) for index in range(0, count, SAMPLE_EVERY)]
        above = bisect_left(self._samples, key)
        low = (above - 1) * SAMPLE_EVERY + 1 if above else 0
        return bisect_left(range(count), key, low, min(above * SAMPLE_EVERY, count), key=self._key)

    @staticmethod
    def _walk(leaf: Any, fragment: str, limit: int) -> list[str]:
        needle = fragment.encode("utf-8")
        found: list[str] = []
        for raw in leaf.lexicon(TERMS):
            if needle in raw:
                found.append(raw.decode("utf-8"))
                if len(found) >= limit:
                    break
        return found
