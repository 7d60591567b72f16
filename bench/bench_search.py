"""Search benchmark: rebuild, incremental update, search latency and index size per store size,
with SQLite FTS5 and `git grep` over the same entries and queries as reference lines.

Usage: python bench/bench_search.py [--sizes 1000,10000,50000] [--queries 300] [--updates 20]
                                    [--partial 100]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from benchutil import percentile  # noqa: E402
from synthstore import SynthConfig, build_store, make_partial_queries, make_queries  # noqa: E402

from gitmem.search.files import read_file, scan_memory_files  # noqa: E402
from gitmem.search.index import SearchIndex  # noqa: E402


def timed(action: Callable[[], object]) -> float:
    """Milliseconds one call takes."""
    start = time.perf_counter()
    action()
    return (time.perf_counter() - start) * 1000


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


@dataclass
class Row:
    """The figures of one store size."""

    entries: int
    files: int
    rebuild_s: float = 0.0
    update_ms: list[float] = field(default_factory=list)
    search_watch_ms: list[float] = field(default_factory=list)
    search_scan_ms: list[float] = field(default_factory=list)
    partial_ms: list[float] = field(default_factory=list)
    partial_answered: int = 0
    refresh_scan_ms: list[float] = field(default_factory=list)
    index_mb: float = 0.0
    fts_build_s: float = 0.0
    fts_ms: list[float] = field(default_factory=list)
    fts_mb: float = 0.0
    grep_ms: list[float] = field(default_factory=list)
    cli_ms: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def bench_updates(root: Path, paths: list[str], count: int) -> list[float]:
    """Edit one topic file at a time (append an entry) and re-index just that file."""
    index = SearchIndex(root)
    index.search("warm up")
    times = []
    for n, relpath in enumerate(paths[:: max(1, len(paths) // count)][:count]):
        path = root / relpath
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"\n## Bench note {n}\nAppended by the benchmark, round {n}.\n")
        times.append(timed(partial(index.update_paths, [relpath])))
    index.close()
    return times


def bench_search(root: Path, queries: list[str], watch: bool) -> list[float]:
    """Latency of SearchIndex.search (its refresh included) over the queries, one process."""
    index = SearchIndex(root, watch=watch)
    index.search("warm up")
    times = [timed(partial(index.search, q, limit=10)) for q in queries]
    index.close()
    return times


def bench_partial(root: Path, queries: list[str]) -> tuple[list[float], int]:
    """Latency of half-typed and mid-word queries (watched index), and how many found anything."""
    index = SearchIndex(root)
    index.search("warm up")
    times, answered = [], 0
    for query in queries:
        start = time.perf_counter()
        hits = index.search(query, limit=10)
        times.append((time.perf_counter() - start) * 1000)
        answered += bool(hits)
    index.close()
    return times, answered


def bench_refresh(root: Path, rounds: int = 50) -> list[float]:
    """A refresh that stats every memory file (no change notifications)."""
    index = SearchIndex(root, watch=False)
    index.refresh()
    times = [timed(index.refresh) for _ in range(rounds)]
    index.close()
    return times


_WORD = re.compile(r"\w+", re.UNICODE)


def fts_build(root: Path, db: Path) -> sqlite3.Connection:
    """An SQLite FTS5 (unicode61) table of every entry's title and body."""
    conn = sqlite3.connect(db)
    conn.execute("CREATE VIRTUAL TABLE entries USING fts5(title, body, path UNINDEXED, "
                 "tokenize='unicode61')")
    rows = []
    for relpath in sorted(scan_memory_files(root)):
        content = read_file(root, relpath)
        if content is not None:
            rows += [(d["title"], d["full_body"], relpath) for d in content.docs]
    conn.executemany("INSERT INTO entries VALUES (?, ?, ?)", rows)
    conn.commit()
    return conn


def fts_search(conn: sqlite3.Connection, query: str) -> list[tuple[str]]:
    """OR of the query's words, ranked by FTS5's bm25."""
    words = [w for w in _WORD.findall(query) if len(w) > 1]
    if not words:
        return []
    match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
    return conn.execute("SELECT path FROM entries WHERE entries MATCH ? ORDER BY bm25(entries) "
                        "LIMIT 10", (match,)).fetchall()


def grep_search(root: Path, query: str) -> None:
    """`git grep` for any of the query's words (unranked, case-insensitive)."""
    words = [w for w in _WORD.findall(query) if len(w) > 1] or [query]
    args = ["git", "grep", "--no-index", "-i", "-n", "-F"]
    for word in words:
        args += ["-e", word]
    subprocess.run([*args, "--", "global", "workspaces"], cwd=root, capture_output=True,
                   check=False)


def cli_search_latency(root: Path, queries: Sequence[str]) -> list[float] | str:
    """Wall time of `python -m gitmem --root R search Q --json` per query, or why it cannot run."""
    probe = subprocess.run([sys.executable, "-m", "gitmem", "--root", str(root), "search",
                            queries[0], "--json"], capture_output=True, text=True, check=False)
    if probe.returncode not in (0, 1):
        reason = (probe.stderr.strip().splitlines() or [f"exit {probe.returncode}"])[-1]
        return f"`python -m gitmem search` failed: {reason}"
    times = []
    for query in queries:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "gitmem", "--root", str(root), "search", query,
                        "--json"], capture_output=True, check=False)
        times.append((time.perf_counter() - start) * 1000)
    return times


def run_size(size: int, queries: list[str], args: argparse.Namespace) -> Row:
    """Every measurement for one store size, in a fresh temporary store."""
    tmp = Path(tempfile.mkdtemp(prefix=f"gitmem-bench-{size}-"))
    try:
        paths = build_store(tmp, SynthConfig(entries=size))
        row = Row(entries=size, files=len(paths))
        index = SearchIndex(tmp)
        start = time.perf_counter()
        index.rebuild()
        row.rebuild_s = time.perf_counter() - start
        index.close()
        row.index_mb = folder_size(tmp / "index") / 1e6
        row.search_watch_ms = bench_search(tmp, queries, watch=True)
        row.search_scan_ms = bench_search(tmp, queries, watch=False)
        if args.partial:
            row.partial_ms, row.partial_answered = bench_partial(
                tmp, make_partial_queries(args.partial))
        row.refresh_scan_ms = bench_refresh(tmp)
        row.update_ms = bench_updates(tmp, paths, args.updates)
        db = tmp / "fts.sqlite"
        start = time.perf_counter()
        conn = fts_build(tmp, db)
        row.fts_build_s = time.perf_counter() - start
        row.fts_mb = db.stat().st_size / 1e6
        row.fts_ms = [timed(partial(fts_search, conn, q)) for q in queries]
        conn.close()
        if shutil.which("git"):
            row.grep_ms = [timed(partial(grep_search, tmp, q)) for q in queries[: args.grep]]
        if args.cli:
            init = subprocess.run([sys.executable, "-m", "gitmem", "--root", str(tmp), "init"],
                                  capture_output=True, text=True, check=False)
            if init.returncode != 0:
                row.notes.append(f"`gitmem init` failed: {init.stderr.strip()[-200:]}")
            cli = cli_search_latency(tmp, queries[: args.cli])
            if isinstance(cli, str):
                row.notes.append(f"CLI latency skipped: {cli}")
            else:
                row.cli_ms = cli
        return row
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _fmt(values: list[float], digits: int = 1) -> str:
    if not values:
        return "-"
    return f"{percentile(values, 0.5):.{digits}f} / {percentile(values, 0.95):.{digits}f}"


def report(rows: list[Row], queries: int) -> str:
    """A Markdown table, one column per store size."""
    head = "| | " + " | ".join(f"{r.entries:,} entries ({r.files} files)" for r in rows) + " |"
    lines = [head, "|---" * (len(rows) + 1) + "|"]

    def add(label: str, cell: Callable[[Row], str]) -> None:
        lines.append(f"| {label} | " + " | ".join(cell(r) for r in rows) + " |")

    add("full rebuild (parse + index)", lambda r: f"{r.rebuild_s:.1f} s")
    add("one-file update p50 / max", lambda r: f"{statistics.median(r.update_ms):.0f} / "
                                               f"{max(r.update_ms):.0f} ms")
    add(f"search p50 / p95, {queries} queries (refresh by change notification)",
        lambda r: _fmt(r.search_watch_ms) + " ms")
    add("search p50 / p95 (refresh stats every file)", lambda r: _fmt(r.search_scan_ms) + " ms")
    if any(r.partial_ms for r in rows):
        add(f"partial-word queries p50 / p95, {len(rows[0].partial_ms)} queries (change notification)",
            lambda r: _fmt(r.partial_ms) + " ms")
        add("partial-word queries with at least one hit",
            lambda r: f"{r.partial_answered} of {len(r.partial_ms)}")
    add("refresh alone, stat of every file p50 / p95", lambda r: _fmt(r.refresh_scan_ms) + " ms")
    add("index size", lambda r: f"{r.index_mb:.1f} MB")
    add("reference: SQLite FTS5 unicode61 build", lambda r: f"{r.fts_build_s:.1f} s, {r.fts_mb:.1f} MB")
    add("reference: SQLite FTS5 query p50 / p95", lambda r: _fmt(r.fts_ms, 2) + " ms")
    add("reference: `git grep` p50 / p95 (unranked)", lambda r: _fmt(r.grep_ms) + " ms")
    if any(r.cli_ms for r in rows):
        add("CLI `gitmem search --json` p50 / p95", lambda r: _fmt(r.cli_ms) + " ms")
    for row in rows:
        lines += [f"- {row.entries:,}: {note}" for note in row.notes]
    return "\n".join(lines)


def main() -> int:
    """Run the sizes given on the command line and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,50000", help="comma-separated entry counts")
    parser.add_argument("--queries", type=int, default=300, help="queries per size (>= 200)")
    parser.add_argument("--updates", type=int, default=20, help="one-file updates per size")
    parser.add_argument("--grep", type=int, default=40, help="queries run through git grep")
    parser.add_argument("--cli", type=int, default=30, help="queries run through the CLI (0: skip)")
    parser.add_argument("--partial", type=int, default=100,
                        help="half-typed and mid-word queries timed apart (0: skip)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    queries = make_queries(args.queries)
    rows = []
    for size in sizes:
        print(f"measuring {size:,} entries ...", file=sys.stderr, flush=True)
        rows.append(run_size(size, queries, args))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.2f}")
    print(report(rows, len(queries)))
    return 0


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
