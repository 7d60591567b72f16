"""Sync speed: `gitmem sync` receiving 1 / 100 / 1,000 new entries over loopback smart HTTP.

For each size, machine A pushes N new entries (in 20-entry topic files across five layers) to a
bare repository served by `git http-backend` on 127.0.0.1; machine B has one local entry of its
own, so its sync fetches, merges entry by entry, regenerates the layer indexes and pushes. Also
timed: B with no local change (a fast-forward), and the reference: the git binary pulling (merge)
and pushing the same change in a plain clone. Median of --runs fresh setups.

Each run is made once per transport (--transports), interleaved: `git`, the git binary (the
default wherever git is installed), and `pygit2`, libgit2 in-process (the fallback, and the only
transport before network work moved to the git binary), so both see the same load.

    .venv/bin/python bench/bench_sync.py [--sizes 1,100,1000] [--runs 5] [--transports git,pygit2]
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from gitmem.store.store import Store  # noqa: E402
from gitmem.sync.remote import init_store  # noqa: E402
from gitmem.sync.run import sync  # noqa: E402
from gitmem.verbs.entries import remember  # noqa: E402
from gitserver import serve_git_http  # noqa: E402

LAYERS = ("semantic", "procedural", "learnings", "episodic", "decisions")
ABBR = {"semantic": "sem", "procedural": "pro", "learnings": "lrn", "episodic": "epi", "decisions": "dec"}
PER_FILE = 20
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def write_entries(root: Path, count: int) -> None:
    """`count` new entries with Ids, in fresh topic files (as another machine would have written)."""
    numbers: dict[str, int] = {}
    for file_no in range((count + PER_FILE - 1) // PER_FILE):
        layer = LAYERS[file_no % len(LAYERS)]
        lines = [f"---\ntopic: incoming {file_no}\nlayer: {layer}\nscope: global\n---\n# incoming {file_no}\n"]
        for _ in range(min(PER_FILE, count - file_no * PER_FILE)):
            numbers[layer] = numbers.get(layer, 100) + 1
            lines.append(
                f"\n## Incoming fact {file_no}-{numbers[layer]} about the deploy pipeline\n"
                f"The staging cluster {numbers[layer]} runs the nightly build before release.\n\n"
                f"**Id:** global-{ABBR[layer]}-{numbers[layer]:04d}\n**Importance:** normal\n"
                f"**Volatility:** normal\n**Created:** 2026-01-02\n**Verified:** 2026-01-02\n"
            )
        path = root / "global" / layer / f"incoming-{file_no:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(lines), encoding="utf-8")


def one_run(work: Path, entries: int) -> dict[str, float]:
    """Fresh remote and machines; returns seconds for each measured step."""
    srv = work / "srv"
    srv.mkdir(parents=True)
    git(work, "init", "-q", "--bare", "-b", "main", str(srv / "mem.git"))
    out: dict[str, float] = {}
    with serve_git_http(srv) as base:
        url = base + "mem.git"
        a = Store(work / "a", cwd=work)
        init_store(a, remote=url, branch="main")
        remember(a, "Shared before the benchmark", "semantic", topic="shared")
        sync(a)
        b = Store(work / "b", cwd=work)
        init_store(b, remote=url, branch="main")
        ff = Store(work / "ff", cwd=work)
        init_store(ff, remote=url, branch="main")
        plain = work / "plain"
        git(work, "clone", "-q", url, str(plain))
        write_entries(a.root, entries)
        sync(a)

        remember(b, "A local fact on machine b", "semantic", topic="local")
        start = time.perf_counter()
        report = sync(b)
        out["merge"] = time.perf_counter() - start
        assert report.result == "merged" and report.pushed, report.result

        start = time.perf_counter()
        report = sync(ff)
        out["ff"] = time.perf_counter() - start
        assert report.result == "fast-forward", report.result

        (plain / "local.txt").write_text("a local change\n")
        git(plain, "add", "local.txt")
        git(plain, "commit", "-qm", "local")
        start = time.perf_counter()
        git(plain, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
        git(plain, "push", "-q", "origin", "HEAD:main")
        out["git"] = time.perf_counter() - start
        for store in (a, b, ff):
            store.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,100,1000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--transports", default="git,pygit2")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus; median of {args.runs} runs;"
          f" load average {os.getloadavg()[0]:.1f}")
    print(f"{'incoming':>9}  {'transport':>9}  {'sync (merge+push)':>18}  {'sync (fast-forward)':>20}"
          f"  {'git pull+push':>14}")
    transports = args.transports.split(",")
    for size in (int(s) for s in args.sizes.split(",")):
        runs: dict[str, list[dict[str, float]]] = {t: [] for t in transports}
        for _ in range(args.runs):
            for transport in transports:  # interleaved: a load spike hits both alike
                os.environ["GITMEM_GIT_TRANSPORT"] = transport
                with tempfile.TemporaryDirectory(prefix="gitmem-bench-sync-") as tmp:
                    runs[transport].append(one_run(Path(tmp), size))
        for transport in transports:
            done = runs[transport]
            med = {key: statistics.median(r[key] for r in done) * 1000 for key in done[0]}
            print(f"{size:>9}  {transport:>9}  {med['merge']:>15.0f} ms  {med['ff']:>17.0f} ms"
                  f"  {med['git']:>11.0f} ms", flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
