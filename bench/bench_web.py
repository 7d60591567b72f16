"""The web page: time per page through a running `gitmem web`, against the CLI search of the same
run and `git grep -l -i -w WORD` over the same store.

For each size: build a store (synthetic entries, one commit, index built; its catalog is still
at the empty store, as after a `git pull` of every entry), start `gitmem web --no-open` and time
until its first page answers and until the overview shows its counts (the first look has read
every file), then, interleaved per round: the overview, one topic file, one entry with its
history, a full search page, the results part the page fetches as you type, a static file (what
any answer costs), the CLI search (GITMEM_SERVE=off) and `git grep`. Each page is reported three
ways: the loopback round trip (start of request to last byte), the server time the answer's
`Server-Timing` header gives (`app`: request in to headers out, the view included) and the CPU
time of the thread that ran the view (`cpu`), which a loaded machine inflates least.

gitmem's bytecode is compiled first (bench/benchutil.py), as an install does.

    .venv/bin/python bench/bench_web.py [--sizes 10000,50000] [--rounds 15]
    .venv/bin/python bench/bench_web.py --quick       # 1,000 entries, 5 rounds: a smoke run
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_serve import GIT_ENV, WORDS, make_store, run_ms  # noqa: E402
from benchutil import GITMEM, print_medians  # noqa: E402

from gitmem.web.timing import durations  # noqa: E402


class Page:
    def __init__(self, start_url: str) -> None:
        self.port = int(urlsplit(start_url).port or 0)
        self.cookie, self.text = "", ""
        answer = self.get(start_url[start_url.index("/", 8):])
        self.cookie = answer.getheader("set-cookie", "").split(";", 1)[0]

    def get(self, path: str) -> http.client.HTTPResponse:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        conn.request("GET", path, headers={"Host": f"127.0.0.1:{self.port}", "Cookie": self.cookie})
        answer = conn.getresponse()
        self.text = answer.read().decode("utf-8", "replace")
        conn.close()
        return answer

    def ms(self, path: str) -> float:
        return self.timed(path)[0]

    def timed(self, path: str) -> tuple[float, dict[str, float]]:
        """The round trip in ms, and the answer's Server-Timing (app: server time, cpu: the
        view thread's CPU time)."""
        start = time.perf_counter()
        answer = self.get(path)
        elapsed = (time.perf_counter() - start) * 1000
        if answer.status != 200:
            raise SystemExit(f"{path} answered {answer.status}")
        return elapsed, durations([answer.getheader("server-timing") or ""])


def first_paths(root: Path, count: int) -> tuple[str, list[str]]:
    """A topic file of the store and `count` entry Ids of its semantic layer."""
    topic, ids = "", []
    for path in sorted((root / "global" / "semantic").glob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("**Id:** "):
                topic = topic or path.relative_to(root).as_posix()
                ids.append(line.split()[1])
            if len(ids) >= count:
                return topic, ids
    raise SystemExit("the synthetic store has too few semantic entries")


def measure(size: int, rounds: int) -> dict[str, list[float]]:
    root = make_store(size)
    env = {**os.environ, **GIT_ENV, "GITMEM_SERVE": "off"}
    got: dict[str, list[float]] = {}
    topic, entry_ids = first_paths(root, rounds + 1)
    started = time.perf_counter()
    proc = subprocess.Popen([*GITMEM, "--root", str(root), "web", "--no-open"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        assert proc.stdout is not None
        page = Page(proc.stdout.readline().strip())
        page.ms("/")
        got["start to first page"] = [(time.perf_counter() - started) * 1000]
        while "for the first time" in page.text:  # the counts come once the first look is done
            time.sleep(0.1)
            page.ms("/")
        got["start to the overview with its counts"] = [(time.perf_counter() - started) * 1000]
        for word in WORDS[:2]:  # warm-up
            page.ms(f"/search?q={word}")
        page.ms(f"/entry?id={entry_ids[0]}")
        for n in range(rounds):
            word = WORDS[n % len(WORDS)]
            for name, path in (("overview /", "/"), ("topic file", f"/topic?path={quote(topic)}"),
                               ("entry with history, first view", f"/entry?id={entry_ids[n + 1]}"),
                               ("entry with history, again", f"/entry?id={entry_ids[0]}"),
                               ("search page", f"/search?q={word}"),
                               ("search as you type (results part)", f"/search?q={word[:4]}&partial=1"),
                               ("a static file (the server's floor)", "/static/style.css")):
                trip, server = page.timed(path)
                got.setdefault(name, []).append(trip)
                for metric, label in (("app", "server time"), ("cpu", "server CPU")):
                    if metric in server:
                        got.setdefault(f"{name}: {label}", []).append(server[metric])
            got.setdefault("CLI search (GITMEM_SERVE=off)", []).append(
                run_ms([*GITMEM, "--root", str(root), "search", word, "--json"], env))
            got.setdefault("git grep -l -i -w WORD", []).append(
                run_ms(["git", "-C", str(root), "grep", "-l", "-i", "-w", word]))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)
    return got


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,50000", help="comma-separated entry counts")
    parser.add_argument("--rounds", type=int, default=15, help="timed requests of each kind per size")
    parser.add_argument("--quick", action="store_true", help="1,000 entries, 5 rounds")
    args = parser.parse_args()
    sizes = [1000] if args.quick else [int(s) for s in args.sizes.split(",") if s.strip()]
    rounds = 5 if args.quick else args.rounds
    results = {}
    for size in sizes:
        print(f"measuring {size:,} entries ...", file=sys.stderr, flush=True)
        results[size] = measure(size, rounds)
    print(f"{rounds} rounds; medians (p90)")
    print_medians(results)
    return 0


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
