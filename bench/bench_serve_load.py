"""The warm server under load: one client against eight at once, and searches while the server's
own scheduled sync waits on a slow remote, with `git grep -l -i -w WORD` over the same store as
the reference of the same run.

One store (synthetic entries, one commit, search index built) with a loopback HTTP remote
(tests/gitserver.py) that holds every request `--remote-delay` seconds, so each sync takes
several seconds (its durations are printed, from the server's log). The server runs its sync
every `--sync-every` minutes. Measured, interleaved where they can be: `git grep`; CLI `search`
through the server from 1 client and from 8 clients at once (each call's wall time, calls per
second, calls not answered by the server); then CLI `search` calls made while a sync is under way
(the remote is holding one of its requests when the call starts and still when it ends), against
searches in the same run between syncs. A search during a sync waited for it before calls ran
side by side.

    .venv/bin/python bench/bench_serve_load.py [--entries 50000] [--rounds 20] [--remote-delay 2]
    .venv/bin/python bench/bench_serve_load.py --quick      # 1,000 entries, 6 rounds
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from benchutil import GITMEM, percentile  # noqa: E402
from synthstore import SynthConfig, build_store  # noqa: E402

from gitmem.serve.control import ping, stop_server  # noqa: E402
from gitserver import Gate, serve_git_http  # noqa: E402

WORDS = ["deploy", "rollback", "postgres", "latency", "cache", "schema", "token", "migration",
         "timeout", "staging", "replica", "webhook"]
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "b@x"}
ANSWERED = "answered by the gitmem server"


class Watched(Gate):
    """A slow remote that also says whether it is holding a request right now."""

    holding = 0
    _count = threading.Lock()

    def pass_through(self) -> None:
        with self._count:
            Watched.holding += 1
        try:
            super().pass_through()
        finally:
            with self._count:
                Watched.holding -= 1


def make_store(root: Path, size: int, env: dict[str, str]) -> None:
    subprocess.run([*GITMEM, "--root", str(root), "init"], check=True, capture_output=True, env=env)
    build_store(root, SynthConfig(entries=size))
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "bench data"], cwd=root, check=True, env=env)
    subprocess.run([*GITMEM, "--root", str(root), "reindex"], check=True, capture_output=True, env=env)


def search_ms(root: Path, word: str, env: dict[str, str], cwd: Path) -> tuple[float, bool]:
    """Wall time of one CLI search through the server (ms), and whether the server answered it."""
    start = time.perf_counter()
    done = subprocess.run([*GITMEM, "-v", "--root", str(root), "search", word, "--json"],
                          capture_output=True, text=True, env=env, cwd=cwd, check=False)
    took = (time.perf_counter() - start) * 1000
    return took, done.returncode in (0, 1) and ANSWERED in done.stderr


def clients_at_once(root: Path, env: dict[str, str], cwd: Path, clients: int,
                    rounds: int) -> tuple[list[float], int, float]:
    """Each call's wall time, the calls the server did not answer, and calls per second."""
    times: list[float] = []
    misses = [0]
    guard = threading.Lock()
    start = threading.Barrier(clients)

    def client(n: int) -> None:
        start.wait()
        for i in range(rounds):
            took, ok = search_ms(root, WORDS[(n + i) % len(WORDS)], env, cwd)
            with guard:
                times.append(took)
                misses[0] += 0 if ok else 1

    began = time.perf_counter()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times, misses[0], len(times) / (time.perf_counter() - began)


def sync_seconds(root: Path) -> list[float]:
    """How long each scheduled sync took, from the server's lines in logs/memory.log."""
    found = []
    for line in (root / "logs" / "memory.log").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("event") == "serve-job" and record.get("job") == "sync":
            found.append(float(record["seconds"]))
    return found


def during_syncs(root: Path, env: dict[str, str], cwd: Path, wanted: int,
                 limit: float) -> tuple[list[float], list[float], int]:
    """Searches back to back until `wanted` fell inside a sync (the remote held a request at
    their start and at their end) and two syncs finished: (those, the searches wholly between
    syncs, calls not answered by the server)."""
    inside: list[float] = []
    between: list[float] = []
    misses = 0
    deadline = time.monotonic() + limit
    n = 0
    while (len(inside) < wanted or len(sync_seconds(root)) < 2) and time.monotonic() < deadline:
        busy = Watched.holding > 0
        took, ok = search_ms(root, WORDS[n % len(WORDS)], env, cwd)
        n += 1
        misses += 0 if ok else 1
        if busy and Watched.holding > 0:
            inside.append(took)
        elif not busy and Watched.holding == 0:
            between.append(took)
    return inside, between, misses


def line(name: str, values: list[float]) -> str:
    return (f"| {name} | {len(values)} | {percentile(values, 0.5):.1f} ms | "
            f"{percentile(values, 0.9):.1f} ms |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=20, help="searches per client")
    parser.add_argument("--remote-delay", type=float, default=2.0, help="seconds the remote holds each request")
    parser.add_argument("--sync-every", type=float, default=0.05, help="the server's sync period, minutes")
    parser.add_argument("--quick", action="store_true", help="1,000 entries, 6 rounds")
    args = parser.parse_args()
    entries, rounds = (1000, 6) if args.quick else (args.entries, args.rounds)
    work = Path(tempfile.mkdtemp(prefix="gitmem-bench-load-"))
    root, code, srv = work / "store", work / "code", work / "srv"
    env_off = {**os.environ, **GIT_ENV, "GITMEM_SERVE": "off"}
    env_on = {k: v for k, v in {**os.environ, **GIT_ENV}.items() if k != "GITMEM_SERVE"}
    for folder in (code, srv):
        folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(code)], check=True)
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(srv / "mem.git")], check=True)
    began = time.perf_counter()
    make_store(root, entries, env_off)
    built = time.perf_counter() - began
    gate = Watched.slow(0.0)
    proc = None
    try:
        with serve_git_http(srv, gate=gate) as base:
            subprocess.run([*GITMEM, "--root", str(root), "remote", "set", f"{base}mem.git"], check=True,
                           capture_output=True, env=env_off)
            subprocess.run([*GITMEM, "--root", str(root), "sync"], check=True, capture_output=True, env=env_off)
            proc = subprocess.Popen([*GITMEM, "--root", str(root), "serve", "--sync-every", "0",
                                     "--history-every", "0", "--consolidate-every", "0"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env_on)
            while ping(root) is None:
                time.sleep(0.05)
            for word in WORDS:  # warm-up: the server's first calls, the page cache, the index
                search_ms(root, word, env_on, code)
            grep: list[float] = []
            for n in range(rounds):
                start = time.perf_counter()
                subprocess.run(["git", "-C", str(root), "grep", "-l", "-i", "-w", WORDS[n % len(WORDS)]],
                               capture_output=True, check=False)
                grep.append((time.perf_counter() - start) * 1000)
            one, one_miss, one_rate = clients_at_once(root, env_on, code, 1, rounds)
            eight, eight_miss, eight_rate = clients_at_once(root, env_on, code, 8, rounds)
            stop_server(root)
            proc.wait(timeout=60)
            gate.delay = args.remote_delay
            proc = subprocess.Popen([*GITMEM, "--root", str(root), "serve", "--sync-every", f"{args.sync_every:g}",
                                     "--history-every", "0", "--consolidate-every", "0"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env_on)
            while ping(root) is None:
                time.sleep(0.05)
            search_ms(root, WORDS[0], env_on, code)
            inside, between, sync_miss = during_syncs(root, env_on, code, rounds * 2, limit=600.0)
            syncs = sync_seconds(root)
    finally:
        if proc is not None and proc.poll() is None:
            stop_server(root)
            proc.wait(timeout=60)
    grep_after = []
    for n in range(rounds):
        start = time.perf_counter()
        subprocess.run(["git", "-C", str(root), "grep", "-l", "-i", "-w", WORDS[n % len(WORDS)]],
                       capture_output=True, check=False)
        grep_after.append((time.perf_counter() - start) * 1000)
    shutil.rmtree(work, ignore_errors=True)
    print(f"{entries:,} entries (built in {built:.0f} s); the remote holds each request "
          f"{args.remote_delay:g} s; the server syncs every {args.sync_every * 60:g} s")
    print()
    print("| CLI `search` through the server | calls | p50 | p90 |")
    print("|---|---:|---:|---:|")
    print(line("`git grep -l -i -w WORD` (reference, before)", grep))
    print(line("1 client", one))
    print(line("8 clients at once, each call", eight))
    print(line("during a scheduled sync", inside))
    print(line("between syncs (same run)", between))
    print(line("`git grep -l -i -w WORD` (reference, after)", grep_after))
    print()
    print(f"calls per second: 1 client {one_rate:.1f}, 8 clients {eight_rate:.1f}; "
          f"calls not answered by the server: {one_miss + eight_miss + sync_miss}")
    print(f"scheduled syncs: {len(syncs)}, seconds each: median {percentile(syncs, 0.5):.1f}, "
          f"shortest {min(syncs):.1f}, longest {max(syncs):.1f}" if syncs else "scheduled syncs: none finished")
    return 0


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
