"""`SearchIndex.refresh()` alone notices every edit, whatever the file's timestamps say: a
same-size rewrite with the old modification time put back, in place or by replacing the file.
The files are settled first (modified an hour before indexing), so the stamp alone, not the
"modified too recently to trust" rule, has to tell."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from gitmem.search.index import SearchIndex
from gitmem.stamps import SETTLE_NS, file_stamp, settled

TOPIC = "global/semantic/ports.md"
TEXT = "# Ports\n\n## Staging port\n**Id:** global-sem-0001\n\nStaging listens on 5433.\n"
HOUR_NS = 3600 * 1_000_000_000


def _settled_store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    path = root / TOPIC
    path.parent.mkdir(parents=True)
    path.write_text(TEXT)
    old = time.time_ns() - HOUR_NS
    os.utime(path, ns=(old, old))
    return root


def _in_place(path: Path) -> None:
    with open(path, "r+", encoding="utf-8") as handle:
        handle.write(TEXT.replace("5433", "7777"))


def _replaced(path: Path) -> None:
    fresh = path.with_name("ports.md.tmp")
    fresh.write_text(TEXT.replace("5433", "7777"))
    os.replace(fresh, path)


@pytest.mark.parametrize("watch", [False, True], ids=["scan", "watch"])
@pytest.mark.parametrize("edit", [_in_place, _replaced], ids=["in-place", "replaced"])
def test_a_same_size_edit_with_the_old_mtime_is_found_by_refresh_alone(
        tmp_path: Path, watch: bool, edit: object) -> None:
    root = _settled_store(tmp_path)
    index = SearchIndex(root, watch=watch)
    try:
        assert [h.id for h in index.search("5433")] == ["global-sem-0001"]
        assert index.refresh() == []  # settled and unchanged: nothing to do
        path = root / TOPIC
        before = path.stat()
        assert callable(edit)
        edit(path)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = path.stat()
        assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size)
        assert index.refresh() == [TOPIC]
        assert [h.id for h in index.search("7777")] == ["global-sem-0001"]
        assert index.search("5433") == []
    finally:
        index.close()


def test_a_stamp_names_the_file_itself_and_ages(tmp_path: Path) -> None:
    path = tmp_path / "file.md"
    path.write_text("x")
    stamp = file_stamp(path)
    assert stamp is not None and not settled(stamp)
    assert settled(stamp, now_ns=stamp[4] + SETTLE_NS)
    link = tmp_path / "link.md"
    link.symlink_to(path)
    assert file_stamp(link) != stamp  # lstat: the link, never its target
    assert file_stamp(tmp_path / "gone.md") is None
