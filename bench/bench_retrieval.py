"""Retrieval quality of gitmem search on the labelled fixture store: recall@1/5/10 and MRR.

Usage: python bench/bench_retrieval.py [--filler N] [--verbose]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from fixtures.retrieval.evaluate import evaluate  # noqa: E402
from fixtures.retrieval.store import build  # noqa: E402
from gitmem.search.index import SearchIndex  # noqa: E402


def main() -> int:
    """Build the fixture store, run every labelled query, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--filler", type=int, default=900, help="distractor entries to add")
    parser.add_argument("--verbose", action="store_true", help="list the misses")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ids = build(root, filler=args.filler)
        index = SearchIndex(root)
        entries = index.rebuild()
        report = evaluate(index, ids)
        index.close()
    print(f"entries {entries}, labelled queries {len(report.ranks)}")
    print(f"recall@1  {report.recall(1):.3f}")
    print(f"recall@5  {report.recall(5):.3f}")
    print(f"recall@10 {report.recall(10):.3f}")
    print(f"MRR       {report.mrr():.3f}")
    for category, (hit, total) in sorted(report.by_category().items()):
        print(f"  {category:18} {hit}/{total} within 5")
    print(f"stale-vs-fresh rank-1 failures: {len(report.rank1_failures)}")
    print(f"hidden entries leaked: {len(report.hidden_leaks)}")
    if args.verbose:
        for line in report.misses() + report.rank1_failures + report.hidden_leaks:
            print("  miss:", line)
    return 0


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
