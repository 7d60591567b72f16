"""A kill -9 campaign over remember, forget, state, decision and sync, and the check of the store
after it: the test (tests/store/test_kill.py, a few kills) and the bench (bench/bench_kill.py,
200+ kills) run the same code.

Each operation runs in a forked child process (gitmem already imported, so the kill lands in the
operation, not in Python's start-up) and is killed with SIGKILL after a random delay drawn
uniformly over the operation's own duration (measured first). After every kill a probe write
(`remember`) must succeed. `verify` then checks that everything reported as done is in HEAD,
nothing temporary was ever committed, and `gitmem check` is clean."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmem.store.store import Store
from gitmem.sync.remote import init_store
from gitmem.sync.run import sync
from gitmem.verbs.decisions import decision
from gitmem.verbs.entries import forget, remember
from gitmem.verbs.workfiles import record_state

OPS = ("remember", "forget", "state", "decision", "sync")
WORKSPACE = "killbench"
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "b@x"}


def _perform(root: Path, op: str, arg: str) -> dict[str, Any]:
    """One operation through the library, as the CLI verb would run it."""
    store = Store(root, workspace=WORKSPACE, cwd=root)
    try:
        if op == "remember":
            return {"id": remember(store, arg, "semantic", topic=f"kill-{len(arg) % 3}").id}
        if op == "decision":
            return {"id": decision(store, arg, rationale=f"because {arg}").id}
        if op == "forget":
            return {"id": forget(store, arg).id}
        if op == "state":
            section, content = arg.split("|", 1)
            record_state(store, section, content)
            return {}
        if op == "sync":
            return {"head": sync(store).head}
        raise ValueError(op)
    finally:
        store.close()


def _child(root: str, op: str, arg: str, out: str) -> None:
    try:
        result = {"ok": True, **_perform(Path(root), op, arg)}
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    tmp = f"{out}.part"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(result, handle)
    os.replace(tmp, out)  # "printed": the parent sees the whole result or nothing


def run_op(root: Path, op: str, arg: str, kill_after: float | None, scratch: Path) -> dict[str, Any] | None:
    """Run one operation in a forked child; kill it after `kill_after` seconds (None: never).
    Returns what it reported, or None when it was killed before it reported anything."""
    out = scratch / f"{time.monotonic_ns()}.json"
    child = multiprocessing.get_context("fork").Process(target=_child, args=(str(root), op, arg, str(out)))
    child.start()
    if kill_after is not None:
        child.join(kill_after)
        if child.is_alive():
            os.kill(child.pid or 0, signal.SIGKILL)
    child.join()
    if not out.exists():
        return None
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    out.unlink()
    return result


@dataclass
class Ledger:
    """What the children reported as done: it must all be in HEAD (and on the remote)."""

    remembered: dict[str, str] = field(default_factory=dict)  # id -> text
    forgotten: set[str] = field(default_factory=set)
    states: dict[str, str] = field(default_factory=dict)  # section -> content
    synced: list[str] = field(default_factory=list)  # heads reported pushed

    def note(self, op: str, arg: str, result: dict[str, Any]) -> None:
        if op in ("remember", "decision") and result.get("id"):
            self.remembered[result["id"]] = arg
        elif op == "forget":
            self.forgotten.add(arg)
        elif op == "state":
            section, content = arg.split("|", 1)
            self.states[section] = content
        elif op == "sync" and result.get("head"):
            self.synced.append(result["head"])


@dataclass
class Campaign:
    kills: int = 0
    killed: int = 0  # operations that were still running when killed
    completed: Counter[str] = field(default_factory=Counter)
    durations: dict[str, float] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0


def make_store(base: Path) -> tuple[Path, Path]:
    """A store with a bare remote (sync has somewhere to push)."""
    remote, root = base / "remote.git", base / "store"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    store = Store(root, workspace=WORKSPACE, cwd=root)
    init_store(store, remote=str(remote), branch="main")
    store.close()
    return root, remote


def argument(op: str, n: int, ledger: Ledger, rng: random.Random) -> str | None:
    if op in ("remember", "decision"):
        return f"{op} {n}: the service {rng.randrange(10**6)} answers on port {1000 + n}"
    if op == "forget":
        live = sorted(set(ledger.remembered) - ledger.forgotten)
        return rng.choice(live) if live else None
    if op == "state":
        return f"Section {n}|state {n} of the deploy: step {rng.randrange(100)} is running"
    return ""


def measure(root: Path, scratch: Path, ledger: Ledger, rng: random.Random,
            samples_per_op: int = 3) -> dict[str, float]:
    """Median duration of each operation, undisturbed (the kill delays span it)."""
    durations = {}
    for op in OPS:
        samples: list[float] = []
        for n in range(samples_per_op):
            arg = argument(op, 10_000 + len(samples) + 10 * OPS.index(op) + n, ledger, rng)
            if arg is None:
                arg = argument("remember", 20_000 + n, ledger, rng) or ""
                op_run = "remember"
            else:
                op_run = op
            start = time.perf_counter()
            result = run_op(root, op_run, arg, None, scratch)
            samples.append(time.perf_counter() - start)
            if result and result.get("ok"):
                ledger.note(op_run, arg, result)
        durations[op] = statistics.median(samples)
    return durations


def campaign(base: Path, kills: int, seed: int = 1, progress: bool = False,
             samples_per_op: int = 3) -> tuple[Campaign, Ledger, Path, Path]:
    rng = random.Random(seed)
    root, remote = make_store(base)
    scratch = base / "results"
    scratch.mkdir()
    ledger, report = Ledger(), Campaign(kills=kills)
    started = time.perf_counter()
    report.durations = measure(root, scratch, ledger, rng, samples_per_op)
    for n in range(kills):
        op = rng.choice(OPS)
        arg = argument(op, n, ledger, rng)
        if arg is None:
            op, arg = "remember", argument("remember", n, ledger, rng) or ""
        result = run_op(root, op, arg, rng.uniform(0, report.durations[op] * 1.2), scratch)
        if result is None:
            report.killed += 1
        elif result["ok"]:
            report.completed[op] += 1
            ledger.note(op, arg, result)
        probe_text = f"probe {n} after a kill during {op}"
        probe = run_op(root, "remember", probe_text, None, scratch)
        if probe is None or not probe["ok"]:
            report.failures.append(f"probe {n} after {op}: {probe and probe.get('error')}")
        else:
            ledger.note("remember", probe_text, probe)
        if progress and (n + 1) % 25 == 0:
            print(f"  {n + 1}/{kills} kills, {report.killed} mid-operation", flush=True)
    report.seconds = time.perf_counter() - started
    return report, ledger, root, remote


def is_temp_name(path: str) -> bool:
    """A temp file of an atomic write kept beside its target (`.name.XXXX.tmp`)."""
    name = path.rsplit("/", 1)[-1]
    return name.startswith(".") and name.endswith(".tmp")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout


def verify(root: Path, remote: Path, ledger: Ledger) -> list[str]:
    """Everything reported is in HEAD, nothing temporary was ever committed, the store is clean."""
    problems = []
    files = {path: git(root, "show", f"HEAD:{path}") for path in git(root, "ls-files").split()
             if path.endswith(".md")}
    everything = "\n".join(files.values())
    for entry_id, text in ledger.remembered.items():
        if f"**Id:** {entry_id}" not in everything or text.split(":", 1)[0] not in everything:
            problems.append(f"{entry_id} was reported written but is not in HEAD")
    for entry_id in ledger.forgotten:
        holder = next((t for t in files.values() if f"**Id:** {entry_id}" in t), "")
        block = holder.split(f"**Id:** {entry_id}", 1)[-1].split("\n## ", 1)[0]
        if "forgotten" not in block.lower():
            problems.append(f"{entry_id} was reported forgotten but is not marked so in HEAD")
    state = files.get(f"workspaces/{WORKSPACE}/state.md", "")
    for section, content in ledger.states.items():
        if f"## {section}" not in state or content not in state:
            problems.append(f"state section {section!r} was reported written but is not in HEAD")
    for head in ledger.synced:
        if subprocess.run(["git", "cat-file", "-e", f"{head}^{{commit}}"], cwd=remote).returncode:
            problems.append(f"sync reported {head[:12]} pushed but the remote lacks it")
    committed = {name for name in git(root, "log", "--all", "--name-only", "--format=").split() if name}
    problems += [f"committed: {name}" for name in sorted(committed)
                 if is_temp_name(name) or name.startswith(("state/", "index/"))]
    if git(root, "status", "--porcelain").strip():
        problems.append(f"work tree not clean: {git(root, 'status', '--porcelain').strip()[:200]}")
    check = subprocess.run([sys.executable, "-m", "gitmem", "--root", str(root), "check"],
                           capture_output=True, text=True)
    if check.returncode != 0:
        problems.append(f"gitmem check: {(check.stdout + check.stderr).strip()[:400]}")
    if (root / "state" / "journal.json").exists():
        problems.append("a journal is still pending")
    return problems


def recovered(root: Path) -> Counter[str]:
    """Recovery events the writes logged (stale git locks, temp files removed)."""
    counts: Counter[str] = Counter()
    log = root / "logs" / "memory.log"
    for line in log.read_text(encoding="utf-8").splitlines() if log.exists() else []:
        event = json.loads(line).get("event", "")
        if event in ("stale-lock-removed", "temp-file-removed"):
            counts[event] += 1
    return counts
