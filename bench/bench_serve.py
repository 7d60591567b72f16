"""The warm server: CLI calls through the store's server against the same calls in their own
process, the library in-process, and `git grep -l -i -w WORD` over the same store as the reference.

The server is the one a new user gets: nobody starts it; the first call that finds none starts it
in the background (the default path), and the timed calls come after it.

Every call runs from inside a code repository (a fresh `git init` with an origin), as an agent's
does. For each size: build a store (synthetic entries, one commit, search index built), then time, in
one run and interleaved per round so the machine's load falls on every line alike:
`git grep`, CLI `search` without the server (GITMEM_SERVE=off), CLI `search` through the server,
in-process search (library, one warm store), CLI `context` both ways and in-process (the card the
server builds, without the client), CLI `remember` through the server (one after another: the
default path), then without the server and through it in turn (the server catching up with another
process's commit each time); then 1 and 8 clients calling
`search` at once through the server (errors, median per call, calls per second), after a warm-up
round of eight at once (each opens the set of parts the server then keeps for it).

    .venv/bin/python bench/bench_serve.py [--sizes 10000,50000] [--rounds 25]
    .venv/bin/python bench/bench_serve.py --quick       # 1,000 entries, 8 rounds: a smoke run
    .venv/bin/python bench/bench_serve.py --keep DIR    # build each size's store once, in DIR/<size>

With --keep, a store found in DIR/<size> is used as it is (its own earlier writes included: each
run writes four entries per round into a topic of its own) and left there afterwards; building 200,000
entries takes minutes.
"""

from __future__ import annotations

import argparse
import os
import shutil
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

from benchutil import GITMEM, print_medians  # noqa: E402
from synthstore import SynthConfig, build_store  # noqa: E402

from gitmem.serve.control import ping, stop_server  # noqa: E402

WORDS = ["deploy", "rollback", "postgres", "latency", "cache", "schema", "token", "migration",
         "timeout", "staging", "replica", "webhook"]
CODE = Path(tempfile.mkdtemp(prefix="gitmem-bench-code-"))  # where every call runs from
LOAD_AT_START = float("nan")
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


def make_store(size: int, keep: Path | None = None) -> Path:
    if keep is not None and (keep / str(size) / "memory.json").is_file():
        return keep / str(size)
    if keep is not None:
        root = keep / str(size)
        root.mkdir(parents=True)
    else:
        root = Path(tempfile.mkdtemp(prefix=f"gitmem-bench-serve-{size}-"))
    env = {**os.environ, **GIT_ENV, "GITMEM_SERVE": "off"}
    subprocess.run([*GITMEM, "--root", str(root), "init"], check=True, capture_output=True, env=env)
    build_store(root, SynthConfig(entries=size))
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "bench data"], cwd=root, check=True, env=env)
    subprocess.run([*GITMEM, "--root", str(root), "reindex"], check=True, capture_output=True, env=env)
    return root



def measure(size: int, rounds: int, keep: Path | None = None) -> dict[str, list[float]]:
    root = make_store(size, keep)
    env_off = {**os.environ, **GIT_ENV, "GITMEM_SERVE": "off"}
    env_on = {k: v for k, v in {**os.environ, **GIT_ENV}.items() if k != "GITMEM_SERVE"}
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
    run([*base, "status"], env_on)  # the default path: this call finds no server and starts one
    deadline = time.monotonic() + 120
    while ping(root) is None:
        if time.monotonic() > deadline:
            raise SystemExit("no server was started by the first call")
        time.sleep(0.05)
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
        # A topic of this run's own, so a kept store's earlier runs do not make the file written longer.
        write = ["remember", "--layer", "semantic", "--topic", f"bench-{time.strftime('%Y%m%d%H%M%S')}"]
        for n in range(rounds):  # the default path: every write goes through the server
            word = WORDS[n % len(WORDS)]
            text = f"Bench fact {n} {time.time_ns()} about the {word} path"
            add("remember, CLI through the server", run_ms([*base, *write, text], env_on))
        for n in range(rounds):  # each way in turn: the server first catches up with the other's commit
            word = WORDS[n % len(WORDS)]
            text = f"Bench fact {n} {time.time_ns()} on the {word} path"
            add("remember, CLI without the server", run_ms([*base, *write, text], env_off))
            add("remember through the server, right after a write by another process",
                run_ms([*base, *write, text + " again"], env_on))
        for n in range(rounds):
            word = WORDS[n % len(WORDS)]
            run([*base, *write, f"Agent note {n} {time.time_ns()} on {word}"], env_on)
            add("search right after a remember, both through the server",
                run_ms([*base, "search", word, "--json"], env_on))
        # Warm-up: the first calls at once each open a set of parts of their own (0.4 s at
        # 200,000 entries), which the server keeps (up to eight); the timed rounds find them open.
        concurrent(base, env_on, 8, 1)
        for clients in (1, 8):
            calls, errors, took = concurrent(base, env_on, clients, rounds)
            got[f"search, {clients} client(s) at once: median per call"] = calls
            got[f"search, {clients} client(s) at once: errors"] = [float(errors)]
            got[f"search, {clients} client(s) at once: calls per second"] = [len(calls) / took * 1000]
    finally:
        warm.close()
        stop_server(root)
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return got


def concurrent(base: list[str], env: dict[str, str], clients: int, rounds: int) -> tuple[list[float], int, float]:
    """`clients` threads each running `rounds` CLI searches through the server back to back:
    each call's wall time, the calls that failed or were not answered by the server, and the
    whole run's wall time (ms)."""
    import threading

    times: list[float] = []
    errors = [0]
    guard = threading.Lock()

    def client(n: int) -> None:
        for i in range(rounds):
            word = WORDS[(n + i) % len(WORDS)]
            start = time.perf_counter()
            done = subprocess.run([*base, "-v", "search", word, "--json"], capture_output=True,
                                  text=True, env=env, cwd=CODE, check=False)
            elapsed = (time.perf_counter() - start) * 1000
            with guard:
                times.append(elapsed)
                if done.returncode not in (0, 1) or "answered by the gitmem server" not in done.stderr:
                    errors[0] += 1

    began = time.perf_counter()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times, errors[0], (time.perf_counter() - began) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,50000", help="comma-separated entry counts")
    parser.add_argument("--rounds", type=int, default=25, help="timed calls of each kind per size")
    parser.add_argument("--quick", action="store_true", help="1,000 entries, 8 rounds")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="use (or build and keep) each size's store in DIR/<size>")
    args = parser.parse_args()
    subprocess.run(["git", "init", "-q", str(CODE)], check=True)
    subprocess.run(["git", "-C", str(CODE), "remote", "add", "origin", "git@example.com:acme/shop.git"],
                   check=True)
    os.chdir(CODE)
    time.sleep(2.5)  # its files settle: a warm server trusts git config files older than 2 s
    global LOAD_AT_START
    LOAD_AT_START = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    sizes = [1000] if args.quick else [int(s) for s in args.sizes.split(",") if s.strip()]
    rounds = 8 if args.quick else args.rounds
    results = {}
    for size in sizes:
        print(f"measuring {size:,} entries ...", file=sys.stderr, flush=True)
        results[size] = measure(size, rounds, args.keep.resolve() if args.keep else None)
    shutil.rmtree(CODE, ignore_errors=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {LOAD_AT_START:.2f} at the "
          f"start and {load:.2f} at the end, {rounds} rounds")
    print_medians(results)
    return 0


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
