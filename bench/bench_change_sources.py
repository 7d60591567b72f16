"""Where a read learns what changed: median wall time of each source, measured in the same run
over one store, nothing changed since the last look (the common case of every read).

Rows: the git status the store's catch-up runs once per call (through pygit2, memory folders
only), the search index's own scan of the memory folders (one scandir and lstat per file,
compared with its manifest), the catch-up of the working tree with 20 topic files edited and
not committed (their stamps checked against the catalog's), and the same 20 files hashed as
the catch-up did before it used the stamp helper. Then, for finding a code repository (the
workspace of a folder, on every search that marks suspect entries): `workrepo.find_repository`
(the git binary, two processes) against a process that imports pygit2 less one that does not.

    .venv/bin/python bench/bench_change_sources.py [--sizes 10000] [--repeat 20]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_write import build_store, timed  # noqa: E402

from gitmem.format import layers as L  # noqa: E402
from gitmem.search.files import diff_files, scan_memory_files  # noqa: E402
from gitmem.store.store import Store  # noqa: E402

EDITED = 20


def measure_size(root: Path, size: int, repeat: int) -> list[float]:
    build_store(root, size)
    store = Store(root)
    store.catch_up_catalog()
    index = store.search_index()
    index.refresh()  # the index built once: the manifest is what the scan compares with
    manifest = index._manifest  # noqa: SLF001 - the bench times the scan the refresh runs
    assert manifest is not None
    status = timed(lambda n: store.git.dirty_paths(under=L.SCOPE_ROOTS), repeat)
    scan = timed(lambda n: diff_files(root, manifest.files, scan_memory_files(root)), repeat)
    edited = store.all_topic_files()[:EDITED]
    then = time.time() - 3600
    for relpath in edited:
        path = root / relpath
        path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
        os.utime(path, (then, then))  # settled: the stamp proves them unchanged from now on
    store.catch_up_catalog()
    stamps = timed(lambda n: store.catch_up_catalog(), repeat)
    hashed = timed(lambda n: [hashlib.sha1((root / p).read_bytes()).hexdigest() for p in edited], repeat)
    store.close()
    return [statistics.median(status), statistics.median(scan), statistics.median(stamps), statistics.median(hashed)]


def code_repo_rows(folder: Path, repeat: int) -> list[str]:
    from gitmem.git.workrepo import find_repository

    found = timed(lambda n: find_repository(folder), repeat)
    bare = [python_start() for _ in range(repeat // 2 or 1)]
    loaded = [python_start("import pygit2") for _ in range(repeat // 2 or 1)]
    cost = statistics.median(loaded) - statistics.median(bare)
    return [f"| finding a code repository and its origin (`workrepo.find_repository`) | {statistics.median(found):.1f} ms |",
            f"| reference: importing pygit2 in a new process | {cost:.1f} ms |"]


def python_start(code: str = "pass") -> float:
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return (time.perf_counter() - began) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    columns = []
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            columns.append(measure_size(Path(tmp) / "store", size, args.repeat))
    rows = ["`git status` of the memory folders (pygit2), once per call",
            "the search index's own scan of the memory folders against its manifest",
            f"catch-up of the working tree, {EDITED} topic files edited (stamps)",
            f"reference: hashing those {EDITED} files (what the catch-up did before)"]
    print("| | " + " | ".join(f"{s:,} entries" for s in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    for n, row in enumerate(rows):
        print(f"| {row} | " + " | ".join(f"{c[n]:.1f} ms" for c in columns) + " |")
    print()
    print("| | median |")
    print("|---|---:|")
    for line in code_repo_rows(ROOT, args.repeat):
        print(line)


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
