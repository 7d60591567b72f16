"""`gitmem remember` as a CLI process from two source trees, in alternating rounds, so that both
see the same machine load (the order flips every round).

Each tree gets its own store (20 entries in one topic file, plus a warm-up write, which also
caches the secret-scan gate where the tree has one), then each round runs one `python -m gitmem
remember` per tree, appending an ordinary note to one topic file. Prints the median and minimum
wall time per tree. Typical use: the main branch's tree against this one.

Usage: python bench/bench_write_ab.py A_TREE B_TREE [--rounds 31]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SEED = ("from gitmem import Store, remember\n"
        "store = Store({root!r})\n"
        "for i in range(20):\n"
        "    remember(store, f'seed fact {{i}} about the deploy pipeline', 'semantic', topic='seed')\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("trees", nargs=2)
    parser.add_argument("--rounds", type=int, default=31)
    args = parser.parse_args()
    trees = {Path(t).resolve().name or t: str(Path(t).resolve()) for t in args.trees}
    with tempfile.TemporaryDirectory() as scratch:
        base = {**os.environ, "HOME": scratch, "XDG_CACHE_HOME": f"{scratch}/cache",
                "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
                "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}
        runs: dict[str, tuple[list[str], dict[str, str]]] = {}
        for name, tree in trees.items():
            root = Path(scratch) / f"store-{name}"
            env = {**base, "PYTHONPATH": tree}
            cmd = [sys.executable, "-m", "gitmem", "--root", str(root)]
            subprocess.run([*cmd, "init"], env=env, cwd=scratch, check=True, capture_output=True)
            subprocess.run([sys.executable, "-c", SEED.format(root=str(root))], env=env, cwd=scratch,
                           check=True, capture_output=True)
            subprocess.run([*cmd, "remember", "warm-up write", "--layer", "semantic"], env=env,
                           cwd=scratch, check=True, capture_output=True)
            runs[name] = (cmd, env)
        times: dict[str, list[float]] = {name: [] for name in trees}
        for index in range(args.rounds):
            order = list(runs.items()) if index % 2 else list(runs.items())[::-1]
            for name, (cmd, env) in order:
                start = time.perf_counter()
                subprocess.run([*cmd, "remember", f"note {index}: staging listens on 5433",
                                "--layer", "semantic", "--topic", "bench"], env=env, cwd=scratch,
                               check=True, capture_output=True)
                times[name].append((time.perf_counter() - start) * 1000)
    print(f"load average {os.getloadavg()[0]:.2f}; {args.rounds} rounds, order flipped each round")
    for name, values in times.items():
        print(f"  {name:<24} CLI remember median {statistics.median(values):6.1f} ms"
              f"  (min {min(values):.1f})  {trees[name]}")


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
