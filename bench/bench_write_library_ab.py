"""Library `remember` of two source trees over copies of one store, in alternating rounds, so
that both see the same machine load (the machine is shared and its load changes by the minute).

The store is built once (bench_write.py's shape: ~20 entries per topic file over five layers,
the global scope and four workspaces, committed once). Each round copies it for each tree
(A, B, then B, A in the next round...), refreshes git's index of the copy (a copy changes every
file's times, which would make each status re-read every file), and times 30 library writes in a
fresh Python process that imports gitmem from that tree. Prints the median of each process and
the median over rounds.

Usage: python bench/bench_write_library_ab.py A_TREE B_TREE [--sizes 10000,50000] [--rounds 4]
(`git archive main | tar -x -C /tmp/main-src` gives a tree to compare against.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

BUILD = """
import sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[1] + "/bench")
from pathlib import Path
from bench_write import build_store
build_store(Path(sys.argv[2]), int(sys.argv[3]))
"""

ROUND = """
import statistics, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from gitmem.store.store import Store
from gitmem.verbs.entries import remember
store = Store(Path(sys.argv[2]))
remember(store, "warm-up write builds the catalog", "semantic", topic="warm")
samples = []
for n in range(30):
    start = time.perf_counter()
    remember(store, f"library write {n} about the deploy pipeline", "semantic", topic=f"bench-{n % 3}")
    samples.append((time.perf_counter() - start) * 1000)
print(f"{statistics.median(samples):.2f}")
"""


def one_round(tree: Path, seed: Path, work: Path) -> float:
    shutil.copytree(seed, work, symlinks=True)
    subprocess.run(["git", "status", "--short"], cwd=work, capture_output=True, check=True)
    try:
        out = subprocess.run([sys.executable, "-c", ROUND, str(tree), str(work)], capture_output=True,
                             text=True, check=True, env={**os.environ, "PYTHONPATH": str(tree)})
        return float(out.stdout.strip())
    finally:
        shutil.rmtree(work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--sizes", default="10000,50000")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    trees = {"A": args.a.resolve(), "B": args.b.resolve()}
    print(f"A = {trees['A']}\nB = {trees['B']}\nload average {os.getloadavg()[0]:.2f}, cores {os.cpu_count()}")
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            seed = Path(tmp) / "seed"
            env = {**os.environ, "PYTHONPATH": str(trees["A"]), "GIT_AUTHOR_NAME": "bench",
                   "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@x"}
            subprocess.run([sys.executable, "-c", BUILD, str(trees["A"]), str(seed), str(size)], check=True,
                           env=env)
            medians: dict[str, list[float]] = {"A": [], "B": []}
            for number in range(args.rounds):
                order = ("A", "B") if number % 2 == 0 else ("B", "A")
                for name in order:
                    medians[name].append(one_round(trees[name], seed, Path(tmp) / f"{name}{number}"))
            print(f"\n== {size:,} entries: median library remember per round (ms)")
            for name in ("A", "B"):
                rounds = "  ".join(f"{m:6.1f}" for m in medians[name])
                print(f"{name}: {rounds}   median {statistics.median(medians[name]):6.1f}")


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
