"""One bad file never stops search: a link, FIFO, folder, unreadable or non-UTF-8 file in a topic
folder, a document folder or the runtime folder is skipped with a note; the rest is found."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from support import Cli

DOC = "# Runbook\n\nThe deploy waits for the canary.\n"


def _symlink(path: Path, outside: Path) -> None:
    target = outside / "target.md"
    target.write_text("# Elsewhere\n\nThe canary text outside the store.\n")
    path.symlink_to(target)


def _fifo(path: Path, outside: Path) -> None:
    os.mkfifo(path)


def _folder(path: Path, outside: Path) -> None:
    path.mkdir()
    (path / "inner.md").write_text("canary\n")


def _unreadable(path: Path, outside: Path) -> None:
    path.write_text("# Note\n\ncanary text nobody may read\n")
    path.chmod(0)


def _not_utf8(path: Path, outside: Path) -> None:
    path.write_bytes(b"# Title\n\ncanary \xff\xfe\x80 bytes\n")


KINDS: dict[str, Callable[[Path, Path], None]] = {
    "symlink": _symlink, "fifo": _fifo, "folder": _folder, "unreadable": _unreadable,
    "not-utf8": _not_utf8,
}
PLACES = {
    "topic": "global/semantic/broken.md",
    "document-active": "global/documents/active/broken.md",
    "document-archived": "global/documents/archived/broken.md",
    "runtime": "global/runtime/MEMORY.md",
}


def _seed(gm: Cli, tmp_path: Path) -> None:
    assert gm("remember", "The canary deploy goes first", "-l", "semantic", "-t", "deploys").exit_code == 0
    source = tmp_path / "runbook.md"
    source.write_text(DOC)
    assert gm("doc", "add", str(source), "--title", "Runbook", "--scope", "global").exit_code == 0


def _replace(root: Path, relpath: str, kind: str, outside: Path) -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    KINDS[kind](path, outside)


def _restore_permissions(root: Path) -> None:
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            if not path.is_symlink():
                path.chmod(0o644)


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("indexed_first", [True, False], ids=["update", "rebuild"])
def test_search_skips_one_bad_file_and_finds_the_rest(gm: Cli, tmp_path: Path, place: str,
                                                      kind: str, indexed_first: bool) -> None:
    if kind == "unreadable" and os.geteuid() == 0:
        pytest.skip("root reads a file without read permission")
    _seed(gm, tmp_path)
    if indexed_first:
        assert gm.json("search", "canary")
    else:
        shutil.rmtree(gm.root / "index", ignore_errors=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    _replace(gm.root, PLACES[place], kind, outside)
    try:
        result = gm("search", "canary", "--json")
        assert result.exit_code == 0, result.output

        hits = {(h["id"], h["path"]) for h in json.loads(result.stdout)}
        assert ("global-sem-0001", "global/semantic/deploys.md") in hits
        assert ("global-doc-0001", "global/documents/active/runbook.md") in hits
        assert all(not p.endswith("broken.md") and "outside" not in p for _i, p in hits)
        if place != "runtime":
            assert "skipped" in result.stderr, result.stderr
    finally:
        _restore_permissions(gm.root)


def test_the_only_document_turned_into_a_link_leaves_an_empty_index_that_searches(
        gm: Cli, tmp_path: Path) -> None:
    source = tmp_path / "runbook.md"
    source.write_text(DOC)
    assert gm("doc", "add", str(source), "--title", "Runbook", "--scope", "global").exit_code == 0
    assert gm.json("search", "canary")
    copy = gm.root / "global/documents/active/runbook.md"
    copy.unlink()
    copy.symlink_to(source)
    for query in ("canary", "anar"):  # whole words and fragments of words
        result = gm("search", query, "--json")
        assert result.exit_code == 1, result.output  # nothing found, not a crash (exit 4)
        assert result.stdout.strip() == "[]"
        assert "1 file skipped" in result.stderr
