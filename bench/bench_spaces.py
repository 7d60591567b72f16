"""Spaces and provenance benchmark.

Search across N spaces of E entries each against one store of E entries, in the same process and
the same run (queries interleaved, medians): the library call and the `gitmem search` process.
Then search with a read-only Markdown folder of V notes (an Obsidian-style vault) mounted beside
them against the same spaces without it (the vault switched off and on between queries), its
first read (the notes read into the cache and indexed) and a read after one note was edited.
Then, on the first store: `gitmem as-of REV search` (first call exports and indexes the commit's
tree, later calls reuse it) and `gitmem why ID` after C more commits.

With --fusion: retrieval quality of each fusion method on the labelled fixture split across
spaces (recall@5 / MRR against the same entries in one store), and nothing else.

Usage: python bench/bench_spaces.py [--entries 10000] [--spaces 3] [--queries 200] [--cli 20]
                                    [--vault 2000] [--commits 200] [--fusion]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from synthstore import Synth, SynthConfig, build_store, make_queries  # noqa: E402

from gitmem.spaces.manage import add_space, set_active  # noqa: E402
from gitmem.store.store import Store  # noqa: E402
from gitmem.verbs.search import search  # noqa: E402

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def ms(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return (time.perf_counter() - start) * 1000


def p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * len(ordered)) - 1)]


def make_store(root: Path, entries: int, seed: int) -> Store:
    """A committed gitmem store of about `entries` synthetic entries, its index built."""
    build_store(root, SynthConfig(entries=entries, seed=seed))
    store = Store(root, cwd=root.parent)
    store.init()
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=GIT_ENV, capture_output=True)
    subprocess.run(["git", "commit", "-q", "-m", "bench: synthetic entries", "--no-verify"],
                   cwd=root, check=True, env=GIT_ENV)
    store.search_index().rebuild()
    return store


def cli(root: Path, *args: str) -> float:
    return ms(lambda: subprocess.run([sys.executable, "-m", "gitmem", "--root", str(root), *args],
                                     capture_output=True, check=False, cwd=root.parent))


def line(name: str, values: Sequence[float]) -> str:
    return f"{name}: median {statistics.median(values):.1f} ms, p95 {p95(values):.1f} ms"


def bench_search(home: Store, queries: list[str], cli_queries: int) -> None:
    one: list[float] = []
    every: list[float] = []
    for query in queries:  # interleaved, so load changes hit both alike
        one.append(ms(lambda q=query: search(home, q, space="home")))
        every.append(ms(lambda q=query: search(home, q)))
    ratio = statistics.median(every) / statistics.median(one)
    print(line("  library, one store", one))
    print(line("  library, all spaces", every) + f"  (x{ratio:.2f} the one store)")
    if cli_queries:
        cli_one: list[float] = []
        cli_all: list[float] = []
        for query in queries[:cli_queries]:
            cli_one.append(cli(home.root, "search", query, "--json", "--space", "home"))
            cli_all.append(cli(home.root, "search", query, "--json"))
        ratio = statistics.median(cli_all) / statistics.median(cli_one)
        print(line("  gitmem search process, one store", cli_one))
        print(line("  gitmem search process, all spaces", cli_all) + f"  (x{ratio:.2f})")


def make_vault(folder: Path, notes: int, seed: int = 23) -> Path:
    """An Obsidian-style vault: notes in 40 folders, front matter, a title and 2-4 sections each,
    wiki links between them; the words drawn as the stores' are."""
    synth = Synth(seed)
    (folder / ".obsidian").mkdir(parents=True)
    for n in range(notes):
        sections = "\n\n".join(f"## {synth.title(False)}\n{synth.body(False)}"
                                 for _ in range(synth.rng.randint(2, 4)))
        text = (f"---\ntags: [{synth.zipf(TOOLS_WORDS)}]\n---\n# {synth.title(False)}\n\n"
                f"{synth.body(False)} See [[note {(n * 7) % notes}]].\n\n{sections}\n")
        path = folder / f"area-{n % 40}" / f"note {n}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def bench_vault(home: Store, queries: list[str], notes: int, tmp: Path) -> None:
    vault = make_vault(tmp / "vault", notes)
    add_space(home, "vault", str(vault))
    first = ms(lambda: search(home, "warm up"))
    without: list[float] = []
    with_vault: list[float] = []
    for query in queries:  # interleaved: the vault off, then on, for each query
        set_active(home, "vault", False)
        without.append(ms(lambda q=query: search(home, q)))
        set_active(home, "vault", True)
        with_vault.append(ms(lambda q=query: search(home, q)))
    ratio = statistics.median(with_vault) / statistics.median(without)
    print(f"  first read of the vault ({notes} notes read into the cache and indexed): {first:.0f} ms")
    print(line("  library, the spaces without the vault", without))
    print(line(f"  library, the spaces and a {notes}-note vault", with_vault) + f"  (x{ratio:.2f})")
    edited = next((tmp / "vault").rglob("*.md"))
    edits = []
    for n in range(10):
        edited.write_text(edited.read_text(encoding="utf-8") + f"\nEdit {n} mentions a flamingo.\n",
                          encoding="utf-8")
        edits.append(ms(lambda: search(home, "flamingo")))
    print(line("  search right after a note was edited (read again, re-indexed)", edits))


TOOLS_WORDS = ["ops", "deploy", "infra", "notes", "meeting", "design"]


def bench_history(home: Store, commits: int) -> None:
    from gitmem.provenance.asof import search_at
    from gitmem.provenance.why import why
    from gitmem.verbs.entries import remember, verify

    base = home.git.head_oid() or "HEAD"
    target = "global-sem-0001"
    start = time.perf_counter()
    for n in range(commits):
        remember(home, f"Bench note {n} about the build cache and worker pool", "semantic",
                 topic=f"bench-{n % 25}")
        if n % 50 == 0:
            verify(home, target)
    print(f"  ({commits} commits made in {time.perf_counter() - start:.1f} s)")
    changed = len(home.git.changed_between(base, home.git.head_oid()))
    files = len(home.all_topic_files())
    first = ms(lambda: search_at(home, base, "cache timeout", scopes=None, layer=None, limit=10,
                                 include_all=False))
    again = [ms(lambda: search_at(home, base, "deploy worker", scopes=None, layer=None, limit=10,
                                  include_all=False)) for _ in range(10)]
    rebuild = ms(lambda: home.search_index().rebuild())
    print(f"  as-of REV search, first call ({changed} of {files} files differ from HEAD):"
          f" {first:.0f} ms; full index rebuild of HEAD in the same run: {rebuild:.0f} ms")
    print(line("  as-of REV search, cached snapshot", again))
    print(line(f"  why {target} with {commits + 2} commits in the history",
               [ms(lambda: why(home, target)) for _ in range(5)]))


class FusedIndexes:
    """What the search verb does over spaces: each index ranks, the rankings are fused."""

    def __init__(self, indexes: list[Any], method: str) -> None:
        self.indexes = indexes
        self.method = method

    def search(self, text: str, scopes: Any = None, limit: int = 10, now: Any = None) -> list[Any]:
        from dataclasses import asdict
        from types import SimpleNamespace

        from gitmem.spaces.fusion import fuse

        rankings = [(f"s{i}", i == 0, [asdict(h) for h in ix.search(text, scopes=scopes, limit=limit, now=now)])
                    for i, ix in enumerate(self.indexes)]
        return [SimpleNamespace(**h) for h in fuse(rankings, limit, self.method)]


def fusion_quality() -> None:
    """The labelled retrieval fixture, its topic files split between spaces, per fusion method."""
    import hashlib

    sys.path.insert(0, str(REPO / "tests"))
    from fixtures.retrieval.evaluate import evaluate
    from fixtures.retrieval.store import build
    from gitmem.search.index import SearchIndex
    from gitmem.spaces.fusion import METHODS

    def by_hash(count: int) -> Callable[[str], int]:
        return lambda rel: int(hashlib.sha1(rel.encode()).hexdigest(), 16) % count

    splits: list[tuple[str, int, Callable[[str], int]]] = [
        ("2 spaces, files at random", 2, by_hash(2)),
        ("3 spaces, files at random", 3, by_hash(3)),
        ("2 spaces by scope (global / workspaces)", 2, lambda rel: 0 if rel.startswith("global/") else 1),
        ("3 spaces by scope (global / shop / infra)", 3,
         lambda rel: 0 if rel.startswith("global/") else 1 if "/shop/" in rel else 2),
        ("2 spaces, 10% / 90% of the files", 2, lambda rel: 0 if by_hash(10)(rel) == 0 else 1),
    ]
    tmp = Path(tempfile.mkdtemp(prefix="gitmem-bench-fusion-"))
    try:
        ids = build(tmp / "one")
        one = SearchIndex(tmp / "one")
        base = evaluate(one, ids)
        one.close()
        print(f"one store: recall@5 {base.recall(5):.3f}, MRR {base.mrr():.3f}")
        print(f"| split | {' | '.join(METHODS)} |")
        for number, (name, count, rule) in enumerate(splits):
            roots = [tmp / f"split{number}-{n}" for n in range(count)]
            for path in sorted((tmp / "one").rglob("*.md")):
                rel = path.relative_to(tmp / "one").as_posix()
                target = roots[rule(rel)] / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
            indexes = [SearchIndex(root) for root in roots]
            cells = []
            for method in METHODS:
                report = evaluate(FusedIndexes(indexes, method), ids)
                cells.append(f"{report.recall(5):.3f} / {report.mrr():.3f}")
            for index in indexes:
                index.close()
            print(f"| {name} | {' | '.join(cells)} |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--spaces", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--cli", type=int, default=20, help="queries run through the CLI (0: skip)")
    parser.add_argument("--vault", type=int, default=2000, help="notes of the Markdown vault mounted (0: skip)")
    parser.add_argument("--commits", type=int, default=200, help="commits before timing `why` (0: skip)")
    parser.add_argument("--fusion", action="store_true", help="only the fusion quality table")
    args = parser.parse_args()
    if args.fusion:
        fusion_quality()
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="gitmem-bench-spaces-"))
    try:
        print(f"load average before: {os.getloadavg()[0]:.2f}")
        start = time.perf_counter()
        stores = [make_store(tmp / f"space{n}", args.entries, seed=7 + n) for n in range(args.spaces)]
        home = stores[0]
        for n, other in enumerate(stores[1:], 1):
            add_space(home, f"space{n}", str(other.root))
        print(f"built {args.spaces} stores of {args.entries} entries in {time.perf_counter() - start:.0f} s")
        queries = make_queries(args.queries)
        search(home, "warm up")
        print(f"search, {args.queries} queries, {args.spaces} spaces vs one store:")
        bench_search(home, queries, args.cli)
        if args.vault:
            print(f"search with a read-only Markdown vault of {args.vault} notes mounted:")
            bench_vault(home, queries, args.vault, tmp)
        if args.commits:
            print("history:")
            bench_history(home, args.commits)
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        print(f"python -c pass: {statistics.median([ms(lambda: subprocess.run([sys.executable, '-c', 'pass'])) for _ in range(5)]):.1f} ms")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
