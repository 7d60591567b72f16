"""Writers and plain git together: 8 gitmem writers x 25 writes while plain `git commit`s land.

Each writer is its own process calling the library `remember` in a loop (a fresh Store per write,
as a CLI call has), so the store lock is contended far harder than by CLI processes, which spend
most of their time starting up. Meanwhile one process makes plain commits with the store's hooks
installed: it writes a topic file by hand, `git add`s it and runs `git commit -m`; a commit that
fails is retried (at most 5 times) and its message is kept.

Prints the wait for the store lock per write (median, p95, worst), the write time, the plain
commits' outcomes and times, and checks that everything landed: every Id printed by a writer is
in HEAD, every plain commit's file is in HEAD, the work tree is clean and `gitmem check` passes.
Reference in the same run: one writer alone (no contention).

    .venv/bin/python bench/bench_concurrency.py [--writers 8] [--writes 25] [--commits 10]
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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "b@x"}
_SCRIPT = Path(sys.executable).with_name("gitmem")
GITMEM = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "gitmem"]


def writer(root: Path, number: int, writes: int, out: Path) -> None:
    """One writer process: `writes` remembers, each timed, with the store-lock wait measured."""
    import contextlib

    from gitmem.store import base
    from gitmem.store.store import Store
    from gitmem.verbs.entries import remember

    waits: list[float] = []
    real_lock = base.store_lock

    @contextlib.contextmanager
    def timed_lock(*args, **kwargs):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        with real_lock(*args, **kwargs):
            waits.append(time.perf_counter() - start)
            yield

    base.store_lock = timed_lock
    records = []
    for n in range(writes):
        store = Store(root, cwd=root)
        before = len(waits)
        start = time.perf_counter()
        try:
            result = remember(store, f"writer {number} fact {n}: the cache node {number}-{n} warms first",
                              "semantic", topic=f"writer-{number % 4}")
            outcome = {"id": result.id, "error": None}
        except Exception as exc:  # noqa: BLE001 - reported, not raised: the run goes on
            outcome = {"id": None, "error": f"{type(exc).__name__}: {exc}"}
        finally:
            store.close()
        elapsed = time.perf_counter() - start
        records.append({**outcome, "seconds": elapsed, "wait": sum(waits[before:])})
    out.write_text(json.dumps(records))


def plain_commits(root: Path, commits: int, out: Path, pause: float) -> None:
    """Plain git commits of hand-written topic files, retried as a person would when git or the
    hook says so. A file a gitmem write committed meanwhile (as a hand edit) counts as landed."""
    env = {**os.environ, **GIT_ENV}
    records = []
    for n in range(commits):
        time.sleep(pause)
        relpath = f"global/procedural/plain-{n}.md"
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# plain {n}\n\n## Plain commit {n}\nWritten by hand and committed with git.\n",
                        encoding="utf-8")
        attempts, errors, start, landed, how = 0, [], time.perf_counter(), False, ""
        while attempts < 5 and not landed:
            attempts += 1
            add = subprocess.run(["git", "add", relpath], cwd=root, env=env, capture_output=True, text=True)
            if add.returncode != 0:
                errors.append("git add: " + " | ".join(add.stderr.strip().splitlines()))
                time.sleep(0.05)
                continue
            done = subprocess.run(["git", "commit", "-q", "-m", f"plain commit {n}"], cwd=root, env=env,
                                  capture_output=True, text=True)
            landed, how = done.returncode == 0, "git commit"
            if not landed and subprocess.run(["git", "cat-file", "-e", f"HEAD:{relpath}"], cwd=root,
                                             capture_output=True).returncode == 0:
                landed, how = True, "a gitmem write"
            elif not landed:
                errors.append(f"exit {done.returncode}: " + " | ".join(
                    (done.stderr.strip() or done.stdout.strip()).splitlines()))
        records.append({"n": n, "landed": landed, "by": how, "attempts": attempts, "errors": errors,
                        "seconds": time.perf_counter() - start})
    out.write_text(json.dumps(records))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else 0.0


def line(label: str, values: list[float]) -> str:
    if not values:
        return f"{label:<34} (none)"
    return (f"{label:<34} median {statistics.median(values) * 1000:8.1f} ms   p95 "
            f"{pct(values, 0.95) * 1000:8.1f} ms   worst {max(values) * 1000:8.1f} ms   (n={len(values)})")


def spawn(func: str, *args: str) -> subprocess.Popen[bytes]:
    code = f"import sys; sys.path.insert(0, {str(ROOT / 'bench')!r}); import bench_concurrency as b; b.{func}"
    return subprocess.Popen([sys.executable, "-c", code, *args], env={**os.environ, **GIT_ENV})


def make_store(root: Path) -> None:
    env = {**os.environ, **GIT_ENV}
    subprocess.run([*GITMEM, "--root", str(root), "init"], check=True, capture_output=True, env=env)
    subprocess.run([*GITMEM, "--root", str(root), "hooks", "install"], check=True, capture_output=True, env=env)


def run(root: Path, writers: int, writes: int, commits: int, pause: float) -> dict[str, object]:
    outs = Path(tempfile.mkdtemp(prefix="gitmem-bench-out-"))
    start = time.perf_counter()
    procs = [spawn(f"writer(__import__('pathlib').Path(sys.argv[1]), {i}, {writes}, "
                   f"__import__('pathlib').Path(sys.argv[2]))", str(root), str(outs / f"w{i}.json"))
             for i in range(writers)]
    if commits:
        procs.append(spawn(f"plain_commits(__import__('pathlib').Path(sys.argv[1]), {commits}, "
                           f"__import__('pathlib').Path(sys.argv[2]), {pause})",
                           str(root), str(outs / "plain.json")))
    for proc in procs:
        proc.wait()
    wall = time.perf_counter() - start
    records = [r for i in range(writers) for r in json.loads((outs / f"w{i}.json").read_text())]
    plain = json.loads((outs / "plain.json").read_text()) if commits else []
    shutil.rmtree(outs, ignore_errors=True)
    return {"wall": wall, "writes": records, "plain": plain}


def verify(root: Path, result: dict[str, object]) -> list[str]:
    """What did not land or is not clean (empty: everything is in HEAD and check passes)."""
    env = {**os.environ, **GIT_ENV}
    problems = []
    head = subprocess.run(["git", "grep", "-h", "^\\*\\*Id:\\*\\*", "HEAD", "--", "global"], cwd=root,
                          capture_output=True, text=True, env=env).stdout
    ids = {line.split("**Id:**", 1)[1].strip() for line in head.splitlines()}
    writes = result["writes"]
    assert isinstance(writes, list)
    for record in writes:
        if record["error"]:
            problems.append(f"write failed: {record['error']}")
        elif record["id"] not in ids:
            problems.append(f"{record['id']} reported but not in HEAD")
    plain = result["plain"]
    assert isinstance(plain, list)
    tracked = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True).stdout.split()
    for record in plain:
        if not record["landed"]:
            problems.append(f"plain commit {record['n']} did not land: {record['errors']}")
        elif f"global/procedural/plain-{record['n']}.md" not in tracked:
            problems.append(f"plain commit {record['n']}: file not in HEAD")
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout
    if dirty.strip():
        problems.append(f"work tree not clean: {dirty.strip()[:200]}")
    check = subprocess.run([*GITMEM, "--root", str(root), "check"], capture_output=True, text=True, env=env)
    if check.returncode != 0:
        problems.append(f"gitmem check: {check.stdout.strip()[:300]} {check.stderr.strip()[:300]}")
    return problems


def report(title: str, result: dict[str, object]) -> None:
    writes = result["writes"]
    plain = result["plain"]
    assert isinstance(writes, list) and isinstance(plain, list)
    print(f"\n== {title} (wall {result['wall']:.1f} s)")
    print(line("store-lock wait per write", [r["wait"] for r in writes]))
    print(line("write, library call", [r["seconds"] for r in writes]))
    if plain:
        landed = sum(1 for r in plain if r["landed"])
        first = sum(1 for r in plain if r["by"] == "git commit" and r["attempts"] == 1)
        print(line("plain git commit (incl. retries)", [r["seconds"] for r in plain]))
        absorbed = sum(1 for r in plain if r["landed"] and r["by"] != "git commit")
        print(f"plain commits landed: {landed}/{len(plain)} ({first} by their first `git commit`; "
              f"{absorbed} taken into a gitmem write after a failed attempt)")
        for r in plain:
            for error in r["errors"]:
                print(f"  plain {r['n']}: {error}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--writes", type=int, default=25)
    parser.add_argument("--commits", type=int, default=10)
    parser.add_argument("--pause", type=float, default=0.3, help="seconds between plain commits")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"python {sys.version.split()[0]}  cores {os.cpu_count()}  load average {load:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        alone = Path(tmp) / "alone"
        make_store(alone)
        report("reference: 1 writer alone", run(alone, 1, args.writes, 0, 0))
        root = Path(tmp) / "store"
        make_store(root)
        result = run(root, args.writers, args.writes, args.commits, args.pause)
        report(f"{args.writers} writers x {args.writes} writes + {args.commits} plain commits", result)
        problems = verify(root, result)
        if os.environ.get("BENCH_KEEP"):
            kept = Path(tempfile.mkdtemp(prefix="gitmem-bench-kept-"))
            subprocess.run(["cp", "-a", str(root), str(kept)], check=True)
            print(f"store kept at {kept}/store")
        print("everything landed, work tree clean, check passes" if not problems
              else "PROBLEMS:\n  " + "\n  ".join(problems[:20]))
        if problems:
            sys.exit(1)


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
