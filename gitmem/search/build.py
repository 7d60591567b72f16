"""A full rebuild of the search index into a fresh folder: in this process, or with whoosh's
worker processes (each writes a segment of its own) for a larger store."""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from gitmem.search.files import FileRecord, read_file
from gitmem.search.schema import (
    SCHEMA,
    abandon,
    doc_fields,
    open_index,
    rebuild_writer,
    windex,
)

FOLDER_PREFIX = "whoosh-"

_forks = threading.local()  # set on the thread running a rebuild while its workers start


@contextlib.contextmanager
def _workers_die_with_us() -> Iterator[None]:
    """Worker processes forked by this thread meanwhile (whoosh's rebuild workers) exit once
    this process is gone: killed mid-rebuild, it would leave them waiting for work forever."""
    _forks.rebuild = True
    try:
        yield
    finally:
        _forks.rebuild = False


def _watch_parent() -> None:
    """In a forked rebuild worker: exit when the process that forked it is gone (reparented)."""
    if not getattr(_forks, "rebuild", False):
        return
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="gitmem-parent-watch", daemon=True).start()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_watch_parent)


@dataclass
class Built:
    """A complete index folder, not yet named by the manifest."""

    folder: str
    generation: int
    files: dict[str, FileRecord]
    count: int


def build_folder(root: Path, index_dir: Path, paths: list[str],
                 progress: Callable[[int, int], None] | None, procs: int) -> Built:
    """Index `paths` of the store at `root` into a new folder of `index_dir`; a failure leaves
    no folder and no worker process behind."""
    folder = f"{FOLDER_PREFIX}{time.time_ns():x}-{os.getpid()}-{procs}"
    target = index_dir / folder
    target.mkdir(parents=True)
    ix = windex.create_in(str(target), SCHEMA)
    writer, segment = rebuild_writer(ix, procs)
    files: dict[str, FileRecord] = {}
    count = 0
    try:
        with _workers_die_with_us():
            for done, relpath in enumerate(paths, 1):
                content = read_file(root, relpath)
                if content is not None:
                    for doc in content.docs:
                        writer.add_document(**doc_fields(doc))
                    count += len(content.docs)
                    content.record.segment = segment
                    files[relpath] = content.record
                if progress is not None:
                    progress(done, len(paths))
            writer.commit(merge=False)
        if open_index(target).doc_count_all() != count:  # a worker's segment went missing
            raise RuntimeError("the rebuilt index is incomplete")
    except BaseException:
        abandon(writer)
        shutil.rmtree(target, ignore_errors=True)
        raise
    return Built(folder, ix.latest_generation(), files, count)
