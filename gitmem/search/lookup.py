"""Doc numbers and stored fields of a file's entries, for an index writer carrying unchanged
files over from the segments it starts from (index.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from gitmem.search.files import FileRecord
from gitmem.search.reader import View
from gitmem.search.segments import matcher_blocks, segment_name


class DocLookup:
    """Doc numbers and stored fields of a file's entries in the segments a writer starts from."""

    # The manifest says which segment holds a file, so only that segment is opened (for files
    # written by a full rebuild: the rebuild's segments). A file the manifest does not know is in
    # no segment when the manifest was saved for the index's latest generation (`in_step`); after
    # a crash between the index's commit and the manifest's save it may be in any of them.

    def __init__(self, writer: Any, files: dict[str, FileRecord], view: View | None,
                 open_segment: Callable[[Any], Any], *, in_step: bool = False) -> None:
        self._open_segment = open_segment
        self._files = files
        self._in_step = in_step
        self._segments: list[tuple[Any, int]] = []
        offset = 0
        for segment in writer.segments:
            self._segments.append((segment, offset))
            offset += segment.doc_count_all()
        ids = [segment.segment_id() for segment, _ in self._segments]
        self._view = view if view is not None and [
            segment_name(leaf) for leaf, _ in view.leaves()] == ids else None
        self._referenced = {record.segment for record in files.values()}
        self._readers: dict[str, Any] = {}

    def _reader(self, segment: Any) -> Any:
        name = segment.segment_id()
        if name not in self._readers:
            self._readers[name] = self._open_segment(segment)
        return self._readers[name]

    def _holders(self, relpath: str) -> list[tuple[Any, int]]:
        record = self._files.get(relpath)
        if record is None:
            return [] if self._in_step else self._segments
        if record.segment:
            return [(s, o) for s, o in self._segments if s.segment_id() == record.segment]
        return [(s, o) for s, o in self._segments if s.segment_id() not in self._referenced]

    def docnums(self, relpath: str) -> list[int]:
        if self._view is not None:
            return sorted(self._view.docset("path", relpath))
        out: list[int] = []
        for segment, offset in self._holders(relpath):
            reader = self._reader(segment)
            if ("path", relpath) in reader:
                for ids, _weights in matcher_blocks(reader.postings("path", relpath)):
                    out.extend(offset + doc for doc in ids)
        return out

    def stored_fields(self, docnum: int) -> dict[str, Any]:
        if self._view is not None:
            return dict(self._view.reader.stored_fields(docnum))
        for segment, offset in reversed(self._segments):
            if docnum >= offset:
                return dict(self._reader(segment).stored_fields(docnum - offset))
        raise KeyError(docnum)

    def close(self) -> None:
        for reader in self._readers.values():
            with contextlib.suppress(Exception):
                reader.close()
