"""Time the git hooks on a 10,000-entry store.

    .venv/bin/python bench/bench_hooks.py [--entries 10000] [--commits 20] [--keep DIR] [--json]

Builds a store (topic files of 20 entries written directly, one `git commit`), builds the search
index, installs the hooks, then for each round:
  1. appends an entry without an Id to one topic file, stages it and runs the pre-commit hook
     alone (as git would: in the work tree, with the same environment), wall clock and CPU
     time (user + system of the hook and the git commands it runs; steady on a busy machine),
     then the commit-msg hook alone on a two-line message (the secret check of the message);
  2. commits that (hooks off) and runs the post-commit hook alone (search index update);
  3. appends an entry to another topic file and times the whole `git commit -am` with hooks.
Also times a commit that touches no memory file. Prints median and p95 in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LAYERS = ("semantic", "episodic", "procedural", "learnings", "decisions")
PER_FILE = 20
WORDS = ["cache", "queue", "deploy", "worker", "schema", "index", "token", "branch", "release",
         "rollback", "metric", "budget", "staging", "replica", "snapshot", "timeout", "retry",
         "service", "gateway", "config"]
ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def sentence(n: int) -> str:
    return " ".join(WORDS[(n * 7 + k * 3) % len(WORDS)] for k in range(12)).capitalize() + "."


def entry(layer: str, number: int, abbr: str) -> str:
    return (f"## {sentence(number)[:60]}\n{sentence(number + 1)} {sentence(number + 2)}\n\n"
            f"**Id:** global-{abbr}-{number:04d}\n**Importance:** normal\n**Volatility:** normal\n"
            f"**Created:** 2026-11-01\n**Verified:** 2026-11-20\n")


def build(root: Path, entries: int) -> list[str]:
    """An initialised store holding `entries` entries in topic files of 20; returns the files."""
    from gitmem.format import layers as L
    from gitmem.store.store import Store

    store = Store(root, cwd=root)
    store.init()
    files: list[str] = []
    made = 0
    counters = dict.fromkeys(LAYERS, 0)
    while made < entries:
        layer = LAYERS[len(files) % len(LAYERS)]
        relpath = L.topic_path("global", layer, f"topic-{len(files):04d}")
        chunk = []
        for _ in range(min(PER_FILE, entries - made)):
            counters[layer] += 1
            chunk.append(entry(layer, counters[layer], L.LAYERS[layer].abbr))
            made += 1
        text = f"---\ntopic: topic {len(files)}\n---\n# topic {len(files)}\n\n" + "\n".join(chunk)
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        (root / relpath).write_text(text, encoding="utf-8")
        files.append(relpath)
    store.catalog.rebuild(files, store.read_file)
    store.regenerate_layer_indexes(files)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"{entries} entries")
    store.catch_up_catalog()
    store.close()
    return files


def git(root: Path, *args: str, hooks: bool = True) -> float:
    env = {**os.environ, **ENV, **({} if hooks else {"GITMEM_HOOKS": "0"})}
    start = time.perf_counter()
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return (time.perf_counter() - start) * 1000


def cpu_seconds() -> float:
    """User + system time of every finished child process so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_hook(root: Path, name: str, cpu: list[float] | None = None, *args: str) -> float:
    """Wall-clock ms of one hook run (its CPU ms, children included, appended to `cpu`)."""
    cpu_before, start = cpu_seconds(), time.perf_counter()
    done = subprocess.run([str(root / ".git" / "hooks" / name), *args], cwd=root, capture_output=True,
                          env={**os.environ, **ENV})
    elapsed = (time.perf_counter() - start) * 1000
    if cpu is not None:
        cpu.append((cpu_seconds() - cpu_before) * 1000)
    if done.returncode != 0:
        raise SystemExit(f"{name} failed: {done.stderr.decode()}")
    return elapsed


def append(root: Path, relpath: str, n: int) -> None:
    with open(root / relpath, "a", encoding="utf-8") as handle:
        handle.write(f"\n## Bench entry {n}\n{sentence(n + 100)}\n")


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"median_ms": round(statistics.median(ordered), 1), "p95_ms": round(p95, 1),
            "min_ms": round(ordered[0], 1), "n": len(ordered)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--commits", type=int, default=20)
    parser.add_argument("--keep", type=Path, help="Build the store here and keep it.")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    root = (args.keep or Path(tempfile.mkdtemp(prefix="gitmem-bench-hooks-"))) / "store"

    from gitmem.githooks.install import install
    from gitmem.search.index import SearchIndex

    started = time.perf_counter()
    files = build(root, args.entries)
    SearchIndex(root).rebuild()
    install(root)
    built = time.perf_counter() - started

    pre: list[float] = []
    pre_cpu: list[float] = []
    msg: list[float] = []
    msg_cpu: list[float] = []
    post: list[float] = []
    whole: list[float] = []
    plain: list[float] = []
    for n in range(args.commits):
        target = files[(n * 37) % len(files)]
        append(root, target, n)
        git(root, "add", target)
        pre.append(run_hook(root, "pre-commit", pre_cpu))
        (root / ".git" / "BENCH_MSG").write_text(f"bench {n}\n\nAppended an entry to {target}.\n")
        msg.append(run_hook(root, "commit-msg", msg_cpu, ".git/BENCH_MSG"))
        git(root, "commit", "-q", "-m", f"bench {n}", hooks=False)
        post.append(run_hook(root, "post-commit"))
        append(root, files[(n * 53 + 11) % len(files)], n + 1000)
        whole.append(git(root, "commit", "-q", "-am", f"bench whole {n}"))
        (root / "notes.txt").write_text(f"{n}\n")
        git(root, "add", "notes.txt")
        plain.append(git(root, "commit", "-q", "-m", f"plain {n}"))

    bare = []
    for _ in range(10):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append((time.perf_counter() - start) * 1000)
    result = {
        "entries": args.entries, "topic_files": len(files), "build_seconds": round(built, 1),
        "pre_commit_hook": summary(pre), "pre_commit_hook_cpu": summary(pre_cpu),
        "commit_msg_hook": summary(msg), "commit_msg_hook_cpu": summary(msg_cpu),
        "post_commit_hook": summary(post),
        "git_commit_with_hooks": summary(whole), "git_commit_no_memory_files": summary(plain),
        "python": sys.version.split()[0], "reference_python_c_pass": summary(bare),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"store: {args.entries} entries in {len(files)} topic files at {root} (built in {built:.1f}s)")
    for key in ("pre_commit_hook", "pre_commit_hook_cpu", "commit_msg_hook", "commit_msg_hook_cpu",
                "post_commit_hook", "git_commit_with_hooks",
                "git_commit_no_memory_files", "reference_python_c_pass"):
        s = result[key]
        assert isinstance(s, dict)
        print(f"{key:28} median {s['median_ms']:7.1f} ms   p95 {s['p95_ms']:7.1f} ms   "
              f"min {s['min_ms']:7.1f} ms   (n={s['n']})")


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
