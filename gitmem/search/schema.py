"""The index's whoosh schema and codec, and how an entry document is written into it."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from whoosh.fields import COLUMN, STORED, FieldType, Schema

from gitmem.search.context import file_code
from gitmem.search.dates import date_terms, entry_days
from gitmem.search.rank import EntryFacts, term_weights
from gitmem.search.segments import TERMS

# These whoosh modules carry no type information; use them as Any.
columns: Any = importlib.import_module("whoosh.columns")
formats: Any = importlib.import_module("whoosh.formats")
windex: Any = importlib.import_module("whoosh.index")
filestore: Any = importlib.import_module("whoosh.filedb.filestore")
W3Codec: Any = importlib.import_module("whoosh.codec.whoosh3").W3Codec

USE_MMAP = False


class IndexCodec(W3Codec):
    """whoosh's W3 format tuned for reading whole posting lists (see the decision record)."""

    # Big uncompressed blocks read and write faster when lists are never skipped; per-block
    # length statistics only serve whoosh's own scorer.

    length_stats = False

    def __init__(self) -> None:
        super().__init__(blocklimit=1024, compression=0)


class WeightedTerms(FieldType):
    """Postings-only field: each term of an entry once, weighted by `term_weights`."""

    def __init__(self) -> None:
        super().__init__(formats.Existence(), analyzer=None)

    def index(self, value: tuple[str, str, str, str, tuple[str, ...]],
              **kwargs: Any) -> Iterator[tuple[bytes, int, float, bytes]]:
        """(term bytes, frequency, weight, value) per term."""
        for term, weight in term_weights(*value).items():
            yield term.encode("utf-8"), 1, weight, b""


class Key(FieldType):
    """One exact, stored value per document (path, scope, layer, status) used for filtering."""

    def __init__(self) -> None:
        super().__init__(formats.Existence(), analyzer=None, stored=True)

    def index(self, value: str, **kwargs: Any) -> Iterator[tuple[bytes, int, float, bytes]]:
        """The value itself as the only term."""
        yield value.encode("utf-8"), 1, 1.0, b""


def build_schema() -> Schema:
    """Postings: weighted terms and filter keys; everything else is stored for display."""
    return Schema(
        terms=WeightedTerms(), path=Key(), scope=Key(), layer=Key(), status=Key(),
        id=STORED(), line=STORED(), title=STORED(), body=STORED(), topic=STORED(),
        importance=STORED(), volatility=STORED(), verified=STORED(), created=STORED(),
        valid_until=STORED(), source=STORED(), conflicted=STORED(),
        facts=COLUMN(columns.NumericColumn("Q")),
    )


SCHEMA = build_schema()


def doc_fields(doc: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments for `add_document`."""
    out = {k: v for k, v in doc.items() if k not in ("full_body", "status", "id")}
    topic_text = doc["topic"].replace("-", " ").replace("_", " ")
    days = entry_days(doc["created"], doc["topic"], (doc["title"], doc["full_body"]))
    out[TERMS] = (doc["title"], doc["full_body"], topic_text, doc["id"], tuple(date_terms(days)))
    facts = EntryFacts.from_fields(doc["importance"], doc["volatility"], doc["verified"],
                                   doc["created"], doc["valid_until"])
    out["facts"] = facts.pack() | file_code(doc["path"])
    if doc["id"]:
        out["id"] = doc["id"]
    if doc["status"] != "live":  # only hidden statuses are indexed: each value costs a posting
        out["status"] = doc["status"]
    return out


def rebuild_writer(ix: Any, procs: int) -> tuple[Any, str]:
    """A writer for a full rebuild and the segment its files land in ("" when spread out)."""
    # With procs > 1, whoosh's multiprocess writer: this process parses the files while worker
    # processes analyse the entries and each write a segment of their own.
    if procs > 1:
        writer = ix.writer(procs=procs, multisegment=True, limitmb=512, codec=IndexCodec())
        return writer, ""
    writer = ix.writer(limitmb=128, codec=IndexCodec())
    return writer, writer.get_segment().segment_id()


def abandon(writer: Any) -> None:
    """Cancel a writer, stopping any worker processes it started."""
    for task in getattr(writer, "tasks", []):
        with contextlib.suppress(Exception):
            task.terminate()
            task.join(5)
    with contextlib.suppress(Exception):
        writer.cancel()


def drop_dead_segments(writer: Any, segments: list[Any]) -> list[Any]:
    """Merge policy: keep every segment that still has a live document; merge nothing."""
    return [s for s in segments if s.deleted_count() < s.doc_count_all()]


def open_index(folder: Path) -> Any:
    """Open the whoosh index in `folder` with this schema."""
    # Ordinary file handles, not mmap: whoosh copies a memory-mapped file into memory whole when
    # a segment reader opens it, which costs more than the few reads a search or update makes.
    return filestore.FileStorage(str(folder), supports_mmap=USE_MMAP).open_index(schema=SCHEMA)


def index_present(folder: Path) -> bool:
    """True when `folder` holds a readable whoosh index of this schema."""
    if not folder.is_dir():
        return False
    try:
        return bool(open_index(folder).latest_generation() >= 0)
    except Exception:  # noqa: BLE001 - any damage means "not usable": it will be rebuilt
        return False
