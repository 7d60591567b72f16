"""Soak test: several machines (clones of one bare remote) write, edit by hand, move, commit and
pull with plain git and the hooks, are killed at random moments and sync, for a while; then they
sync until quiet and every fact whose write succeeded must be on every machine exactly once.

    python bench/bench_soak.py --minutes 1 --machines 3 --seed 7

Prints lost / duplicated / converged, the commit measured and the date. Exit 1 when a fact is
lost or duplicated, the trees differ, or `check` is not clean.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV = {**os.environ, "GITMEM_SERVE": "off", "GIT_AUTHOR_NAME": "soak", "GIT_AUTHOR_EMAIL": "s@x",
       "GIT_COMMITTER_NAME": "soak", "GIT_COMMITTER_EMAIL": "s@x"}
TOPICS = ("ops", "db", "ci", "life")
FACT_RE = re.compile(r"soak fact \d+-\d+")


def gm(root: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gitmem", "--root", str(root), *args],
                          capture_output=True, text=True, env=ENV, timeout=timeout)


def git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=ENV)


def topic_files(root: Path) -> list[Path]:
    return sorted(root.glob("global/semantic/*.md"))


class Soak:
    def __init__(self, base: Path, machines: int, rng: random.Random) -> None:
        self.rng = rng
        self.remote = base / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(self.remote)], check=True)
        self.roots = [base / f"m{i}" for i in range(machines)]
        self.written: set[str] = set()  # facts whose write reported success
        self.counter = 0
        self.kills = 0
        self.errors: dict[str, int] = {}
        self.pending: dict[Path, set[str]] = {}  # facts appended by hand, not yet committed
        for index, root in enumerate(self.roots):
            gm(root, "init", "--remote", str(self.remote))
            if index == 0:
                self.remember(root)
                gm(root, "sync")
            else:
                gm(root, "sync")
            gm(root, "hooks", "install")

    def fact(self) -> str:
        self.counter += 1
        return f"soak fact {os.getpid()}-{self.counter}"

    def remember(self, root: Path) -> None:
        text = self.fact()
        done = gm(root, "remember", text, "-l", "semantic", "-t", self.rng.choice(TOPICS))
        if done.returncode == 0:
            self.written.add(text)
        else:
            self.count(f"remember exit {done.returncode}")

    def count(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1

    def hand_edit(self, root: Path) -> None:
        files = topic_files(root)
        if not files:
            return
        path = self.rng.choice(files)
        text = path.read_text(encoding="utf-8")
        kind = self.rng.choice(["append", "edit", "move", "after-fields", "crlf"])
        if kind == "append":
            fact = self.fact()
            text += f"\n## {fact}\n{fact}\n"
            self.pending.setdefault(root, set()).add(fact)
        elif kind == "edit":
            text = text.replace("**Importance:** normal", "**Importance:** high", 1)
        elif kind == "after-fields":
            text = text.rstrip("\n") + "\nA line written after the fields.\n"
        elif kind == "crlf":
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        else:  # move the last entry to another topic file
            cut = text.rfind("\n## ")
            others = [p for p in files if p != path]
            if cut < 0 or not others:
                return
            target = self.rng.choice(others)
            entry = text[cut:]
            text = text[:cut] + "\n"
            target.write_text(target.read_text(encoding="utf-8").rstrip("\n") + "\n" + entry,
                              encoding="utf-8")
        path.write_text(text, encoding="utf-8")

    def plain_git(self, root: Path) -> None:
        git(root, "add", "-A")
        committed = git(root, "commit", "-qm", "by hand")
        if committed.returncode == 0:
            self.written |= self.pending.pop(root, set())
        pulled = git(root, "pull", "-q", "--no-rebase", "origin", "main")
        if pulled.returncode != 0:
            self.count("git pull stopped")
            git(root, "merge", "--abort")
        else:
            git(root, "push", "-q", "origin", "main")

    def killed_write(self, root: Path) -> None:
        text = self.fact()
        proc = subprocess.Popen([sys.executable, "-m", "gitmem", "--root", str(root), "remember",
                                 text, "-l", "semantic", "-t", self.rng.choice(TOPICS)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
        time.sleep(self.rng.uniform(0.05, 0.6))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        self.kills += 1  # the write may or may not have landed: not counted either way

    def sync(self, root: Path) -> None:
        done = gm(root, "sync")
        if done.returncode == 3 and "conflict" in done.stdout + done.stderr:
            listed = gm(root, "conflicts", "--json")
            try:
                refs = [c["ref"] for c in json.loads(listed.stdout)]
            except (ValueError, KeyError, TypeError):
                refs = []
            for ref in refs:
                gm(root, "resolve", ref, "--both")
        elif done.returncode not in (0,):
            self.count(f"sync exit {done.returncode}")

    def step(self) -> None:
        root = self.rng.choice(self.roots)
        action = self.rng.choices(
            [self.remember, self.hand_edit, self.plain_git, self.killed_write, self.sync],
            weights=[4, 2, 2, 1, 3])[0]
        action(root)

    def settle(self) -> None:
        for root in self.roots:
            git(root, "merge", "--abort")
            git(root, "add", "-A")
            if git(root, "commit", "-qm", "last hand edits").returncode == 0:
                self.written |= self.pending.pop(root, set())
        for _round in range(4):
            for root in self.roots:
                self.sync(root)


def facts_on(root: Path) -> dict[str, int]:
    found: dict[str, int] = {}
    for path in topic_files(root):
        for match in re.finditer(r"^## (soak fact \d+-\d+)", path.read_text(encoding="utf-8"), re.M):
            found[match.group(1)] = found.get(match.group(1), 0) + 1
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--machines", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="gitmem-soak-") as tmp:
        soak = Soak(Path(tmp), args.machines, rng)
        deadline = time.monotonic() + args.minutes * 60
        steps = 0
        while time.monotonic() < deadline:
            soak.step()
            steps += 1
        soak.settle()
        per_machine = [facts_on(root) for root in soak.roots]
        lost = sorted({f for f in soak.written for seen in per_machine if f not in seen})
        duplicated = sorted({f for seen in per_machine for f, n in seen.items() if n > 1})
        trees = {git(root, "rev-parse", "HEAD^{tree}").stdout.strip() for root in soak.roots}
        checks = [gm(root, "check").returncode for root in soak.roots]
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, cwd=Path(__file__).parent).stdout.strip()
        summary = {"commit": commit, "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                   "seed": args.seed, "machines": args.machines, "minutes": args.minutes,
                   "steps": steps, "kills": soak.kills, "facts_written": len(soak.written),
                   "lost": len(lost), "duplicated": len(duplicated),
                   "converged": len(trees) == 1, "check_exit": checks, "errors": soak.errors,
                   "lost_examples": lost[:5], "duplicated_examples": duplicated[:5]}
        print(json.dumps(summary, indent=2))
        bad = lost or duplicated or len(trees) != 1 or any(checks)
        return 1 if bad else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from benchutil import run_bench

    run_bench(main)
