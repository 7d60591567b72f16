"""In-process search latency with gitmem's query understanding, dates, neighbour lift and event
dates on (as shipped) against the same index searched without them (the ranking before them), in
alternating rounds over one synthetic store, so both see the same machine load; and the event
questions alone with event dates on and off (their anchor search is the cost).

Query mix: bench_search.py's 300 queries plus whole questions with date expressions, four of
them relative to an event ("two weeks before the postgres migration"), which costs a search of
the event's words to find its day.

Usage: python bench/bench_search_levers.py [--sizes 50000] [--rounds 4]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from benchutil import percentile  # noqa: E402
from synthstore import SynthConfig, build_store, make_queries  # noqa: E402

from gitmem.search.index import SearchIndex  # noqa: E402
from gitmem.search.query import DEFAULT_LEVERS, Levers  # noqa: E402

BEFORE = Levers(understanding=False, dates=False, neighbours=False, events=False)
NO_EVENTS = Levers(events=False)
TODAY = date(2026, 12, 2)
EVENT_QUESTIONS = ["what changed in the cache two weeks before the postgres migration?",
                   "which alerts fired the day after the outage?",
                   "the retry settings a month after we moved to kafka",
                   "what did we decide since the redis upgrade?"]
QUESTIONS = ["what did we change in the deploy pipeline last week?",
             "when did we move the staging database?", "what happened with the cache yesterday?",
             "what did Ana say about the release last May?", "the worker timeout two weeks ago",
             "which queue settings changed in October?", "what did we decide on 2026-11-20?",
             "how is the migration going this month?", *EVENT_QUESTIONS]


def round_ms(index: SearchIndex, queries: list[str], levers: Levers) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds of each query, in order (CPU time: a loaded machine disturbs
    it far less)."""
    wall, cpu = [], []
    for query in queries:
        start, start_cpu = time.perf_counter(), time.process_time()
        index.search(query, limit=10, now=TODAY, levers=levers)
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    return wall, cpu


def run_size(size: int, rounds: int) -> dict[str, list[float]]:
    """Alternating rounds (before, shipped, shipped, before, ...) over one store."""
    tmp = Path(tempfile.mkdtemp(prefix=f"gitmem-levers-{size}-"))
    try:
        build_store(tmp, SynthConfig(entries=size))
        index = SearchIndex(tmp)
        index.rebuild()
        queries = make_queries(300) + QUESTIONS * 5
        round_ms(index, queries, DEFAULT_LEVERS)  # warm both paths once
        round_ms(index, queries, BEFORE)
        samples: dict[str, list[float]] = {f"{name}{kind}": [] for kind in ("", " cpu") for name in
                                           ("before", "shipped", "no events", "events")}
        order = [("before", BEFORE, queries), ("shipped", DEFAULT_LEVERS, queries),
                 ("no events", NO_EVENTS, EVENT_QUESTIONS * 5),
                 ("events", DEFAULT_LEVERS, EVENT_QUESTIONS * 5)]
        for number in range(rounds):
            for name, levers, asked in order if number % 2 == 0 else order[::-1]:
                wall, cpu = round_ms(index, asked, levers)
                samples[name] += wall
                samples[f"{name} cpu"] += cpu
        index.close()
        return samples
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    """Print p50 / p95 of both and their ratio per size, wall time and CPU time."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="50000")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    print("| entries | queries | time | without p50 / p95 | with p50 / p95 | p50 ratio |")
    print("|---|---|---|---|---|---|")
    for size in (int(s) for s in args.sizes.split(",")):
        samples = run_size(size, args.rounds)
        for label, without, with_ in (("all, levers", "before", "shipped"),
                                      ("event questions, event dates", "no events", "events")):
            for kind, suffix in (("wall", ""), ("CPU", " cpu")):
                off, on = samples[f"{without}{suffix}"], samples[f"{with_}{suffix}"]
                ratio = statistics.median(on) / statistics.median(off)
                print(f"| {size:,} | {label} | {kind} | {percentile(off, 0.5):.1f} / "
                      f"{percentile(off, 0.95):.1f} ms | {percentile(on, 0.5):.1f} / "
                      f"{percentile(on, 0.95):.1f} ms | {ratio:.2f}x |")
    return 0


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
