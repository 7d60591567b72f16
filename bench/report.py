"""Write docs/performance.md from the benches' own output.

    .venv/bin/python bench/report.py            # rewrite the page
    .venv/bin/python bench/report.py --check    # exit 1 when the page is not what the results give

Every bench run through `benchutil.run_bench` keeps its output in bench/results/BENCH.json with
the command, the commit and the date it measured. A results file marked `logged` holds figures
recorded by hand in an earlier version of the page, with the commit that recorded them; a new run
of that bench replaces it. What each bench measures and its targets are below, beside the order
of the page."""

from __future__ import annotations

import argparse
import ast
import json
import sys
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
PAGE = BENCH.parent / "docs" / "performance.md"
RESULTS = BENCH / "results"


@dataclass(frozen=True)
class Section:
    bench: str
    title: str
    targets: str  # "" when the bench has none
    method: str = ""  # added to the first paragraph of the bench's docstring


SECTIONS = [
    Section("bench_write", "Writes",
            "library `remember` ≤ 40 ms at 10,000 entries and ≤ 80 ms at 50,000; CLI `remember` "
            "≤ 450 ms; `gitmem --help` ≤ 120 ms.",
            "The store has ~20 entries per topic file over five layers, the global scope and four "
            "workspaces, committed once. \"CLI process\" is the `gitmem` console script, one process "
            "per write, appending to an existing topic file."),
    Section("bench_write_library_ab", "What the crash safety costs a write",
            "the Writes targets stay met.",
            "A = another source tree (main), B = this one, alternating A B / B A over copies of one "
            "store, 30 writes per round; the median of the rounds' medians."),
    Section("bench_write_ab", "CLI writes, two trees compared", ""),
    Section("bench_hooks", "Git hooks",
            "pre-commit ≤ 300 ms for one touched file in a 10,000-entry store.",
            "10,000 entries in 500 topic files with a search index and the hooks installed; each "
            "round appends one entry without an Id and times the pre-commit hook alone, the "
            "post-commit hook alone and a whole `git commit -am`."),
    Section("bench_sync", "Sync",
            "100 incoming entries merged and pushed in ≤ 2 s.",
            "A fresh bare repository served over smart HTTP on 127.0.0.1 per run; machine B has one "
            "local entry, so its sync fetches, merges entry by entry, commits and pushes; a third "
            "machine times the fast-forward. Each run once through the git binary and once through "
            "libgit2 (`GITMEM_GIT_TRANSPORT`), interleaved."),
    Section("bench_search", "Search",
            "search p50 ≤ 10 / 20 ms and p95 ≤ 20 / 40 ms at 10,000 / 50,000 entries, refresh "
            "included; one-file update p50 ≤ 50 ms, max ≤ 250 ms; full rebuild ≤ 10 s at 10,000 "
            "and ≤ 45 s at 50,000; CLI `gitmem search` ≤ 400 ms.",
            "The store is synthetic (`bench/synthstore.py`): ~20 entries per topic file, ~10% "
            "Chinese, 300 queries of single words, identifiers, paths, Chinese, questions and "
            "partial words."),
    Section("bench_search_ab", "Search, two trees compared", ""),
    Section("bench_search_levers", "Search with query understanding, dates and neighbour lift",
            "in-process search p50 at 50,000 entries ≤ 1.3 times the same index searched without "
            "them (the ranking before them), CPU time.",
            "One synthetic store (`bench/synthstore.py`), bench_search.py's 300 queries plus whole "
            "questions with dates, alternating rounds in one process."),
    Section("bench_retrieval", "Retrieval quality",
            "(b) recall@5 ≥ 0.90 and MRR ≥ 0.88 (kept by tests/search/test_index.py); (a) "
            "recall@10 at least 8 points over the ranking before query understanding, dates and "
            "neighbour lift.",
            "Two labelled sets, each searched by gitmem and by plain BM25 (whoosh BM25F over the "
            "same text, no gitmem ranking) in the same run. (a) conversational: four multi-session "
            "dialogues stored as episodic topics, one entry per turn, questions whose evidence "
            "turns are known (single-fact, two-fact: both turns within k, temporal, open-ended). "
            "(b) agent memory: curated entries with known answers among seeded distractors that "
            "share their vocabulary; labelled queries in several languages and shapes."),
    Section("bench_parse", "Entry parsing and hand edits", "linear in the number of entries."),
    Section("bench_capture", "Capture of a 5 MB transcript", "≤ 2 s without model time."),
    Section("bench_capture_folder", "Capture of a 50 MB folder of sessions",
            "≤ 60 s on 2 cores without model time, memory bounded (streamed, not loaded whole)."),
    Section("bench_history", "History ingest of 5,000 commits", "≤ 20 s."),
    Section("bench_long_history", "Entry history after 100,000 commits",
            "`why ID`, `log ID` and `as-of DATE show ID` ≤ 1 s warm at 100,000 commits."),
    Section("bench_codehook", "The post-commit hook of a code repository",
            "≤ 50 ms added to `git commit`."),
    Section("bench_runtime", "Hot runtime memory and project documents",
            "runtime add ≤ 60 ms, doc add ≤ 60 ms, context card with a full runtime tier ≤ 50 ms "
            "(all in-process)."),
    Section("bench_secrets", "Secret scanning",
            "an ordinary write does not import detect-secrets (its import costs ~1.6 times "
            "pygit2's)."),
    Section("bench_kill", "Kill -9 at random points",
            "every probe write succeeds; everything reported as done is in HEAD; nothing temporary "
            "is committed; `gitmem check` is clean."),
    Section("bench_concurrency", "Writers beside plain git",
            "p95 store-lock wait ≤ 2 s with 8 writers; every plain commit lands."),
    Section("bench_spaces", "Spaces and provenance",
            "search across 3 spaces of 10,000 entries ≤ 3 × one store."),
    Section("bench_serve", "The warm server (`gitmem serve`)",
            "through the server started by an earlier call: search ≤ 1.5 × `git grep` at 50,000 "
            "entries and ≤ 1 × at 200,000; context ≤ 60 ms and ≤ 80 ms; remember ≤ 80 ms and "
            "≤ 100 ms; eight clients at once: no errors."),
    Section("bench_serve_load", "The warm server under load",
            "searches' p90 during a scheduled sync of ~6 s against a slow remote ≤ 150 ms; no call "
            "left unanswered."),
    Section("bench_system_doc", "SYSTEM.md rendered by every write", "under ~5 ms added per write."),
    Section("bench_agent_hooks", "Agent hooks and the MCP server",
            "the prompt hook as a command ≤ 150 ms; the MCP `search` tool call ≤ 15 ms."),
    Section("bench_soak", "Soak: three machines, mixed writers, kills",
            "0 facts lost, 0 duplicated, the trees converged and `check` clean, at 10 minutes × 3 "
            "machines."),
    Section("bench_web", "The web page (`gitmem web`)",
            "every page ≤ 50 ms server time at 50,000 entries; search as you type ≤ 30 ms; the first "
            "page ≤ 2 s after start."),
    Section("bench_startup", "The thin client's start-up tricks",
            "each avoided module (json, socket, typing) adds measurable time to a served call, "
            "or the trick goes."),
    Section("bench_catchup", "The catalog following the working tree", ""),
    Section("bench_change_sources", "Where a read learns what changed", ""),
    Section("bench_import", "Import of 10,000 basic-memory notes",
            "≤ 30 s on 2 cores; memory bounded (peak RSS about the same for 2,000 and 10,000 notes)."),
    Section("bench_native", "Claude Code's own memory kept in step (`--native-memory`)",
            "MEMORY.md within 200 lines and 25 KB with the rest counted; the pass over an unchanged "
            "folder well under the SessionStart hook's own time."),
]

INTRO = """\
# Performance

Generated by `.venv/bin/python bench/report.py` from the benches' own output (bench/results/);
do not edit it by hand: run a bench, then the report. Each section gives the command, the commit
and the date of the figures, what the bench measures and its targets. Figures marked *logged* were
recorded by hand before the benches kept their output; the commit named is the one that recorded
them. The machine is a shared 2-core VM whose load changes by the minute: read each figure against
the reference lines and the load average of its own run.
"""

HISTORY = """\
## History

Earlier runs are in git (`git log -p docs/performance.md`, before this page was generated). The
main steps: the CLI `remember` went from 443-485 ms to 340-352 ms (imports only where used, `flock`
for the locks); the context card at 10,000 entries from 1,237 ms to 45 ms (stat-checked
summaries) and 29 ms (the secret gate's needles); `gitmem context` through the warm server at
50,000 entries from 69 ms to 40.5 ms; the prompt hook answers in ~32 ms through the server
against ~250 ms without it; moving the network to the git binary costs ~60 ms per network
command against libgit2.
"""


def _method(bench: str) -> str:
    source = (BENCH / f"{bench}.py").read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(source)) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())


def _figures(record: dict[str, object]) -> list[str]:
    lines = [str(line) for line in record.get("output", [])]  # type: ignore[union-attr]
    if record.get("markdown"):
        return lines
    return ["```", *[line for line in lines if not line.startswith("measured: ")], "```"]


def _section(section: Section, record: dict[str, object] | None) -> list[str]:
    out = [f"## {section.title}", ""]
    method = " ".join(part for part in (_method(section.bench), section.method) if part)
    if record is None:
        return [*out, method, "",
                f"No run kept yet: run `.venv/bin/python bench/{section.bench}.py`, then this report.", ""]
    if record.get("logged"):
        when = f"*logged* (run of {record['logged']}; recorded in commit `{record['commit']}`, {record['date']})"
    else:
        when = (f"commit `{record['commit']}`, {record['date']} (python {record.get('python')}, "
                f"{record.get('cores')} cores, load average {record.get('load')})")
    out += [f"Command: `{record['command']}` — {when}.", "", method, ""]
    if section.targets:
        out += [f"Target: {section.targets}", ""]
    return [*out, *_figures(record), ""]


def render(results: Path = RESULTS) -> str:
    records = {}
    for path in sorted(results.glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        records[record["bench"]] = record
    known = {section.bench for section in SECTIONS}
    unknown = sorted(set(records) - known)
    if unknown:
        raise SystemExit(f"bench/report.py: no section for {', '.join(unknown)}: add it to SECTIONS")
    lines = [INTRO]
    for section in SECTIONS:
        lines += _section(section, records.get(section.bench))
    lines.append(HISTORY)
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only say whether the page is current")
    args = parser.parse_args()
    page = render()
    if args.check:
        current = PAGE.read_text(encoding="utf-8") == page
        print("docs/performance.md is current" if current else "docs/performance.md is out of date: run bench/report.py")
        return 0 if current else 1
    PAGE.write_text(page, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(BENCH.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
