"""Retrieval quality of gitmem search against plain BM25 over the same text, in one run:
recall@1/5/10 and MRR per question kind on two labelled sets, (a) conversational (multi-session
dialogues, tests/fixtures/retrieval/dialogues.py) and (b) agent memory (store.py, queries.json).

Usage: python bench/bench_retrieval.py [--filler N] [--verbose]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from fixtures.retrieval import dialogues, store  # noqa: E402
from fixtures.retrieval.baseline import PlainBM25  # noqa: E402
from fixtures.retrieval.evaluate import (  # noqa: E402
    HIDDEN_KEYS,
    KS,
    Report,
    Spec,
    agent_specs,
    conversation_specs,
    run_specs,
    searcher,
)
from gitmem.search.index import SearchIndex  # noqa: E402
from gitmem.search.query import Levers  # noqa: E402


def table(name: str, reports: dict[str, Report]) -> None:
    """One Markdown table: a row per kind (and all), recall@k and MRR of each ranking."""
    first = next(iter(reports.values()))
    heads = [f"{label} {m}" for label in reports for m in (*(f"R@{k}" for k in KS), "MRR")]
    print(f"\n{name}\n| kind | n | " + " | ".join(heads) + " |")
    print("|---" * (len(heads) + 2) + "|")
    for kind in [*first.kinds(), None]:
        count = len(first.ranks_of(kind))
        cells = []
        for report in reports.values():
            cells += [f"{report.recall(k, kind):.3f}" for k in KS] + [f"{report.mrr(kind):.3f}"]
        print(f"| {kind or 'all'} | {count} | " + " | ".join(cells) + " |")


# Each lever added to the ones before it; "today" is the ranking without any of them.
STEPS: dict[str, Levers] = {
    "today": Levers(understanding=False, dates=False, neighbours=False),
    "+words": Levers(dates=False, neighbours=False),
    "+dates": Levers(neighbours=False, events=False),
    "+neighbours": Levers(events=False),
    "+events": Levers(),
    "+feedback": Levers(feedback=True),
}


def steps(name: str, reports: dict[str, Report]) -> None:
    """recall@10 and MRR per kind after each lever."""
    first = reports["today"]
    heads = [f"{step} {m}" for step in STEPS for m in ("R@10", "MRR")]
    print(f"\n{name}, lever by lever\n| kind | " + " | ".join(heads) + " |")
    print("|---" * (len(heads) + 1) + "|")
    for kind in [*first.kinds(), None]:
        cells = [f"{reports[s].recall(10, kind):.3f} | {reports[s].mrr(kind):.3f}" for s in STEPS]
        print(f"| {kind or 'all'} | " + " | ".join(cells) + " |")


def measure(build: Callable[[Path], dict[str, str]], specs: list[Spec], verbose: bool,
            hidden_keys: tuple[str, ...] = ()) -> dict[str, Report]:
    """Build a store, then run its queries through plain BM25 and gitmem search (with each
    lever added in turn, and as it ships)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ids = build(root)
        hidden = {ids[key] for key in hidden_keys}
        index = SearchIndex(root)
        index.rebuild()
        baseline = PlainBM25(root, store.TODAY)
        reports = {"bm25": run_specs(searcher(baseline, store.TODAY), specs, ids, hidden),
                   "gitmem": run_specs(searcher(index, store.TODAY), specs, ids, hidden)}
        for step, levers in STEPS.items():
            reports[step] = run_specs(searcher(index, store.TODAY, levers=levers), specs, ids,
                                      hidden)
        index.close()
        baseline.close()
    if verbose:
        for line in reports["gitmem"].misses(10):
            print("  miss@10:", line)
    return reports


def main() -> int:
    """Build both fixture stores, run every labelled query, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--filler", type=int, default=900, help="distractor entries in set (b)")
    parser.add_argument("--verbose", action="store_true", help="list the misses")
    args = parser.parse_args()
    conv = measure(dialogues.build, conversation_specs(), args.verbose)
    agent = measure(lambda root: store.build(root, filler=args.filler), agent_specs(), args.verbose,
                    HIDDEN_KEYS)
    shipped = ("bm25", "gitmem")
    table("(a) conversational", {k: conv[k] for k in shipped})
    steps("(a) conversational", conv)
    table("(a) conversational, without and with event dates",
          {"-events": conv["+neighbours"], "+events": conv["+events"]})
    table("(b) agent memory", {k: agent[k] for k in shipped})
    steps("(b) agent memory", agent)
    table("(b) agent memory, without and with event dates",
          {"-events": agent["+neighbours"], "+events": agent["+events"]})
    gitmem = agent["gitmem"]
    print(f"\n(b) stale-vs-fresh rank-1 failures: {len(gitmem.rank1_failures)}; "
          f"hidden entries leaked: {len(gitmem.hidden_leaks)}")
    return 0


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
