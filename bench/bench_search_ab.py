"""Search latency of two source trees over the same synthetic store, in alternating rounds, so
that both see the same machine load (the machine is shared and its load changes by the minute).

Each round starts one Python process per tree (A, then B, then B, then A in the next round...),
which imports gitmem from that tree, opens the store's index with change notifications and times
the benchmark query mix and the partial-word mix (see bench_search.py): wall time, and the
process's CPU time, which a loaded machine disturbs far less. Both trees must share the
index format (a tree with another schema version would rebuild the index on every switch).

Usage: python bench/bench_search_ab.py A_TREE B_TREE [--sizes 10000,50000] [--rounds 4]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from synthstore import SynthConfig, build_store, make_partial_queries, make_queries  # noqa: E402

ROUND = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from gitmem.search.index import SearchIndex
root, mix, partial = sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
index = SearchIndex(root)
index.search("warm up")
def timed(queries):
    wall, cpu = [], []
    for query in queries:
        start, start_cpu = time.perf_counter(), time.process_time()
        index.search(query, limit=10)
        cpu.append((time.process_time() - start_cpu) * 1000)
        wall.append((time.perf_counter() - start) * 1000)
    return wall, cpu
import gitmem
(mix_wall, mix_cpu), (partial_wall, partial_cpu) = timed(mix), timed(partial)
print(json.dumps({"mix": mix_wall, "mix_cpu": mix_cpu, "partial": partial_wall,
                  "partial_cpu": partial_cpu, "module": gitmem.__file__}))
index.close()
"""


def one_round(tree: Path, root: Path, mix: list[str], partial: list[str]) -> dict[str, list[float]]:
    """Time both query sets in a fresh process importing gitmem from `tree`."""
    done = subprocess.run([sys.executable, "-c", ROUND, str(tree), str(root), json.dumps(mix),
                           json.dumps(partial)], capture_output=True, text=True, check=True)
    result = json.loads(done.stdout)
    if not Path(result.pop("module")).resolve().is_relative_to(tree.resolve()):
        raise SystemExit(f"gitmem was not imported from {tree}")
    times: dict[str, list[float]] = result
    return times


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("a", type=Path, help="source tree A (e.g. a checkout of main)")
    parser.add_argument("b", type=Path, help="source tree B")
    parser.add_argument("--sizes", default="10000,50000")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    mix, partial = make_queries(300), make_partial_queries(100)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average at start "
          f"{os.getloadavg()[0]:.2f}")
    print("| entries | tree | mix p50 / p95 | mix CPU p50 / p95 | partial-word p50 / p95 "
          "| partial-word CPU p50 / p95 | round p50s (mix) |")
    print("|---:|---|---|---|---|---|---|")
    for size in (int(s) for s in args.sizes.split(",")):
        tmp = Path(tempfile.mkdtemp(prefix=f"gitmem-ab-{size}-"))
        try:
            build_store(tmp, SynthConfig(entries=size))
            one_round(args.a, tmp, ["warm"], ["warm"])  # builds the index once, untimed
            times: dict[str, dict[str, list[float]]] = {"A": {}, "B": {}}
            rounds: dict[str, list[float]] = {"A": [], "B": []}
            for n in range(args.rounds):
                order = ("A", "B") if n % 2 == 0 else ("B", "A")
                for name in order:
                    got = one_round(args.a if name == "A" else args.b, tmp, mix, partial)
                    rounds[name].append(statistics.median(got["mix"]))
                    for key, values in got.items():
                        times[name].setdefault(key, []).extend(values)
            for name in ("A", "B"):
                cells = [f"{percentile(times[name][key], .5):.1f} / "
                         f"{percentile(times[name][key], .95):.1f} ms"
                         for key in ("mix", "mix_cpu", "partial", "partial_cpu")]
                print(f"| {size:,} | {name} | {' | '.join(cells)}"
                      f" | {', '.join(f'{v:.1f}' for v in rounds[name])} |")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
