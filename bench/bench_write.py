"""Write speed: median wall time of `remember` with 1,000 / 10,000 / 50,000 entries in the store.

Prints, for each size: the library call (incl. commit), the CLI process, and reference lines
measured in the same run (python start, heavy imports, a bare pygit2 commit of one staged file,
`gitmem --help`).

    .venv/bin/python bench/bench_write.py [--sizes 1000,10000,50000] [--writes 30] [--cli-writes 10]
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

from gitmem.store.store import Store  # noqa: E402
from gitmem.verbs.entries import remember  # noqa: E402

LAYERS = ("semantic", "procedural", "learnings", "episodic", "decisions")
ABBR = {"semantic": "sem", "procedural": "pro", "learnings": "lrn", "episodic": "epi", "decisions": "dec"}
PER_FILE = 20


def build_store(root: Path, entries: int) -> None:
    """A store with `entries` entries in ~20-entry topic files over 5 layers, global + 4 workspaces."""
    Store(root).init()
    scopes = ["global", "alpha", "beta", "gamma", "delta"]
    counters: dict[tuple[str, str], int] = {}
    written = 0
    file_no = 0
    while written < entries:
        scope = scopes[file_no % len(scopes)]
        layer = LAYERS[(file_no // len(scopes)) % len(LAYERS)]
        base = "global" if scope == "global" else f"workspaces/{scope}"
        path = root / base / layer / f"topic-{file_no:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [f"---\ntopic: topic {file_no}\nlayer: {layer}\nscope: {scope}\n---\n# topic {file_no}\n"]
        for _ in range(min(PER_FILE, entries - written)):
            number = counters.get((scope, layer), 0) + 1
            counters[(scope, layer)] = number
            zh = "部署流程需要先检查数据库端口" if written % 10 == 0 else ""
            lines.append(
                f"## Fact {written} about subsystem {file_no}\n"
                f"Entry {written} explains how component {file_no} handles case {number}. {zh}\n\n"
                f"**Id:** {scope}-{ABBR[layer]}-{number:04d}\n**Importance:** normal\n"
                f"**Volatility:** normal\n**Created:** 2026-11-01\n**Verified:** 2026-11-01\n"
            )
            written += 1
        path.write_text("\n".join(lines), encoding="utf-8")
        file_no += 1
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "b@x"}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "bench data"], cwd=root, check=True, env=env)


def timed(func: object, repeat: int) -> list[float]:
    samples = []
    for n in range(repeat):
        start = time.perf_counter()
        func(n)  # type: ignore[operator]
        samples.append((time.perf_counter() - start) * 1000)
    return samples


# The console script users run (falls back to `python -m gitmem` outside a virtualenv).
_SCRIPT = Path(sys.executable).with_name("gitmem")
GITMEM = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "gitmem"]


def run_cli(args: list[str], root: Path) -> None:
    """One `gitmem` process doing the write itself (what this bench measures; the warm server,
    on by default since, is bench_serve.py's)."""
    subprocess.run([*GITMEM, "--root", str(root), *args], check=True, capture_output=True,
                   env={**os.environ, "GITMEM_SERVE": "off"})


def pygit2_reference(root: Path, repeat: int) -> list[float]:
    """A bare pygit2 commit of one explicitly staged file in the same repository."""
    import pygit2

    repo = pygit2.Repository(str(root))
    target = root / "global" / "bench-reference.txt"
    sig = pygit2.Signature("bench", "b@x")

    def one(n: int) -> None:
        target.write_text(f"reference {n}\n")
        repo.index.read()
        repo.index.add("global/bench-reference.txt")
        repo.index.write()
        tree = repo.index.write_tree()
        repo.create_commit("HEAD", sig, sig, f"ref {n}", tree, [repo.head.target])

    return timed(one, repeat)


def fmt(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"median {statistics.median(samples):7.1f} ms   p95 {p95:7.1f} ms   (n={len(samples)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--writes", type=int, default=30)
    parser.add_argument("--cli-writes", type=int, default=10)
    args = parser.parse_args()
    env_cmd = [sys.executable, "-c", "pass"]
    print(f"python: {sys.version.split()[0]}  cores: {os.cpu_count()}")
    print(f"reference  python -c pass            {fmt(timed(lambda n: subprocess.run(env_cmd, check=True), 10))}")
    imports = "import pygit2, whoosh, click, markdown_it, frontmatter"
    print(f"reference  python -c '{imports}'  {fmt(timed(lambda n: subprocess.run([sys.executable, '-c', imports], check=True), 10))}")
    print(f"gitmem --help (process)              {fmt(timed(lambda n: subprocess.run([*GITMEM, '--help'], check=True, capture_output=True), 20))}")
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            measure_size(Path(tmp) / "store", size, args.writes, args.cli_writes)


def measure_size(root: Path, size: int, writes: int, cli_writes: int) -> None:
    """Build a store of `size` entries and time library and CLI writes into it."""
    start = time.perf_counter()
    build_store(root, size)
    store = Store(root)
    remember(store, "warm-up write builds the catalog", "semantic", topic="warm")
    print(f"\n== {size:,} entries (setup incl. first catalog build {time.perf_counter() - start:.1f} s)")
    lib = timed(lambda n: remember(store, f"library write {n} about the deploy pipeline", "semantic",
                                   topic=f"bench-{n % 3}"), writes)
    print(f"remember, library call (incl. commit)  {fmt(lib)}")
    cli = timed(lambda n: run_cli(["remember", f"cli write {n}", "--layer", "semantic", "--topic", "bench-cli"], root),
                cli_writes)
    print(f"remember, CLI process                  {fmt(cli)}")
    print(f"reference: bare pygit2 commit, 1 file  {fmt(pygit2_reference(root, writes))}")
    store.close()

if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
