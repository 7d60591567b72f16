"""Many connections to one catalog (the warm server's sets of parts, other gitmem processes)
bring it up to date at the same time: each waits its turn, none fails with "database is locked";
and a cache is started over only when its file is damaged, never because it was busy."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from gitmem.store import sqlitecache
from gitmem.store.catalog import Catalog
from gitmem.store.store import Store
from gitmem.verbs.entries import remember


def test_catalogs_refreshing_the_same_files_at_once_all_succeed(store: Store) -> None:
    paths = []
    for n in range(6):
        relpath = f"global/semantic/topic{n}.md"
        remember(store, f"Fact number {n} about the replica", "semantic", topic=f"topic{n}")
        paths.append(relpath)
    failures: list[BaseException] = []
    start, lock = threading.Barrier(8), threading.Lock()

    def refresher(mine: int) -> None:
        catalog = Catalog(store.root)
        try:
            start.wait()
            for n in range(15):  # a hand edit of this thread's file, then a look at all of them
                path = store.root / paths[mine % len(paths)]
                with lock:
                    path.write_text(path.read_text().rstrip("\n") + f" edit {mine}-{n}\n")
                catalog.refresh(paths, store.read_file)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            failures.append(exc)
        finally:
            catalog.close()

    threads = [threading.Thread(target=refresher, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert failures == []
    assert all(Path(store.root / p).is_file() for p in paths)


def test_a_cache_that_is_busy_when_opened_is_never_deleted(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a damaged file is started over: a lock held elsewhere says nothing about the file."""
    path = tmp_path / "state" / "cache.sqlite"
    schema = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT); CREATE TABLE IF NOT EXISTS t (x);"
    db = sqlitecache.open_cache(path, schema, "1", ("t",))
    db.execute("INSERT INTO t VALUES (42)")
    db.close()

    def busy(_db: sqlite3.Connection, _schema: str) -> str | None:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(sqlitecache, "_prepare", busy)
    with pytest.raises(sqlite3.OperationalError):
        sqlitecache.open_cache(path, schema, "1", ("t",))
    monkeypatch.undo()
    again = sqlitecache.open_cache(path, schema, "1", ("t",))
    assert again.execute("SELECT x FROM t").fetchall() == [(42,)]
    again.close()


def test_a_damaged_cache_is_started_over(tmp_path: Path) -> None:
    path = tmp_path / "state" / "cache.sqlite"
    path.parent.mkdir()
    path.write_bytes(b"this is not a database at all, just bytes" * 200)
    schema = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT); CREATE TABLE IF NOT EXISTS t (x);"
    db = sqlitecache.open_cache(path, schema, "1", ("t",))
    assert db.execute("SELECT count(*) FROM t").fetchone() == (0,)
    db.close()


def test_a_catalog_made_with_the_older_layer_index_is_kept_and_its_index_replaced(store: Store) -> None:
    """The covering index of the per-layer counts replaced the older one in place: a catalog made
    before it is not dropped and rebuilt (at 200,000 entries that took most of a minute)."""
    remember(store, "The replica lags by a minute at peak", "semantic", topic="replica")
    path = store.root / "state" / "catalog.sqlite"
    store.close()
    db = sqlite3.connect(path)
    db.executescript("DROP INDEX files_by_layer; CREATE INDEX files_layer ON files (scope, layer);"
                     "INSERT INTO meta VALUES ('probe', 'kept');")
    db.commit()
    db.close()
    catalog = Catalog(store.root)
    try:
        names = {row[0] for row in catalog.db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
        assert "files_by_layer" in names and "files_layer" not in names
        assert catalog.db.execute("SELECT value FROM meta WHERE key='probe'").fetchone() == ("kept",)
        plan = catalog.db.execute("EXPLAIN QUERY PLAN SELECT scope, layer, COUNT(*), SUM(count) "
                                  "FROM files GROUP BY scope, layer").fetchall()
        assert "COVERING INDEX files_by_layer" in str(plan)
        assert catalog.counts()[("global", "semantic")] == (1, 1)
    finally:
        catalog.close()


SCHEMA = ("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);\n"
          "-- rows; one per writer\nCREATE TABLE IF NOT EXISTS t (x);")


def test_a_connection_that_looked_before_another_made_the_cache_keeps_what_that_one_wrote(
        tmp_path: Path) -> None:
    """The look at the schema version and the remaking are one transaction: a second process that
    found no version a moment before the first one set it does not drop the first one's rows."""
    path = tmp_path / "state" / "cache.sqlite"
    first = sqlitecache.open_cache(path, SCHEMA, "1", ("meta", "t"))
    first.execute("INSERT INTO t VALUES ('written by the first')")
    late = sqlite3.connect(path, isolation_level=None)  # it saw no version before `first` set one
    sqlitecache.remake(late, SCHEMA, "1", ("meta", "t"))
    assert late.execute("SELECT x FROM t").fetchall() == [("written by the first",)]
    sqlitecache.remake(late, SCHEMA, "2", ("meta", "t"))  # another version: made anew
    assert late.execute("SELECT x FROM t").fetchall() == []
    assert late.execute("SELECT value FROM meta WHERE key='schema'").fetchone() == ("2",)
    first.close()
    late.close()


@pytest.mark.parametrize("round_", range(20))  # the race is rare: one round in ~17 lost it
def test_eight_connections_opening_a_new_cache_at_once_lose_no_row(tmp_path: Path, round_: int) -> None:
    """Eight connections make the same new file at once: none fails (switching a new file to
    write-ahead logging answered "locked" without waiting), and every row is kept."""
    path = tmp_path / "state" / "cache.sqlite"
    start, failures = threading.Barrier(8), []

    def opener(n: int) -> None:
        try:
            start.wait()
            db = sqlitecache.open_cache(path, SCHEMA, "1", ("meta", "t"))
            db.execute("INSERT INTO t VALUES (?)", (n,))
            db.close()
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            failures.append(exc)

    threads = [threading.Thread(target=opener, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    db = sqlitecache.open_cache(path, SCHEMA, "1", ("meta", "t"))
    assert sorted(x for (x,) in db.execute("SELECT x FROM t")) == list(range(8))
    db.close()


def _grouped(catalog: Catalog) -> dict[tuple[str, str], tuple[int, int]]:
    rows = catalog.db.execute("SELECT scope, layer, COUNT(*), SUM(count) FROM files GROUP BY scope, layer")
    return {(r[0], r[1]): (int(r[2]), int(r[3] or 0)) for r in rows}


def test_the_kept_layer_counts_follow_every_change_of_the_files(store: Store) -> None:
    """The per-layer counts SYSTEM.md shows come from a table triggers keep: after writes,
    a move, a file deleted by hand, an appended entry and a rebuild, they are the grouped
    count of the topic files."""
    from gitmem.verbs.moves import move_topic

    for n, (layer, topic) in enumerate([("semantic", "db"), ("semantic", "db"), ("semantic", "cache"),
                                        ("procedural", "deploy"), ("learnings", "oops")]):
        remember(store, f"Fact number {n} about {topic}", layer, topic=topic)
    assert store.catalog.counts() == _grouped(store.catalog)
    assert store.catalog.counts()[("global", "semantic")] == (2, 3)
    move_topic(store, "global/semantic/cache.md", "procedural/cache")
    (store.root / "global/learnings/oops.md").unlink()
    with open(store.root / "global/semantic/db.md", "a", encoding="utf-8") as handle:
        handle.write("\n## Added by hand\nThe pool holds twenty connections.\n")
    remember(store, "Another fact about deploys", "procedural", topic="deploy")  # absorbs both edits
    counts = store.catalog.counts()
    assert counts == _grouped(store.catalog)
    assert ("global", "learnings") not in counts and counts[("global", "semantic")] == (1, 3)
    store.catalog.db.execute("UPDATE layer_counts SET entries = entries + 7")  # drifted, say
    store.catalog.rebuild(["global/semantic/db.md"], lambda path: store.read_file(path))
    assert store.catalog.counts() == _grouped(store.catalog) == {("global", "semantic"): (1, 3)}
    store.catalog.rebuild([], lambda _path: None)
    assert store.catalog.counts() == {} == _grouped(store.catalog)


def test_a_catalog_made_before_the_kept_counts_gets_them_filled_in_place(store: Store) -> None:
    remember(store, "The replica lags by a minute at peak", "semantic", topic="replica")
    remember(store, "Deploys go out at noon", "procedural", topic="deploy")
    path = store.root / "state" / "catalog.sqlite"
    store.close()
    db = sqlite3.connect(path)
    db.executescript("DROP TRIGGER files_counted_insert; DROP TRIGGER files_counted_delete;"
                     "DROP TRIGGER files_counted_update; DROP TABLE layer_counts;"
                     "INSERT INTO meta VALUES ('probe', 'kept');")
    db.commit()
    db.close()
    catalog = Catalog(store.root)
    try:
        assert catalog.db.execute("SELECT value FROM meta WHERE key='probe'").fetchone() == ("kept",)
        assert catalog.counts() == _grouped(catalog) == {("global", "semantic"): (1, 1),
                                                         ("global", "procedural"): (1, 1)}
    finally:
        catalog.close()
