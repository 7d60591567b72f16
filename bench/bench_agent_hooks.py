"""Time the agent hooks on a synthetic store (10,000 entries by default).

    .venv/bin/python bench/bench_agent_hooks.py [--entries 10000] [--prompts 40] [--cli 20]

(bench_hooks.py times the git hooks.) Builds the store (bench/synthstore.py), commits it, builds
the search index, then measures with prompts drawn like the search benchmark's queries:
  - the UserPromptSubmit hook in process: `search_hook(payload)` (store opened and closed per
    call, as in a hook process) and a warm `search(store, prompt, limit=3)` (as in `gitmem mcp`);
  - the same hook as Claude Code runs it: the `gitmem` console script (what integrate writes)
    `search --hook` with the payload on stdin, wall clock per prompt, without a server and then
    through a warm server (`gitmem serve`, started as bench_serve.py starts it, after 3 warm-up
    calls: its first call opens the index);
  - the SessionStart hook `gitmem context --hook`, wall clock, both ways;
  - the MCP server: spawn to initialized (the SDK's stdio client), and a `search` tool call
    (limit 3) round trip over stdio, with the prompts and with the bare queries (what an agent
    sends the tool: a prompt's extra words are most of the search's time);
  - references in the same run: `python -c pass`, `gitmem --version`,
    `python -c "import mcp.server.mcpserver"` and `gitmem search PROMPT --json`.
Prints median and p95 in milliseconds. The package's bytecode is compiled first, as an install
does (bench/benchutil.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from benchutil import GITMEM, percentile, start_server  # noqa: E402
from synthstore import SynthConfig, build_store, make_queries  # noqa: E402

from gitmem.integrate.hookio import HookInput  # noqa: E402
from gitmem.integrate.hooks import search_hook  # noqa: E402
from gitmem.serve.control import stop_server  # noqa: E402
from gitmem.store import warm  # noqa: E402
from gitmem.store.store import Store  # noqa: E402
from gitmem.verbs.search import search  # noqa: E402


def summary(name: str, times: Sequence[float]) -> dict[str, float | str]:
    return {"name": name, "p50": statistics.median(times), "p95": percentile(times, 0.95),
            "n": len(times)}


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return (time.perf_counter() - start) * 1000


def prompt_of(query: str) -> str:
    """A query dressed as a prompt someone types."""
    return f"Can you look into the {query} problem again and fix it?"


GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "b@x"}


def run_cli(args: list[str], stdin: str | None = None) -> float:
    """Wall time of one process; args start with the program (GITMEM or sys.executable)."""
    return timed(lambda: subprocess.run(args, input=stdin, capture_output=True, text=True,
                                        check=False))



def measure(root: Path, queries: list[str], cli_runs: int) -> list[dict[str, float | str]]:
    prompts = [prompt_of(q) for q in queries]
    rows = []
    payloads = [HookInput(event="UserPromptSubmit", cwd=str(root), prompt=p) for p in prompts]
    rows.append(summary("search_hook in process (store opened per call)",
                        [timed(lambda p=p: search_hook(p, str(root), None)) for p in payloads]))
    warm.enable()  # what `gitmem mcp` keeps between calls (gitmem/mcp/server.py)
    store = Store(root, cwd=root)
    try:
        search(store, prompts[0], limit=3)  # the warm path: first search pays the index open
        rows.append(summary("search(limit=3) in a warm process (gitmem mcp)",
                            [timed(lambda p=p: search(store, p, limit=3)) for p in prompts]))
    finally:
        store.close()
        warm.disable()
    base = [*GITMEM, "--root", str(root)]
    cli_prompts = prompts[:cli_runs]
    hook_input = [json.dumps({"hook_event_name": "UserPromptSubmit", "cwd": str(root),
                              "session_id": "bench", "prompt": p}) for p in cli_prompts]
    start_payload = json.dumps({"hook_event_name": "SessionStart", "cwd": str(root),
                                "session_id": "bench", "source": "startup"})
    def hook_rows(how: str) -> None:
        for args, stdin in ((["search", "--hook"], hook_input[0]), (["context", "--hook"], start_payload)):
            # A hook answers 0 with nothing on failure: check it answers before timing it.
            answer = subprocess.run([*base, *args], input=stdin, capture_output=True, text=True,
                                    check=False)
            if "hookSpecificOutput" not in answer.stdout:
                raise SystemExit(f"`gitmem {' '.join(args)}` ({how}) answered nothing: "
                                 f"{answer.stderr.strip()}")
        rows.append(summary(f"CLI `gitmem search --hook`, {how}",
                            [run_cli([*base, "search", "--hook"], h) for h in hook_input]))
        rows.append(summary(f"CLI `gitmem context --hook` (SessionStart), {how}",
                            [run_cli([*base, "context", "--hook"], start_payload)
                             for _ in cli_prompts]))

    hook_rows("no server")
    server = start_server(root)
    try:
        for h in hook_input[:3]:  # the server's first calls open the index and fill its caches
            run_cli([*base, "search", "--hook"], h)
        run_cli([*base, "context", "--hook"], start_payload)
        served = subprocess.run([*base, "-v", "search", "--hook"], input=hook_input[0],
                                capture_output=True, text=True, check=False)
        if "answered by the gitmem server" not in served.stderr:
            raise SystemExit(f"the hook did not go through the server: {served.stderr.strip()}")
        hook_rows("through the server")
    finally:
        stop_server(root)
        server.wait(timeout=30)
    rows.append(summary("reference: `python -c pass`",
                        [run_cli([sys.executable, "-c", "pass"]) for _ in cli_prompts]))
    rows.append(summary("reference: `gitmem --version`",
                        [run_cli([*GITMEM, "--version"]) for _ in cli_prompts]))
    rows.append(summary("reference: `gitmem search PROMPT --json`, no server",
                        [run_cli([*base, "search", p, "--json"]) for p in cli_prompts]))
    rows.append(summary("reference: import mcp.server.mcpserver",
                        [run_cli([sys.executable, "-c", "import mcp.server.mcpserver"])
                         for _ in range(5)]))
    rows += measure_mcp(root, prompts, queries)
    return rows


def measure_mcp(root: Path, prompts: list[str], queries: list[str]) -> list[dict[str, float | str]]:
    """Server start (spawn to initialized) and `search` tool calls over stdio."""
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "gitmem", "--root", str(root), "mcp"], cwd=str(root))
    starts: list[float] = []
    calls: list[float] = []
    plain: list[float] = []  # the queries themselves, as an agent sends them to the tool

    async def session(call: bool) -> None:
        start = time.perf_counter()
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            starts.append((time.perf_counter() - start) * 1000)
            if call:
                await client.call_tool("search", {"query": prompts[0], "limit": 3})
                for prompt in prompts:
                    begin = time.perf_counter()
                    result = await client.call_tool("search", {"query": prompt, "limit": 3})
                    calls.append((time.perf_counter() - begin) * 1000)
                    assert not result.is_error, result.content
                for query in queries:
                    begin = time.perf_counter()
                    result = await client.call_tool("search", {"query": query, "limit": 3})
                    plain.append((time.perf_counter() - begin) * 1000)
                    assert not result.is_error, result.content

    for n in range(5):
        anyio.run(session, n == 0)
    return [summary("MCP server: spawn to initialized", starts),
            summary("MCP `search` tool call (limit 3), stdio round trip", calls),
            summary("MCP `search` tool call, the bare queries (not prompts)", plain)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--prompts", type=int, default=40)
    parser.add_argument("--cli", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gitmem-bench-agent-hooks-"))
    try:
        build_store(tmp, SynthConfig(entries=args.entries))
        store = Store(tmp, cwd=tmp)
        store.init()
        env = {**os.environ, **GIT_ENV}
        subprocess.run(["git", "add", "-A"], cwd=tmp, check=True, env=env)
        subprocess.run(["git", "commit", "-qm", "bench data"], cwd=tmp, check=True, env=env)
        store.search_index().rebuild()
        store.close()
        rows = measure(tmp, make_queries(args.prompts), args.cli)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{args.entries} entries; milliseconds")
    for row in rows:
        print(f"{row['name']:<62} p50 {row['p50']:8.1f}  p95 {row['p95']:8.1f}  (n={row['n']})")


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
