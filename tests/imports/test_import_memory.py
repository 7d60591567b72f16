"""An import's memory does not grow with the number of notes (docs/decisions/0032): the same
import of N and of 4N small basic-memory notes, each in a process of its own, peaks at nearly
the same resident memory. A generous behaviour bound, not a timing: before the plan, the
report and the written files were streamed, 3N more notes cost ~11 KiB each (~23 MiB here)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support import isolated_env

N = 700
GROWTH_MIB = 12  # what 3N more notes may add to the peak; buffers of fixed size fill up in between

MEASURE = ("import resource, subprocess, sys; done = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
           "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
           "print(done.stderr.strip()[-300:])")


def _note(n: int, total: int) -> str:
    return (f"---\ntitle: Part {n}\n---\n\n# Part {n}\n\nPart {n} feeds stage {n % 7} of the line.\n\n"
            f"## Observations\n- [decision] Part {n} batches its writes\n"
            f"- [fact] Part {n} keeps {n % 9 + 1} days of logs\n\n"
            f"## Relations\n- relates_to [[Part {(n * 7 + 1) % total}]]\n")


def _peak_mib(tmp: Path, count: int) -> int:
    """Peak resident memory of `gitmem import basic-memory` of `count` notes into a new store."""
    notes, store = tmp / f"notes-{count}", tmp / f"store-{count}"
    for n in range(count):
        path = notes / f"area-{n % 20}" / f"part-{n}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_note(n, count), encoding="utf-8")
    env = isolated_env(tmp / "home")
    gitmem = [sys.executable, "-m", "gitmem", "--root", str(store)]
    subprocess.run([*gitmem, "init"], env=env, check=True, capture_output=True)
    done = subprocess.run([sys.executable, "-c", MEASURE, *gitmem, "import", "basic-memory", str(notes)],
                          env=env, capture_output=True, text=True, check=True)
    first, _, errors = done.stdout.partition("\n")
    code, rss_kib = first.split()
    assert code == "0", errors
    return int(rss_kib) // 1024


def test_peak_memory_is_flat_in_the_number_of_notes(tmp_path: Path) -> None:
    small, large = _peak_mib(tmp_path, N), _peak_mib(tmp_path, 4 * N)
    assert large - small < GROWTH_MIB, f"{N} notes peaked at {small} MiB, {4 * N} at {large} MiB"
    assert os.path.isdir(tmp_path / f"store-{4 * N}" / ".git")
