"""Soak test: several machines (clones of one bare remote) write, edit by hand, move, commit and
pull with plain git and the hooks, are killed at random moments, run with a warm server that is
killed or stopped at random, settle conflicts with `gitmem resolve` and `check --fix`, and sync,
for a while; then they sync until quiet and every fact whose write succeeded must be on every
machine exactly once, the trees identical and `check` clean.

    python bench/bench_soak.py --minutes 1 --machines 3 --seed 7
    python bench/bench_soak.py --minutes 2 --seed 5 --keep /tmp/soak5 --debug --stop-on-duplicate

The choices are the seed's alone (apart from timing: where a kill lands, what a sync finds).
Every step is logged (steps.log beside the clones); `--keep DIR` keeps the clones and the log,
`--debug` looks for a fact or an Id held twice on the machine after every step and names the
first step that made one. A fact a `resolve --ours/--theirs` dropped, or a `resolve --both` kept twice, was
the settler's choice: counted apart, not as lost or duplicated.

Prints lost / duplicated / converged, the commit measured and the date. Exit 1 when a fact is
lost or duplicated, the trees differ, or `check` is not clean.
"""

from __future__ import annotations

import argparse
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
from typing import Any

from gitmem.format.conflicts import conflict_blocks

ENV = {**os.environ, "GITMEM_SERVE": "off", "GIT_AUTHOR_NAME": "soak", "GIT_AUTHOR_EMAIL": "s@x",
       "GIT_COMMITTER_NAME": "soak", "GIT_COMMITTER_EMAIL": "s@x"}
WARM_ENV = {**ENV, "GITMEM_SERVE": "auto"}  # a call starts the store's server when none runs
TOPICS = ("ops", "db", "ci", "life")
FACT_RE = re.compile(r"^## (soak fact \d+-\d+)", re.M)
ID_RE = re.compile(r"^\*\*Id:\*\*[ \t]+(\S+)", re.M)
SERVER_MOVES = ("warm", "cold", "kill", "kill-mid-write", "stop")


def git(root: Path, *args: str, env: dict[str, str] = ENV) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env)


def topic_files(root: Path) -> list[Path]:
    return sorted(root.glob("global/semantic/*.md"))


def facts_in(text: str) -> dict[str, int]:
    """How often each fact is written in a file; the versions of one conflict block count once."""
    found: dict[str, int] = {}
    rest, last = [], 0
    for block in conflict_blocks(text):
        rest.append(text[last:block.start])
        last = block.end
        for fact in {f for v in block.versions for f in FACT_RE.findall(v.text)}:
            found[fact] = found.get(fact, 0) + 1
    rest.append(text[last:])
    for fact in FACT_RE.findall("".join(rest)):
        found[fact] = found.get(fact, 0) + 1
    return found


def ids_in(text: str) -> dict[str, int]:
    """How often each `**Id:**` is written in a file; the versions of one conflict block count once."""
    found: dict[str, int] = {}
    rest, last = [], 0
    for block in conflict_blocks(text):
        rest.append(text[last:block.start])
        last = block.end
        for ident in {i for v in block.versions for i in v.ids}:
            found[ident] = found.get(ident, 0) + 1
    rest.append(text[last:])
    for ident in ID_RE.findall("".join(rest)):
        found[ident] = found.get(ident, 0) + 1
    return found


def ids_twice(root: Path) -> list[str]:
    """Ids held more than once in the working tree's topic files."""
    found: dict[str, int] = {}
    for path in topic_files(root):
        for ident, n in ids_in(path.read_text(encoding="utf-8")).items():
            found[ident] = found.get(ident, 0) + n
    return sorted(i for i, n in found.items() if n > 1)


def facts_on(root: Path) -> dict[str, int]:
    found: dict[str, int] = {}
    for path in topic_files(root):
        for fact, n in facts_in(path.read_text(encoding="utf-8")).items():
            found[fact] = found.get(fact, 0) + n
    return found


def server_pid(root: Path) -> int | None:
    """The pid state/serve.json names, when that process is a gitmem server."""
    try:
        pid = json.loads((root / "state" / "serve.json").read_text(encoding="utf-8")).get("pid")
        cmdline = Path(f"/proc/{int(pid)}/cmdline").read_bytes()
    except (OSError, ValueError, TypeError, AttributeError):
        return None
    return int(pid) if b"serve" in cmdline and b"gitmem" in cmdline else None


class Soak:
    def __init__(self, base: Path, machines: int, seed: int, debug: bool) -> None:
        self.rng = random.Random(seed)
        self.seed, self.debug = seed, debug
        self.remote = base / "remote.git"
        self.log = (base / "steps.log").open("a", encoding="utf-8")
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(self.remote)], check=True)
        self.roots = [base / f"m{i}" for i in range(machines)]
        self.warm: set[Path] = set()  # machines whose calls go to (and start) a warm server
        self.written: set[str] = set()  # facts whose write reported success
        self.dropped: set[str] = set()  # facts deleted by hand, or a resolve --ours/--theirs dropped
        self.doubled: set[str] = set()  # facts a resolve --both chose to keep twice
        self.counter = 0
        self.kills = 0
        self.server_kills = 0
        self.resolved: dict[str, int] = {}
        self.errors: dict[str, int] = {}
        self.pending: dict[Path, set[str]] = {}  # facts appended by hand, not yet committed
        self.step_no = 0
        self.first_duplicate: dict[str, Any] | None = None
        for index, root in enumerate(self.roots):
            self.gm(root, "init", "--remote", str(self.remote))
            if index == 0:
                self.remember(root)
            self.gm(root, "sync")
            self.gm(root, "hooks", "install")

    # -- running things ---------------------------------------------------------------------

    def env(self, root: Path) -> dict[str, str]:
        return WARM_ENV if root in self.warm else ENV

    def gm(self, root: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "gitmem", "--root", str(root), *args],
                              capture_output=True, text=True, env=self.env(root), timeout=timeout)

    def git(self, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return git(root, *args, env=self.env(root))

    def note(self, root: Path, action: str, **detail: Any) -> None:
        record = {"step": self.step_no, "machine": root.name, "action": action, **detail}
        self.log.write(json.dumps(record) + "\n")
        self.log.flush()

    def fact(self) -> str:
        self.counter += 1
        return f"soak fact {self.seed}-{self.counter}"

    def count(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1

    # -- the steps --------------------------------------------------------------------------

    def remember(self, root: Path) -> None:
        text, topic = self.fact(), self.rng.choice(TOPICS)
        done = self.gm(root, "remember", text, "-l", "semantic", "-t", topic)
        self.note(root, "remember", fact=text, topic=topic, rc=done.returncode)
        if done.returncode == 0:
            self.written.add(text)
        else:
            self.count(f"remember exit {done.returncode}")

    def hand_edit(self, root: Path) -> None:
        files = topic_files(root)
        if not files:
            return
        path = self.rng.choice(files)
        text = path.read_text(encoding="utf-8")
        kind = self.rng.choice(["append", "edit", "move", "after-fields", "crlf", "delete"])
        detail: dict[str, Any] = {"kind": kind, "file": path.name}
        if kind == "append":
            fact = self.fact()
            text += f"\n## {fact}\n{fact}\n"
            self.pending.setdefault(root, set()).add(fact)
            detail["fact"] = fact
        elif kind == "edit":  # one entry's importance: two machines may pick differently
            fields = list(re.finditer(r"^\*\*Importance:\*\* *(\w+)", text, re.M))
            if not fields:
                return
            field = self.rng.choice(fields[-2:])  # the newest entries: machines meet on them
            value = self.rng.choice([v for v in ("low", "normal", "high") if v != field.group(1)])
            text = text[:field.start()] + f"**Importance:** {value}" + text[field.end():]
            detail["importance"] = value
        elif kind == "after-fields":  # each machine writes its own line: the same entry may conflict
            text = text.rstrip("\n") + f"\nA line written after the fields on {root.name}.\n"
        elif kind == "crlf":
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        elif kind == "delete":  # a whole entry: its fact is gone by choice
            starts = [m.start() for m in re.finditer(r"^## ", text, re.M)]
            if not starts:
                return
            index = self.rng.randrange(len(starts))
            end = starts[index + 1] if index + 1 < len(starts) else len(text)
            gone = FACT_RE.findall(text[starts[index]:end])
            text = text[:starts[index]] + text[end:]
            self.dropped |= set(gone)
            detail["deleted"] = gone
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
            detail.update(target=target.name, moved=FACT_RE.findall(entry))
        path.write_text(text, encoding="utf-8")
        self.note(root, "hand-edit", **detail)

    def crossing_edit(self, root: Path) -> None:
        """The same entry given a different importance by hand on this machine and another one,
        so that a later merge meets two edits of it (a conflict to settle)."""
        other = self.rng.choice([r for r in self.roots if r != root])
        names = sorted({p.name for p in topic_files(root)} & {p.name for p in topic_files(other)})
        if not names:
            return
        name = self.rng.choice(names)
        texts = {r: (r / "global" / "semantic" / name).read_text(encoding="utf-8") for r in (root, other)}
        shared = sorted(set(FACT_RE.findall(texts[root])) & set(FACT_RE.findall(texts[other])),
                        key=lambda f: int(f.rsplit("-", 1)[1]))
        if not shared:
            return
        fact = self.rng.choice(shared[-3:])
        for machine, value in ((root, "high"), (other, "low")):
            text = texts[machine]
            at = text.find(f"## {fact}")
            field = re.compile(r"^\*\*Importance:\*\* *\w+", re.M).search(text, at)
            following = text.find("\n## ", at + 1)
            if field is None or (following >= 0 and field.start() > following):
                continue
            text = text[:field.start()] + f"**Importance:** {value}" + text[field.end():]
            (machine / "global" / "semantic" / name).write_text(text, encoding="utf-8")
        self.note(root, "crossing-edit", other=other.name, file=name, fact=fact)

    def plain_git(self, root: Path) -> None:
        self.git(root, "add", "-A")
        committed = self.git(root, "commit", "-qm", "by hand")
        if committed.returncode == 0:
            self.written |= self.pending.pop(root, set())
        pulled = self.git(root, "pull", "-q", "--no-rebase", "origin", "main")
        pushed = None
        if pulled.returncode != 0:
            self.count("git pull stopped")
            self.git(root, "merge", "--abort")
        else:
            pushed = self.git(root, "push", "-q", "origin", "main").returncode
        self.note(root, "plain-git", commit=committed.returncode, pull=pulled.returncode,
                  push=pushed, pull_out=(pulled.stdout + pulled.stderr).strip()[-300:])

    def killed_write(self, root: Path) -> None:
        text, topic, wait = self.fact(), self.rng.choice(TOPICS), self.rng.uniform(0.05, 0.6)
        proc = subprocess.Popen([sys.executable, "-m", "gitmem", "--root", str(root), "remember",
                                 text, "-l", "semantic", "-t", topic],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env(root))
        time.sleep(wait)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        self.kills += 1  # the write may or may not have landed: not counted either way
        self.note(root, "killed-write", fact=text, after=round(wait, 3))

    def server(self, root: Path) -> None:
        """Turn the warm server on or off for this machine, or kill -9 it (idle, or in the middle
        of a write it was serving), or stop it with `gitmem serve --stop`."""
        move = self.rng.choice(SERVER_MOVES)
        if move == "warm":
            self.warm.add(root)
        elif move == "cold":
            self.stop_server(root)
            self.warm.discard(root)
        elif move == "stop":
            self.gm(root, "serve", "--stop")
        elif move == "kill":
            self.kill_server(root)
        elif root in self.warm:  # kill-mid-write
            self.killed_server_write(root)
            return
        self.note(root, "server", move=move)

    def kill_server(self, root: Path) -> bool:
        pid = server_pid(root)
        if pid is None:
            return False
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            return False
        self.server_kills += 1
        return True

    def killed_server_write(self, root: Path) -> None:
        """A write sent to the server, the server killed while it runs: a success reported
        counts; `went away` is a write done completely or not at all, counted neither way."""
        text, topic, wait = self.fact(), self.rng.choice(TOPICS), self.rng.uniform(0.05, 0.6)
        proc = subprocess.Popen([sys.executable, "-m", "gitmem", "--root", str(root), "remember",
                                 text, "-l", "semantic", "-t", topic], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=self.env(root))
        time.sleep(wait)
        killed = self.kill_server(root)
        try:
            _out, _err = proc.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        if proc.returncode == 0:
            self.written.add(text)
        self.note(root, "server", move="kill-mid-write", fact=text, after=round(wait, 3),
                  killed=killed, rc=proc.returncode)

    def stop_server(self, root: Path) -> None:
        self.gm(root, "serve", "--stop")
        self.kill_server(root)

    def sync(self, root: Path) -> None:
        done = self.gm(root, "sync")
        self.note(root, "sync", rc=done.returncode, out=(done.stdout + done.stderr).strip()[-400:])
        if done.returncode == 3 and "conflict" in done.stdout + done.stderr:
            self.resolve_all(root)
        elif done.returncode != 0:
            self.count(f"sync exit {done.returncode}")

    def fix(self, root: Path) -> None:
        done = self.gm(root, "check", "--fix")
        self.note(root, "check-fix", rc=done.returncode, out=(done.stdout + done.stderr).strip()[-400:])

    def resolve_all(self, root: Path) -> None:
        """Every conflict `gitmem conflicts --json` lists, settled --ours, --theirs or --both as
        a generator seeded by (seed, step, conflict) picks: the count found does not shift the
        main sequence."""
        listed = self.gm(root, "conflicts", "--json")
        try:
            records = [c for c in json.loads(listed.stdout) if c.get("kind") != "record"]
        except (ValueError, TypeError, AttributeError):
            records = []
        for record in records:
            pick = random.Random(f"{self.seed}-{self.step_no}-{record['ref']}")
            how = pick.choice(["ours", "theirs", "both"])
            self.account(root / record["path"], int(record.get("line") or 0), how)
            done = self.gm(root, "resolve", record["ref"], f"--{how}")
            self.resolved[how] = self.resolved.get(how, 0) + 1
            self.note(root, "resolve", ref=record["ref"], how=how, rc=done.returncode,
                      out=(done.stdout + done.stderr).strip()[-300:])

    def account(self, path: Path, line: int, how: str) -> None:
        """What the settler chose to drop or to keep twice in the block at `line`."""
        try:
            blocks = conflict_blocks(path.read_text(encoding="utf-8"))
        except OSError:
            return
        block = next((b for b in blocks if b.line == line), blocks[0] if blocks else None)
        if block is None or len(block.versions) < 2:
            return
        ours = set(FACT_RE.findall(block.versions[0].text))
        theirs = set(FACT_RE.findall(block.versions[-1].text))
        if how == "both":
            self.doubled |= ours & theirs
        else:
            kept, other = (ours, theirs) if how == "ours" else (theirs, ours)
            self.dropped |= other - kept

    def step(self) -> None:
        self.step_no += 1
        root = self.rng.choice(self.roots)
        action = self.rng.choices(
            [self.remember, self.hand_edit, self.plain_git, self.killed_write, self.sync,
             self.fix, self.server, self.crossing_edit],
            weights=[4, 2, 2, 1, 3, 1, 1, 1])[0]
        action(root)
        if self.debug and self.first_duplicate is None:
            twice = sorted(f for f, n in facts_on(root).items() if n > 1 and f not in self.doubled)
            ids = ids_twice(root)
            if twice or ids:
                self.first_duplicate = {"step": self.step_no, "machine": root.name,
                                        "action": action.__name__, "facts": twice, "ids": ids}
                self.note(root, "FIRST-DUPLICATE", facts=twice, ids=ids)

    def settle(self) -> None:
        self.step_no += 1
        for root in self.roots:
            self.stop_server(root)
            self.warm.discard(root)
            self.git(root, "merge", "--abort")
            self.git(root, "add", "-A")
            if self.git(root, "commit", "-qm", "last hand edits").returncode == 0:
                self.written |= self.pending.pop(root, set())
        for _round in range(4):
            for root in self.roots:
                self.sync(root)
                self.resolve_all(root)  # markers a plain pull committed
        self.log.close()

    def shut_down(self) -> None:
        """No server of a clone outlives the run."""
        for root in self.roots:
            self.kill_server(root)


def run(base: Path, args: argparse.Namespace) -> int:
    soak = Soak(base, args.machines, args.seed, args.debug)
    try:
        deadline = time.monotonic() + args.minutes * 60
        steps = 0
        while time.monotonic() < deadline:
            soak.step()
            steps += 1
            if args.stop_on_duplicate and soak.first_duplicate:
                break
        soak.settle()
    finally:
        soak.shut_down()
    per_machine = [facts_on(root) for root in soak.roots]
    lost = sorted({f for f in soak.written - soak.dropped for seen in per_machine if f not in seen})
    duplicated = sorted({f for seen in per_machine for f, n in seen.items()
                         if n > 1 and f not in soak.doubled})
    trees = {git(root, "rev-parse", "HEAD^{tree}").stdout.strip() for root in soak.roots}
    checks = [soak.gm(root, "check").returncode for root in soak.roots]
    summary = {"seed": args.seed, "machines": args.machines, "minutes": args.minutes,
               "steps": steps, "kills": soak.kills, "server_kills": soak.server_kills,
               "facts_written": len(soak.written), "resolved": soak.resolved,
               "dropped_by_choice": len(soak.dropped), "kept_twice_by_resolve": len(soak.doubled),
               "lost": len(lost), "duplicated": len(duplicated),
               "converged": len(trees) == 1, "check_exit": checks, "errors": soak.errors,
               "lost_examples": lost[:5], "duplicated_examples": duplicated[:5]}
    if args.debug:
        summary["first_duplicate"] = soak.first_duplicate
    if args.keep:
        summary["kept"] = str(base)
    print(json.dumps(summary, indent=2))
    bad = lost or duplicated or len(trees) != 1 or any(checks)
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--machines", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", metavar="DIR", help="keep the clones and steps.log in DIR (new)")
    parser.add_argument("--debug", action="store_true",
                        help="look for a fact held twice after every step; name the first")
    parser.add_argument("--stop-on-duplicate", action="store_true",
                        help="with --debug: stop the random steps at the first duplicate")
    args = parser.parse_args()
    if args.keep:
        base = Path(args.keep)
        if base.exists() and any(base.iterdir()):
            parser.error(f"--keep {base}: not empty")
        base.mkdir(parents=True, exist_ok=True)
        return run(base.resolve(), args)
    with tempfile.TemporaryDirectory(prefix="gitmem-soak-") as tmp:
        return run(Path(tmp), args)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from benchutil import run_bench

    run_bench(main)
