"""The warm server: CLI calls through `gitmem serve` against the same calls in their own process,
the library in-process, and `git grep -l -i -w WORD` over the same store as the reference.

Every call runs from inside a code repository (a fresh `git init` with an origin), as an agent's
does. For each size: build a store (synthetic entries, one commit, search index built), then time, in
one run and interleaved per round so the machine's load falls on every line alike:
`git grep`, CLI `search` without the server (GITMEM_SERVE=off), CLI `search` through the server,
in-process search (library, one warm store), CLI `context` both ways and in-process (the card the
server builds, without the client), CLI `remember` both ways.

    .venv/bin/python bench/bench_serve.py [--sizes 10000,50000] [--rounds 25]
    .venv/bin/python bench/bench_serve.py --quick       # 1,000 entries, 8 rounds: a smoke run
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from benchutil import GITMEM, start_server  # noqa: E402
from synthstore import SynthConfig, build_store  # noqa: E402

from gitmem.serve.control import stop_server  # noqa: E402

WORDS = ["deploy", "rollback", "postgres", "latency", "cache", "schema", "token", "migration",
         "timeout", "staging", "replica", "webhook"]
CODE = Path(tempfile.mkdtemp(prefix="gitmem-bench-code-"))  # where every call runs from
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "b@x"}


def ms(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return (time.perf_counter() - start) * 1000


def run(args: list[str], env: dict[str, str] | None = None) -> None:
    subprocess.run(args, capture_output=True, check=False, env=env, cwd=CODE)


def run_ms(args: list[str], env: dict[str, str] | None = None) -> float:
    """Wall time of one process, start to exit."""
    start = time.perf_counter()
    run(args, env)
    return (time.perf_counter() - start) * 1000


def make_store(size: int) -> Path:
    root = Path(tempfile.mkdtemp(prefix=f"gitmem-bench-serve-{size}-"))
    env = {**os.environ, **GIT_ENV, "GITMEM_SERVE": "off"}
    subprocess.run([*GITMEM, "--root", str(root), "init"], check=True, capture_output=True, env=env)
    build_store(root, SynthConfig(entries=size))
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "bench data"], cwd=root, check=True, env=env)
    subprocess.run([*GITMEM, "--root", str(root), "reindex"], check=True, capture_output=True, env=env)
    return root



def measure(size: int, rounds: int) -> dict[str, list[float]]:
    root = make_store(size)
    env_off = {**os.environ, **GIT_ENV, "GITMEM_SERVE": "off"}
    env_on = {**os.environ, **GIT_ENV}
    base = [*GITMEM, "--root", str(root)]
    got: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        got.setdefault(name, []).append(value)

    from gitmem.store import parsecache
    from gitmem.store.store import open_store
    from gitmem.verbs.context import card_for
    from gitmem.verbs.search import search

    parsecache.enable()
    warm = open_store(root)
    proc = start_server(root)
    try:
        for word in WORDS[:3]:  # warm-up: the server's first calls, the page cache, the index
            run([*base, "search", word, "--json"], env_on)
            run([*base, "context"], env_on)
            search(warm, word)
            card_for(warm, cwd=CODE)
        for n in range(rounds):  # reads, interleaved; nothing writes meanwhile
            word = WORDS[n % len(WORDS)]
            add("python -c pass", run_ms([sys.executable, "-c", "pass"]))
            add("git grep -l -i -w WORD", run_ms(["git", "-C", str(root), "grep", "-l", "-i", "-w", word]))
            add("search, CLI without the server", run_ms([*base, "search", word, "--json"], env_off))
            add("search, CLI through the server", run_ms([*base, "search", word, "--json"], env_on))
            add("search, in-process (library, warm store)", ms(partial(search, warm, word)))
            add("context, CLI without the server", run_ms([*base, "context"], env_off))
            add("context, CLI through the server", run_ms([*base, "context"], env_on))
            add("context, in-process (library, warm store)", ms(partial(card_for, warm, cwd=CODE)))
        write = ["remember", "--layer", "semantic", "--topic", "bench"]
        for n in range(rounds):  # writes, each way; then searches that follow a write
            word = WORDS[n % len(WORDS)]
            text = f"Bench fact {n} {time.time_ns()} about the {word} path"
            add("remember, CLI without the server", run_ms([*base, *write, text], env_off))
            add("remember, CLI through the server", run_ms([*base, *write, text + " again"], env_on))
        for n in range(rounds):
            word = WORDS[n % len(WORDS)]
            run([*base, *write, f"Agent note {n} {time.time_ns()} on {word}"], env_on)
            add("search right after a remember, both through the server",
                run_ms([*base, "search", word, "--json"], env_on))
    finally:
        warm.close()
        stop_server(root)
        proc.wait(timeout=60)
        shutil.rmtree(root, ignore_errors=True)
    return got


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,50000", help="comma-separated entry counts")
    parser.add_argument("--rounds", type=int, default=25, help="timed calls of each kind per size")
    parser.add_argument("--quick", action="store_true", help="1,000 entries, 8 rounds")
    args = parser.parse_args()
    subprocess.run(["git", "init", "-q", str(CODE)], check=True)
    subprocess.run(["git", "-C", str(CODE), "remote", "add", "origin", "git@example.com:acme/shop.git"],
                   check=True)
    os.chdir(CODE)
    time.sleep(2.5)  # its files settle: a warm server trusts git config files older than 2 s
    sizes = [1000] if args.quick else [int(s) for s in args.sizes.split(",") if s.strip()]
    rounds = 8 if args.quick else args.rounds
    results = {}
    for size in sizes:
        print(f"measuring {size:,} entries ...", file=sys.stderr, flush=True)
        results[size] = measure(size, rounds)
    shutil.rmtree(CODE, ignore_errors=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.2f}, {rounds} rounds")
    print("| median (p90) | " + " | ".join(f"{s:,} entries" for s in sizes) + " |")
    print("|---" * (len(sizes) + 1) + "|")
    for name in results[sizes[0]]:
        cells = []
        for size in sizes:
            values = sorted(results[size][name])
            p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
            cells.append(f"{statistics.median(values):.1f} ms ({p90:.1f})")
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
