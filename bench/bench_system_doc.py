"""What keeping SYSTEM.md current costs a write: library `remember` with the SYSTEM.md step and
without it, alternating write by write in one process (so both see the same machine load), at
1,000 and 10,000 entries (bench_write.py's store shape). Also times the step's parts: rendering
the document, and writing it with and without an fsync.

    .venv/bin/python bench/bench_system_doc.py [--sizes 1000,10000] [--writes 40] [--json]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_write import build_store  # noqa: E402
from benchutil import median_ms, print_result  # noqa: E402

from gitmem.fsio import write_text_atomic  # noqa: E402
from gitmem.store.store import Store  # noqa: E402
from gitmem.verbs.entries import remember  # noqa: E402


def measure(size: int, writes: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        build_store(root, size)
        store = Store(root)
        remember(store, "warm-up write builds the catalog", "semantic", topic="warm")
        keep = Store.refresh_system_doc
        with_doc: list[float] = []
        without: list[float] = []
        for n in range(writes * 2):
            skip = n % 2 == 1
            if skip:
                Store.refresh_system_doc = lambda self, txn: None  # type: ignore[method-assign]
            began = time.perf_counter()
            remember(store, f"write {n} about the deploy pipeline", "semantic", topic=f"bench-{n % 3}")
            (without if skip else with_doc).append(time.perf_counter() - began)
            Store.refresh_system_doc = keep  # type: ignore[method-assign]
        render, durable, plain = [], [], []
        target = root / "SYSTEM.md"
        for n in range(writes):
            began = time.perf_counter()
            text = store.render_system_doc()
            render.append(time.perf_counter() - began)
            began = time.perf_counter()
            write_text_atomic(target, f"{text}{n}\n")
            durable.append(time.perf_counter() - began)
            began = time.perf_counter()
            write_text_atomic(target, f"{text}{n}.\n", durable=False)
            plain.append(time.perf_counter() - began)
        store.close()
    return {
        "remember_with_system_doc_ms": median_ms(with_doc),
        "remember_without_system_doc_ms": median_ms(without),
        "added_ms": round(median_ms(with_doc) - median_ms(without), 1),
        "render_ms": round(statistics.median(render) * 1000, 2),
        "write_with_fsync_ms": round(statistics.median(durable) * 1000, 2),
        "write_without_fsync_ms": round(statistics.median(plain) * 1000, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--writes", type=int, default=40)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result: dict[str, object] = {"load_average": round(os.getloadavg()[0], 2)}
    for size in (int(s) for s in args.sizes.split(",")):
        for key, value in measure(size, args.writes).items():
            result[f"{size}_{key}"] = value
    result["load_average_after"] = round(os.getloadavg()[0], 2)
    print_result(result, args.json)


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
