"""The index manifest is a base and a log of changes: an update appends what it changed, every
reader (a process of its own, a long-lived index) sees exactly what a whole rewrite would show,
and a torn line or a vanished log loses nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitmem.search import manifeststore
from gitmem.search.index import SearchIndex

MANIFEST = Path("index") / "manifest.json"


def topic(root: Path, relpath: str, title: str, body: str, entry_id: str) -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# Topic\n\n## {title}\n{body}\n\n**Id:** {entry_id}\n**Created:** 2026-11-01\n",
                    "utf-8")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for n in range(6):
        topic(tmp_path, f"global/semantic/t{n}.md", f"Topic {n} holds kiwi{n}", f"Body {n}.",
              f"global-sem-{n + 1:04d}")
    return tmp_path


def on_disk(root: Path) -> dict[str, tuple[object, ...]]:
    """The manifest's records as a reader that knows nothing reads them."""
    loaded = manifeststore.load(root / MANIFEST)
    assert loaded is not None
    return {path: (r.stamp, r.digest, r.error, r.segment) for path, r in loaded.manifest.files.items()}


def found(index: SearchIndex, word: str) -> list[str | None]:
    return [hit.id for hit in index.search(word)]


def test_an_update_appends_to_the_log_and_every_reader_sees_it(root: Path) -> None:
    writer = SearchIndex(root, watch=False)
    writer.rebuild()
    reader = SearchIndex(root, watch=False)
    assert found(reader, "kiwi1") == ["global-sem-0002"]
    base = os.stat(root / MANIFEST).st_ino
    topic(root, "global/semantic/t1.md", "Topic 1 now holds mango", "Changed.", "global-sem-0002")
    topic(root, "global/semantic/new.md", "A new topic of papaya", "New.", "global-sem-0007")
    (root / "global/semantic/t2.md").unlink()
    writer.update_paths(["global/semantic/t1.md", "global/semantic/new.md", "global/semantic/t2.md"])
    assert os.stat(root / MANIFEST).st_ino == base  # the base was not written again
    assert writer._manifest is not None
    mine = {p: (r.stamp, r.digest, r.error, r.segment) for p, r in writer._manifest.files.items()}
    assert on_disk(root) == mine
    assert "global/semantic/t2.md" not in mine and "global/semantic/new.md" in mine
    # a reader that read the manifest before reads the log's new line, and searches the change
    assert found(reader, "mango") == ["global-sem-0002"]
    assert found(reader, "papaya") == ["global-sem-0007"]
    assert found(reader, "kiwi2") == [] and found(reader, "kiwi1") == []
    assert reader._manifest is not None and set(reader._manifest.files) == set(mine)
    writer.close()
    reader.close()


def test_a_long_log_is_folded_into_a_new_base(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manifeststore, "LOG_MIN_ROWS", 3)
    index = SearchIndex(root, watch=False)
    index.rebuild()
    reader = SearchIndex(root, watch=False)
    assert found(reader, "kiwi0") == ["global-sem-0001"]
    first = manifeststore.load(root / MANIFEST)
    assert first is not None
    for n in range(5):
        topic(root, f"global/semantic/t{n}.md", f"Topic {n} holds lime{n}", "Again.", f"global-sem-{n + 1:04d}")
        index.update_paths([f"global/semantic/t{n}.md"])
    now = manifeststore.load(root / MANIFEST)
    assert now is not None and now.log != first.log
    assert not (root / "index" / first.log).exists()
    assert [p.name for p in (root / "index").glob("manifest.*.log")] == [now.log]
    assert found(reader, "lime4") == ["global-sem-0005"]  # it read the new base
    assert found(SearchIndex(root, watch=False), "lime3") == ["global-sem-0004"]
    index.close()
    reader.close()


def test_a_torn_last_line_is_not_read_and_the_next_update_writes_a_whole_base(root: Path) -> None:
    index = SearchIndex(root, watch=False)
    index.rebuild()
    topic(root, "global/semantic/t0.md", "Topic 0 holds fig", "Changed.", "global-sem-0001")
    index.update_paths(["global/semantic/t0.md"])
    loaded = manifeststore.load(root / MANIFEST)
    assert loaded is not None
    before = on_disk(root)
    with open(root / "index" / loaded.log, "ab") as log:
        log.write(b'{"generation":99,"rows":[["global/semantic/t3.md",1')  # a crash mid-append
    assert on_disk(root) == before
    topic(root, "global/semantic/t3.md", "Topic 3 holds plum", "Changed.", "global-sem-0004")
    index.update_paths(["global/semantic/t3.md"])
    after = manifeststore.load(root / MANIFEST)
    assert after is not None and after.log != loaded.log and after.offset == 0
    fresh = SearchIndex(root, watch=False)
    assert found(fresh, "plum") == ["global-sem-0004"] and found(fresh, "fig") == ["global-sem-0001"]
    assert fresh.refresh() == []  # every file's record is on disk: nothing is indexed again
    index.close()
    fresh.close()


def test_a_manifest_whose_log_is_gone_is_rebuilt(root: Path) -> None:
    index = SearchIndex(root, watch=False)
    index.rebuild()
    loaded = manifeststore.load(root / MANIFEST)
    assert loaded is not None
    (root / "index" / loaded.log).unlink()
    assert manifeststore.load(root / MANIFEST) is None
    assert found(SearchIndex(root, watch=False), "kiwi5") == ["global-sem-0006"]
    index.close()
