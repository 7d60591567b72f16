"""A broken index folder never crashes search, and never fails a write that committed."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gitmem.search import index as search_index
from gitmem.search.reader import View
from support import Cli, git


def _seed(gm: Cli) -> None:
    gm("remember", "The cache lives in redis", "-l", "semantic", "-t", "cache")
    assert gm.json("search", "redis")  # index/ now exists


def test_index_as_a_file_searches_a_private_index_with_a_note(gm: Cli) -> None:
    _seed(gm)
    shutil.rmtree(gm.root / "index")
    (gm.root / "index").write_text("not a folder")
    result = gm("search", "redis")
    assert result.exit_code == 0 and "global-sem-0001" in result.stdout
    assert "gitmem: note: the search index in index/ could not be used (index is a file" in result.stderr
    assert (gm.root / "index").read_text() == "not a folder"
    write = gm("remember", "Sessions live in memcached", "-l", "semantic")
    assert write.exit_code == 0, write.output
    assert "memcached" in git(gm.root, "show", "HEAD:global/semantic/general.md")
    assert gm.json("search", "memcached")[0]["id"] == "global-sem-0002"  # type: ignore[index]
    reindex = gm("reindex")
    assert reindex.exit_code == 2 and "index is a file, not a folder: move it away" in reindex.stderr


def test_index_linked_outside_is_never_written(gm: Cli, tmp_path: Path) -> None:
    _seed(gm)
    shutil.rmtree(gm.root / "index")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (gm.root / "index").symlink_to(outside)
    assert gm("remember", "Queues live in rabbitmq", "-l", "semantic").exit_code == 0
    result = gm("search", "rabbitmq")
    assert result.exit_code == 0 and "symbolic link" in result.stderr
    assert list(outside.iterdir()) == []


def test_folders_where_the_index_keeps_files_are_repaired(gm: Cli) -> None:
    _seed(gm)
    for name in ("manifest.json", "write.lock"):
        path = gm.root / "index" / name
        path.unlink(missing_ok=True)
        path.mkdir()
        (path / "junk").write_text("x")
    write = gm("remember", "Logs go to loki", "-l", "semantic")
    assert write.exit_code == 0, write.output
    assert "loki" in git(gm.root, "show", "HEAD:global/semantic/general.md")
    assert gm.json("search", "loki")[0]["id"] == "global-sem-0002"  # type: ignore[index]
    assert (gm.root / "index" / "manifest.json").is_file()


def test_a_write_reports_success_when_the_index_update_fails(gm: Cli) -> None:
    _seed(gm)
    manifest = gm.root / "index" / "manifest.json"
    manifest.unlink()
    manifest.mkdir()
    (manifest / "sub").mkdir()
    (manifest / "sub" / "f").write_text("x")
    (gm.root / "index" / "write.lock").unlink(missing_ok=True)
    (gm.root / "index" / "write.lock").symlink_to(gm.root / "index" / "write.lock")  # a link loop
    result = gm("remember", "Mail goes through postfix", "-l", "semantic")
    assert result.exit_code == 0 and result.stdout.strip() == "global-sem-0002", result.output
    assert "postfix" in git(gm.root, "show", "HEAD:global/semantic/general.md")
    assert gm.json("search", "postfix")[0]["id"] == "global-sem-0002"  # type: ignore[index]


def test_an_index_deleted_while_searching_never_fails_a_search(gm: Cli) -> None:
    for n in range(12):
        gm("remember", f"Service {n} answers on port {8000 + n}", "-l", "semantic", "-t", f"svc-{n % 4}")
    from gitmem.store.store import Store

    store = Store(gm.root)
    stop = threading.Event()

    def delete() -> None:
        while not stop.wait(0.003):
            shutil.rmtree(gm.root / "index", ignore_errors=True)

    deleter = threading.Thread(target=delete)
    deleter.start()
    try:
        from gitmem.verbs.search import search

        answered = [search(store, f"port {8000 + n % 12}") for n in range(30)]
    finally:
        stop.set()
        deleter.join()
        store.close()
    assert all(isinstance(hits, list) for hits in answered)
    assert sum(1 for hits in answered if hits) >= 15


def _damage_segments(root: Path) -> None:
    """Every file of the index's whoosh folder overwritten (the manifest left as it is)."""
    folder = next(p for p in (root / "index").iterdir() if p.name.startswith("whoosh-"))
    for path in folder.iterdir():
        if path.is_file() and not path.name.endswith(".toc"):
            path.write_bytes(b"\x00garbage" * 10)


def test_an_index_that_cannot_be_read_is_rebuilt_once_and_the_rebuild_is_said_and_logged(gm: Cli) -> None:
    _seed(gm)
    _damage_segments(gm.root)
    result = gm("search", "redis")
    assert result.exit_code == 0 and "global-sem-0001" in result.stdout
    assert "the search index could not be read (" in result.stderr
    assert "it was rebuilt from the files" in result.stderr
    log = (gm.root / "logs" / "memory.log").read_text(encoding="utf-8")
    assert '"event": "index-rebuilt"' in log
    again = gm("search", "redis")  # the rebuilt index reads: nothing more to say
    assert again.exit_code == 0 and "rebuilt" not in again.stderr


def test_a_search_failing_on_the_rebuilt_index_is_an_error_not_another_rebuild(
        gm: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault of the search itself (not of the index) is reported in one line after one rebuild,
    never answered by rebuilding the whole index again and again."""
    _seed(gm)
    rebuilds: list[int] = []
    real_rebuild = search_index.SearchIndex._rebuild_locked

    def counted(self: search_index.SearchIndex, *args: object, **kwargs: object) -> object:
        rebuilds.append(1)
        return real_rebuild(self, *args, **kwargs)

    def broken(self: View, request: object) -> object:
        raise ValueError("a fault in the readers")

    monkeypatch.setattr(search_index.SearchIndex, "_rebuild_locked", counted)
    monkeypatch.setattr(View, "run", broken)
    result = gm("search", "redis")
    assert result.exit_code == 4 and len(rebuilds) == 1
    assert "search failed on a freshly rebuilt index: ValueError: a fault in the readers" in result.stderr
    assert "Traceback" not in result.output


def _children(pid: int) -> set[int]:
    """Processes whose parent is `pid` (from /proc)."""
    found = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        if f"\nPPid:\t{pid}\n" in text:
            found.add(int(status.parent.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads processes from /proc (Linux)")
def test_rebuild_workers_exit_when_the_rebuilding_process_is_killed(tmp_path: Path) -> None:
    """A process killed with -9 in the middle of a parallel rebuild leaves no worker behind
    waiting for work that will never come."""
    root = tmp_path / "store"
    words = "deploy rollback postgres latency cache schema token migration timeout staging replica"
    for n in range(600):  # past PARALLEL_MIN_FILES: the rebuild forks worker processes
        path = root / "global" / "semantic" / f"topic-{n}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        entries = [f"## Fact {n}-{k} about {words.split()[k % 11]}\n{words} {n} {k}\n\n"
                   f"**Id:** global-sem-{n * 30 + k + 1:04d}\n**Created:** 2026-11-01\n"
                   f"**Verified:** 2026-11-20\n" for k in range(30)]
        path.write_text("# Topic\n\n" + "\n".join(entries), "utf-8")
    code = ("import sys\nfrom gitmem.search.index import SearchIndex\n"
            "SearchIndex(sys.argv[1]).rebuild()\n")
    rebuilding = subprocess.Popen([sys.executable, "-c", code, str(root)])
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while not workers and rebuilding.poll() is None and time.monotonic() < deadline:
            workers = _children(rebuilding.pid)
            time.sleep(0.02)
        assert workers, "the rebuild finished or failed before it started its workers"
        os.kill(rebuilding.pid, signal.SIGKILL)
        rebuilding.wait()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() for pid in workers):
            time.sleep(0.1)
        left = [pid for pid in workers if Path(f"/proc/{pid}").exists()
                and "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()]
        assert left == []
    finally:
        if rebuilding.poll() is None:
            rebuilding.kill()
            rebuilding.wait()
