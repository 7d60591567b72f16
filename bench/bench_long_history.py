"""Entry history after 100,000 commits: `gitmem why ID`, `gitmem log ID` and `gitmem as-of DATE
show ID` on a store written every ten minutes for about two years.

    .venv/bin/python bench/bench_long_history.py [--commits 100000] [--stages 2] [--runs 5]

Builds the store with `git fast-import` on top of `gitmem init`: 400 topic files holding 3,200
entries, one entry changed per commit (its body and Verified day; the entries drawn with a
Zipf-like skew, so some have hundreds of versions), and every 250th commit moves the entry to
another topic file. The history is written in `--stages` parts; after each part it times, as CLI
processes, `why` and `log` of a typical entry and of the most changed one, `as-of` a day early in
the history, and as the reference of the same run `git log --oneline -- PATH` of the typical
entry's file, and `gitmem show ID` (a CLI process that opens the store: the floor under the
others). Cold means the history index (state/history.sqlite) deleted first, so the call reads
the whole history into it; warm means it is current; "after one commit" means one commit made
since the last call. Then a second machine: `gitmem init --remote` (a clone) and its first and
second `gitmem sync`, against `git clone --no-local` of the same remote (a pack sent, as over the
network); and `gitmem history` reading this
long history as a code repository (its first pass records the newest 1,000 commits; then a pass
with nothing new). How they grow: a cold call reads every commit once (linear in history); a
warm one reads no commit and costs the entry's own versions (linear in how often that entry
changed, not in history); after N new commits a call reads those N only.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchutil import GITMEM, median_ms, print_result  # noqa: E402

from gitmem.store.store import Store  # noqa: E402

ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
LAYERS = {"semantic": "sem", "procedural": "pro", "learnings": "lrn", "decisions": "dec"}
FILES, ENTRIES = 400, 3200
START = 1_672_531_200  # 2023-01-01
STEP = 600  # a write every ten minutes
MOVE_EVERY = 250


class History:
    """The store's topic files as the commits change them."""

    def __init__(self, seed: int = 5) -> None:
        self.rng = random.Random(seed)
        self.ids = [f"global-{LAYERS[layer]}-{n + 1:04d}" for layer in LAYERS for n in range(ENTRIES // 4)]
        self.layer = {entry_id: layer for layer in LAYERS for entry_id in self.ids
                      if entry_id.split("-")[1] == LAYERS[layer]}
        self.revision = dict.fromkeys(self.ids, 0)
        self.verified = dict.fromkeys(self.ids, "2023-01-01")
        per_layer = FILES // len(LAYERS)
        self.files: dict[str, list[str]] = {}
        self.home: dict[str, str] = {}
        for entry_id in self.ids:
            layer = self.layer[entry_id]
            path = f"global/{layer}/topic-{int(entry_id[-4:]) % per_layer:03d}.md"
            self.files.setdefault(path, []).append(entry_id)
            self.home[entry_id] = path
        weights = [1.0 / (rank + 10) for rank in range(len(self.ids))]
        order = list(self.ids)
        self.rng.shuffle(order)
        self.draw = lambda: self.rng.choices(order, cum_weights=_cumulative(weights))[0]

    def render(self, path: str) -> bytes:
        layer = path.split("/")[1]
        lines = ["---", f"topic: {Path(path).stem}", f"layer: {layer}", "scope: global", "---",
                 f"# {Path(path).stem}", ""]
        for entry_id in self.files[path]:
            lines += [f"## Note {entry_id}", f"The {entry_id} setting is at revision "
                      f"{self.revision[entry_id]}; keep it in step with the staging cluster.", "",
                      f"**Id:** {entry_id}", "**Created:** 2023-01-01",
                      f"**Verified:** {self.verified[entry_id]}", ""]
        return "\n".join(lines).encode()

    def step(self, n: int, when: int) -> tuple[str, list[str]]:
        """Change one entry; the commit message and the files it rewrote."""
        entry_id = self.draw()
        self.revision[entry_id] += 1
        self.verified[entry_id] = time.strftime("%Y-%m-%d", time.gmtime(when))
        touched = [self.home[entry_id]]
        if n % MOVE_EVERY == 0:
            layer = self.layer[entry_id]
            target = f"global/{layer}/topic-{self.rng.randrange(FILES // len(LAYERS)):03d}.md"
            if target != touched[0]:
                self.files[touched[0]].remove(entry_id)
                self.files[target].append(entry_id)
                self.home[entry_id] = target
                touched.append(target)
        return f"remember: {entry_id} revision {self.revision[entry_id]}", touched


def _cumulative(weights: list[float]) -> list[float]:
    total, out = 0.0, []
    for weight in weights:
        total += weight
        out.append(total)
    return out


def _stream(history: History, first: int, count: int, parent: str) -> Iterator[bytes]:
    """fast-import commands for commits first .. first+count-1 on top of `parent`."""
    for n in range(first, first + count):
        when = START + n * STEP
        message, touched = history.step(n, when)
        data = message.encode() + b"\n"
        yield (f"commit refs/heads/main\ncommitter bench <bench@example.com> {when} +0000\n"
               f"data {len(data)}\n").encode() + data
        if n == first:
            yield f"from {parent}\n".encode()
        for path in touched:
            content = history.render(path)
            yield f"M 100644 inline {path}\ndata {len(content)}\n".encode() + content + b"\n"
        yield b"\n"


def extend(root: Path, history: History, first: int, count: int) -> None:
    """Append `count` commits to the store's branch and check them out."""
    parent = _git(root, "rev-parse", "HEAD")
    proc = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=root, stdin=subprocess.PIPE, env=ENV)
    assert proc.stdin is not None
    for chunk in _stream(history, first, count, parent):
        proc.stdin.write(chunk)
    proc.stdin.close()
    if proc.wait() != 0:
        raise SystemExit("git fast-import failed")
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=root, check=True, env=ENV)


def build(root: Path, history: History, commits: int) -> None:
    """A store with every topic file in one first commit, then `commits` commits."""
    store = Store(root, cwd=root.parent)
    store.init()
    store.close()
    for path in history.files:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(history.render(path))
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "remember: the topic files")
    if commits:
        extend(root, history, 0, commits)


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, env=ENV, capture_output=True,
                          text=True).stdout.strip()


def forget_index(root: Path) -> None:
    """Delete the history index (its write-ahead log too): the next call reads all history."""
    for name in ("history.sqlite", "history.sqlite-wal", "history.sqlite-shm"):
        (root / "state" / name).unlink(missing_ok=True)


def timed(args: list[str], cwd: Path | None = None) -> float:
    began = time.perf_counter()
    subprocess.run(args, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - began


def measure(root: Path, history: History, runs: int, made: int) -> dict[str, float]:
    """One stage's figures (milliseconds) for the history as it stands."""
    counts = {entry_id: revision for entry_id, revision in history.revision.items() if revision}
    ranked = sorted(counts, key=counts.__getitem__)
    typical, hottest = ranked[len(ranked) // 2], ranked[-1]
    gm = [*GITMEM, "--root", str(root)]
    early = time.strftime("%Y-%m-%d", time.gmtime(START + made // 10 * STEP))
    forget_index(root)
    cold = timed([*gm, "why", typical])
    figures: dict[str, list[float]] = {"why": [], "log": [], "why_hottest": [], "log_hottest": [],
                                       "as_of_show": [], "git_log_path": [], "show": []}
    for _ in range(runs):
        figures["why"].append(timed([*gm, "why", typical]))
        figures["log"].append(timed([*gm, "log", typical]))
        figures["why_hottest"].append(timed([*gm, "why", hottest]))
        figures["log_hottest"].append(timed([*gm, "log", hottest]))
        figures["as_of_show"].append(timed([*gm, "as-of", early, "show", typical]))
        figures["git_log_path"].append(timed(["git", "log", "--oneline", "--", history.home[typical]],
                                             cwd=root))
        figures["show"].append(timed([*gm, "show", typical]))
    after_one = []
    for n in range(runs):
        extend(root, history, made + n, 1)
        after_one.append(timed([*gm, "why", typical]))
    forget_index(root)
    began = time.perf_counter()
    subprocess.run([*gm, "as-of", early, "show", typical], check=True, capture_output=True)
    cold_as_of = time.perf_counter() - began
    return {**fresh_clone(root), **history_ingest(root), **{"commits": made + runs, "typical_versions": counts[typical], "hottest_versions": counts[hottest],
            "why_cold_ms": round(cold * 1000, 1), "as_of_show_cold_ms": round(cold_as_of * 1000, 1),
            **{f"{name}_warm_ms": median_ms(values) for name, values in figures.items()
               if name not in ("git_log_path", "show")},
            "why_after_one_commit_ms": median_ms(after_one),
            "reference_git_log_oneline_path_ms": median_ms(figures["git_log_path"]),
            "reference_cli_show_ms": median_ms(figures["show"])}}


def fresh_clone(root: Path) -> dict[str, float]:
    """A second machine: `gitmem init --remote` (which clones) and its first `gitmem sync`, against
    `git clone` of the same remote, all from a bare copy of the store."""
    with tempfile.TemporaryDirectory() as tmp:
        remote, plain, machine = Path(tmp) / "remote.git", Path(tmp) / "plain", Path(tmp) / "machine"
        subprocess.run(["git", "clone", "-q", "--bare", str(root), str(remote)], check=True, env=ENV)
        # --no-local: the objects come as a pack, as from a real remote (a plain local clone
        # hard-links them, which no clone over the network can).
        git_clone = timed(["git", "clone", "-q", "--no-local", str(remote), str(plain)])
        init = timed([*GITMEM, "--root", str(machine), "init", "--remote", str(remote)])
        sync = timed([*GITMEM, "--root", str(machine), "sync"])
        again = timed([*GITMEM, "--root", str(machine), "sync"])
    return {"fresh_clone_init_ms": round(init * 1000, 1), "fresh_clone_first_sync_ms": round(sync * 1000, 1),
            "fresh_clone_second_sync_ms": round(again * 1000, 1),
            "reference_git_clone_ms": round(git_clone * 1000, 1)}


def history_ingest(code: Path) -> dict[str, float]:
    """`gitmem history` over this long history as a code repository, into a store of its own: the
    first pass (the newest 1,000 commits), then a pass with nothing new."""
    with tempfile.TemporaryDirectory() as tmp:
        store = [*GITMEM, "--root", str(Path(tmp) / "store")]
        subprocess.run([*store, "init"], check=True, capture_output=True, env=ENV)
        first = timed([*store, "history", "--repo", str(code), "-w", "code"])
        second = timed([*store, "history", "--repo", str(code), "-w", "code"])
    return {"history_ingest_first_pass_ms": round(first * 1000, 1),
            "history_ingest_nothing_new_ms": round(second * 1000, 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=100_000)
    parser.add_argument("--stages", type=int, default=2)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", type=Path, help="build the store here and keep it (no timing)")
    args = parser.parse_args()
    if args.keep:
        build(args.keep, History(), args.commits)
        raise SystemExit(0)  # a store to look at, no figures: nothing kept in bench/results
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        history = History()
        build(root, history, 0)
        made, stages = 0, []
        per_stage = args.commits // args.stages
        for _stage in range(args.stages):
            began = time.perf_counter()
            extend(root, history, made, per_stage - args.runs)
            made += per_stage - args.runs
            setup = time.perf_counter() - began
            result = measure(root, history, args.runs, made)
            made += args.runs
            stages.append({**result, "setup_s": round(setup, 1), "load_average": os.getloadavg()[0]})
    for stage in stages:
        print_result(stage, args.json)
        print()


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
