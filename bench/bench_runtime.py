"""Hot runtime memory and project documents: median wall times of the library calls.

On stores of 1,000 and 10,000 entries (search index built, hooks not installed) with a nearly full hot tier
(USER.md ~3.6 KiB of 4, global and workspace MEMORY.md ~9 KiB of 10 each):

- `runtime add` that fits, and one that overflows (moves an item into the semantic layer);
- `doc add` of a 20 KiB Markdown document (16 sections) onto a shelf of 40 such documents, and one
  that passes the active cap (archives the least recently read document first);
- the context card of a workspace with that full runtime tier and the 40 documents, against the
  same card with no runtime memory and no documents (same store, same run).

References in the same run: `remember` (library call, incl. commit) and a bare pygit2 commit of one
file in the same repository.

    .venv/bin/python bench/bench_runtime.py [--sizes 1000,10000] [--writes 30] [--cards 30]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_write import build_store, pygit2_reference  # noqa: E402
from bench_write import fmt as fmt_wall  # noqa: E402

from gitmem.documents.verbs import add as doc_add  # noqa: E402
from gitmem.runtime.verbs import add as runtime_add  # noqa: E402
from gitmem.store.store import Store  # noqa: E402
from gitmem.verbs.context import build_card  # noqa: E402
from gitmem.verbs.entries import remember  # noqa: E402
from gitmem.verbs.search import reindex  # noqa: E402

WORKSPACE = "alpha"
SECTIONS = 16


Samples = tuple[list[float], list[float]]


def timed(func: object, repeat: int) -> Samples:
    """Wall and CPU milliseconds of `repeat` calls (CPU time is less disturbed by a busy machine)."""
    wall, cpu = [], []
    for n in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        func(n)  # type: ignore[operator]
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    return wall, cpu


def fmt(samples: Samples) -> str:
    return f"{fmt_wall(samples[0])}   cpu median {statistics.median(samples[1]):6.1f} ms"


def item(n: int, kind: str) -> str:
    """A realistic hot-memory item of ~100 bytes."""
    return (f"{kind} note {n}: the deploy pipeline for service {n % 7} runs migrations first, "
            f"then restarts workers {n}")


def document(n: int) -> str:
    """A ~20 KiB runbook in Markdown with SECTIONS sections."""
    parts = [f"# Runbook {n}\n\nHow service {n} is operated.\n"]
    for s in range(SECTIONS):
        body = " ".join(f"step {s}.{w} checks queue {w % 9} latency before the rollout of build {n}"
                        for w in range(16))
        parts.append(f"\n## Section {s} of runbook {n}\n\n{body}\n\n```sh\nmake check-{s}\n```\n")
    return "".join(parts)


def fill(store: Store, target: str, scope: str, limit: int) -> None:
    """Add items until the file holds about `limit` bytes (one commit per add, untimed)."""
    n = 0
    size = 0
    while size + 110 < limit:
        result = runtime_add(store, item(n, f"{scope}-{target}"), target=target, scope=scope,
                             workspace=WORKSPACE if scope == "workspace" else None)
        size = result.size
        n += 1


def set_settings(root: Path, **settings: object) -> None:
    path = root / "memory.json"
    data = json.loads(path.read_text())
    data.setdefault("settings", {}).update(settings)
    path.write_text(json.dumps(data, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000", help="entries in the store, per run")
    parser.add_argument("--writes", type=int, default=30)
    parser.add_argument("--cards", type=int, default=30)
    parser.add_argument("--documents", type=int, default=40)
    args = parser.parse_args()
    print(f"python: {sys.version.split()[0]}  cores: {os.cpu_count()}  load: {os.getloadavg()[0]:.2f}")
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            measure(Path(tmp), size, args.writes, args.cards, args.documents)


def measure(tmp: Path, entries: int, writes: int, cards: int, documents: int) -> None:
    """Build a store of `entries` entries and time the runtime and document verbs and the card."""
    from gitmem.verbs.context import documents_section, runtime_section

    root = tmp / "store"
    start = time.perf_counter()
    build_store(root, entries)
    store = Store(root, workspace=WORKSPACE, cwd=tmp)
    remember(store, "warm-up write builds the catalog", "semantic", topic="warm")
    reindex(store)
    build_card(store, workspace=WORKSPACE)
    base_card = timed(lambda n: build_card(store, workspace=WORKSPACE), cards)
    fill(store, "user", "global", 3600)
    fill(store, "memory", "global", 9200)
    fill(store, "memory", "workspace", 9200)
    print(f"\n== {entries:,} entries, full runtime tier (setup {time.perf_counter() - start:.1f} s)")

    # Room for every timed add: raise the budget for this series only.
    set_settings(root, runtime={"memoryLimitBytes": 9200 + 120 * (writes + 1)})
    fits = timed(lambda n: runtime_add(store, item(10_000 + n, "fits"), scope="workspace",
                                       workspace=WORKSPACE), writes)
    print(f"runtime add (fits), library          {fmt(fits)}")
    set_settings(root, runtime={"memoryLimitBytes": 9200})  # below what the file holds now
    overflow = timed(lambda n: runtime_add(store, item(20_000 + n, "overflow"), scope="workspace",
                                           workspace=WORKSPACE), writes)
    moved = runtime_add(store, item(30_000, "check"), scope="workspace", workspace=WORKSPACE).moved
    assert moved, "the overflow series did not overflow"
    print(f"runtime add (overflows), library     {fmt(overflow)}")

    for n in range(documents):
        doc_add(store, document(n), title=f"Runbook {n}", scope="workspace", workspace=WORKSPACE)
    docs = timed(lambda n: doc_add(store, document(1000 + n), title=f"Timed runbook {n}",
                                   scope="workspace", workspace=WORKSPACE), writes)
    print(f"doc add (fits), library              {fmt(docs)}  "
          f"({documents} documents of {len(document(0).encode()) // 1024} KiB on the shelf)")
    active = sum(p.stat().st_size for p in (root / f"workspaces/{WORKSPACE}/documents/active").iterdir())
    set_settings(root, documents={"activeLimitBytes": active + 1024})
    full = timed(lambda n: doc_add(store, document(2000 + n), title=f"Full shelf {n}",
                                   scope="workspace", workspace=WORKSPACE), writes)
    assert doc_add(store, document(3000), title="check", scope="workspace",
                   workspace=WORKSPACE).archived, "the full-shelf series archived nothing"
    print(f"doc add (archives one), library      {fmt(full)}")

    scopes = [WORKSPACE, "global"]
    card = timed(lambda n: build_card(store, workspace=WORKSPACE), cards)
    text = build_card(store, workspace=WORKSPACE).text
    print(f"context card, full runtime tier      {fmt(card)}  ({len(text)} chars)")
    print(f"  of which the runtime section       {fmt(timed(lambda n: runtime_section(store, WORKSPACE, scopes), cards))}")
    print(f"  of which the documents section     {fmt(timed(lambda n: documents_section(store, WORKSPACE, scopes), cards))}")
    print(f"reference: card, no runtime or docs  {fmt(base_card)}")
    lib = timed(lambda n: remember(store, f"library write {n} about the deploy pipeline",
                                   "semantic", topic=f"bench-{n % 3}"), writes)
    print(f"reference: remember, library         {fmt(lib)}")
    print(f"reference: bare pygit2 commit        {fmt_wall(pygit2_reference(root, writes))}")
    store.close()


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
