"""Kill -9 at random points of remember, forget, state, decision and sync, then check the store.

Each operation runs in a forked child process (gitmem already imported, so the kill lands in the
operation, not in Python's start-up) and is killed with SIGKILL after a random delay drawn
uniformly over the operation's own duration (measured first). After every kill a probe write
(`remember`) must succeed. At the end:

- every write a child reported as done is in HEAD: remembered and decided Ids with their text,
  forgotten entries marked forgotten, state sections with their content, synced heads on the
  remote;
- no temp file and nothing from state/ was ever committed (whole history);
- `gitmem check` finds nothing, the work tree is clean, no journal is pending.

    .venv/bin/python bench/bench_kill.py [--kills 200] [--seed 1]

The campaign and the check live in tests/killcampaign.py; tests/store/test_kill.py runs the same
campaign with fewer kills.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for folder in (ROOT, ROOT / "tests"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from killcampaign import campaign, git, recovered, verify  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}  cores {os.cpu_count()}  load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        report, ledger, root, remote = campaign(Path(tmp), args.kills, args.seed, progress=True)
        problems = report.failures + verify(root, remote, ledger)
        print(f"\n{report.kills} kills in {report.seconds:.1f} s; {report.killed} landed while the "
              f"operation ran, {sum(report.completed.values())} operations finished first "
              f"({', '.join(f'{k} {v}' for k, v in sorted(report.completed.items()))})")
        print("undisturbed durations: " + ", ".join(f"{op} {s * 1000:.0f} ms"
                                                     for op, s in report.durations.items()))
        events = recovered(root)
        print(f"recovered by later writes: {events['stale-lock-removed']} stale git lock files, "
              f"{events['temp-file-removed']} temp files; "
              f"{sum(1 for _ in git(root, 'log', '--format=%s').splitlines() if 'interrupted' in _)} "
              "interrupted writes committed under their own name")
        print(f"reported and verified: {len(ledger.remembered)} ids, {len(ledger.forgotten)} forgotten, "
              f"{len(ledger.states)} state sections, {len(ledger.synced)} syncs")
        print("every probe write succeeded; everything reported is in HEAD; nothing temporary "
              "committed; check clean" if not problems else "PROBLEMS:\n  " + "\n  ".join(problems[:30]))
        if problems:
            sys.exit(1)


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
