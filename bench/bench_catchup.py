"""What following the working tree costs a read: median wall time of bringing the catalog up to
date (`Store.catch_up_catalog`) when nothing changed, with 1,000 / 10,000 / 50,000 entries.

Prints, for each size: the catch-up as reads do it (HEAD, then the working tree), the same with one
renamed topic file left uncommitted, and, measured in the same run as the reference, the catch-up
to HEAD alone (what reads did before) and the `git status` the working-tree step adds.

    .venv/bin/python bench/bench_catchup.py [--sizes 1000,10000,50000] [--repeat 30]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_write import build_store, fmt, timed  # noqa: E402

from gitmem.format import layers as L  # noqa: E402
from gitmem.store.store import Store  # noqa: E402


def measure_size(root: Path, size: int, repeat: int) -> None:
    build_store(root, size)
    store = Store(root)
    store.catch_up_catalog()  # the first build of the catalog is not what is measured
    print(f"\n== {size:,} entries")
    head_only = timed(lambda n: store.catch_up_catalog_from(store.git.head_oid(), store.git.changed_between),
                      repeat)
    print(f"reference: catch-up to HEAD only        {fmt(head_only)}")
    status = timed(lambda n: store.git.dirty_paths(under=L.SCOPE_ROOTS), repeat)
    print(f"reference: git status (pygit2)          {fmt(status)}")
    print(f"catch-up, HEAD and working tree, clean  {fmt(timed(lambda n: store.catch_up_catalog(), repeat))}")
    first = next(p for p in store.all_topic_files())
    os.rename(root / first, root / first.replace(".md", "-renamed.md"))
    store.catch_up_catalog()
    print(f"catch-up, one file renamed, uncommitted {fmt(timed(lambda n: store.catch_up_catalog(), repeat))}")
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            measure_size(Path(tmp) / "store", size, args.repeat)
            time.sleep(0)


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
