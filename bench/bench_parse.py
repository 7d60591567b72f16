"""Entry parsing and hand-edit normalization cost: linear in the number of entries.

1. A topic file of N entries (1,000 to 50,000; a mix of plain entries, fenced code, text appended
   after the fields, entries without an Id) is parsed, normalized and rendered; the cost per entry
   must stay flat as N grows. Reference in the same run: one `str.split` of the same text, and
   markdown-it's block parse restricted to headings, fences and code (the engine the parser used
   before), at the same sizes.
2. `remember` while one uncommitted hand-written file holds 10,000 entries without an Id (each gets
   its Id and dates in the hand-edit commit first), as the CLI process and as a library call.
   Reference in the same run: the same `remember` in the same store with nothing to absorb.

    .venv/bin/python bench/bench_parse.py [--sizes 1000,5000,10000,50000] [--repeat 5] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gitmem.format.markdown import parse_topic_file, render_topic_file  # noqa: E402
from gitmem.format.normalize import normalize_text  # noqa: E402
from gitmem.store.store import Store  # noqa: E402
from gitmem.verbs.entries import remember  # noqa: E402

_SCRIPT = Path(sys.executable).with_name("gitmem")
GITMEM = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "gitmem"]
ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@x"}


def mixed_file(entries: int) -> str:
    """A topic file of `entries` entries in four shapes, one in four each."""
    parts = ["---\ntopic: bench\nlayer: semantic\nscope: global\n---\n# bench\n\n"]
    for i in range(entries):
        fields = (f"**Id:** global-sem-{i + 1:04d}\n**Importance:** normal\n"
                  f"**Created:** 2026-11-01\n**Verified:** 2026-11-01\n")
        shape = i % 4
        if shape == 0:
            parts.append(f"## Fact {i}\nEntry {i} says how component {i % 97} works.\n\n{fields}\n")
        elif shape == 1:
            parts.append(f"## Build {i}\nSteps:\n```sh\nmake target-{i}\n## a shell comment\n```\n\n{fields}\n")
        elif shape == 2:
            parts.append(f"## Note {i}\nA note.\n\n{fields}See also entry {i - 1}.\n\n")
        else:
            parts.append(f"## Hand written {i}\nNo Id yet, written in an editor.\n\n")
    return "".join(parts)


def median_ms(func: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def markdown_it_parse(text: str) -> object:
    from markdown_it import MarkdownIt

    md = MarkdownIt("zero").enable(["heading", "fence", "code"])
    md.disable("inline")
    return md.parse(text)


def parse_costs(sizes: list[int], repeat: int) -> None:
    print("## parse / normalize / render, per entry (median of", repeat, "runs)")
    print("| entries | parse | normalize (ids, dates, shape) | render | str.split (ref) | markdown-it blocks (ref) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for size in sizes:
        text = mixed_file(size)
        numbers = iter(range(size + 1, 10**9))
        parse = median_ms(lambda: parse_topic_file(text), repeat)  # noqa: B023
        normalize = median_ms(lambda: normalize_text(  # noqa: B023
            "global/semantic/bench.md", text, today="2026-12-02",  # noqa: B023
            allocate=lambda s, layer: next(numbers), locate=lambda i, p: []), repeat)  # noqa: B023
        topic = parse_topic_file(text)
        for index, entry in enumerate(topic.entries):
            topic.entries[index] = entry.with_fields(Verified="2026-12-02")
        render = median_ms(lambda: render_topic_file(topic), repeat)  # noqa: B023
        split = median_ms(lambda: text.split("\n"), repeat)  # noqa: B023
        mdit = median_ms(lambda: markdown_it_parse(text), max(1, repeat // 2)) if size <= 10_000 else None  # noqa: B023
        per = [f"{ms * 1000 / size:.1f} µs" for ms in (parse, normalize, render, split)]
        ref = f"{mdit * 1000 / size:.1f} µs" if mdit is not None else "(not run)"
        print(f"| {size:,} | {per[0]} ({parse:.0f} ms) | {per[1]} ({normalize:.0f} ms) | "
              f"{per[2]} ({render:.0f} ms) | {per[3]} | {ref} |")


def hand_file_store(base: Path, entries: int) -> Path:
    root = base / f"store-{time.perf_counter_ns()}"
    Store(root).init()
    target = root / "global" / "semantic" / "hand.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("# hand\n\n" + "".join(f"## Entry {i}\nText of entry {i}, written by hand.\n\n"
                                             for i in range(entries)), encoding="utf-8")
    return root


def absorb_costs(entries: int, runs: int) -> None:
    print(f"\n## remember with {entries:,} entries without an Id in one uncommitted file ({runs} runs)")
    cli, lib, ref_cli, ref_lib = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for run in range(runs):
            root = hand_file_store(base, entries)
            start = time.perf_counter()
            subprocess.run([*GITMEM, "--root", str(root), "remember", f"after {run}", "-l", "semantic",
                            "-t", "other"], check=True, capture_output=True, env=ENV)
            cli.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            subprocess.run([*GITMEM, "--root", str(root), "remember", f"again {run}", "-l", "semantic",
                            "-t", "other"], check=True, capture_output=True, env=ENV)
            ref_cli.append((time.perf_counter() - start) * 1000)
            root = hand_file_store(base, entries)
            store = Store(root)
            start = time.perf_counter()
            remember(store, f"after {run}", "semantic", topic="other")
            lib.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            remember(store, f"again {run}", "semantic", topic="other")
            ref_lib.append((time.perf_counter() - start) * 1000)
            store.close()
    print("| | median | max |")
    print("|---|---:|---:|")
    for name, samples in (("CLI `remember`, absorbing the file", cli),
                          ("CLI `remember`, nothing to absorb (reference)", ref_cli),
                          ("library `remember`, absorbing the file", lib),
                          ("library `remember`, nothing to absorb (reference)", ref_lib)):
        print(f"| {name} | {statistics.median(samples):.0f} ms | {max(samples):.0f} ms |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="1000,5000,10000,50000")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--hand-entries", type=int, default=10_000)
    args = parser.parse_args()
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    print(f"load average {os.getloadavg()[0]:.1f}; `python -c pass` "
          f"{(time.perf_counter() - start) * 1000:.1f} ms\n")
    parse_costs([int(s) for s in args.sizes.split(",")], args.repeat)
    absorb_costs(args.hand_entries, args.runs)


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
