"""Time the native-memory pass: Claude Code's auto-memory folder imported and MEMORY.md rendered.

    .venv/bin/python bench/bench_native.py [--entries 5000] [--runs 15]

A store whose project workspace holds ENTRIES entries (imported from one Markdown file), a project
repository, and a Claude Code memory folder with an index and 20 topic files. Measures, in the
same run and interleaved: the pass in process with the folder unchanged (the common case at a
session's start) and after one topic file changed; the SessionStart hook as Claude Code runs it,
`gitmem context --hook` against `gitmem context --hook --native-memory` (no server); and the
reference `python -c pass`. Prints medians in milliseconds, and the rendered MEMORY.md's lines and
bytes against Claude Code's window.
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
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from benchutil import GITMEM  # noqa: E402

from gitmem.imports import nativeblock as nb  # noqa: E402
from gitmem.imports.claude_code import memory_folder  # noqa: E402
from gitmem.imports.native import run_pass  # noqa: E402
from gitmem.store.store import Store  # noqa: E402

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "b@x"}


def ms(work: object) -> float:
    start = time.perf_counter()
    work()  # type: ignore[operator]
    return (time.perf_counter() - start) * 1000


def setup(tmp: Path, entries: int, env: dict[str, str]) -> tuple[Path, Path, Path]:
    """(store, project, memory folder)."""
    root, project, notes = tmp / "store", tmp / "src" / "project", tmp / "notes"
    Store(root, cwd=tmp).init()
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=project, check=True, env=env)
    subprocess.run(["git", "remote", "add", "origin", "https://example.com/bench/project.git"],
                   cwd=project, check=True, env=env)
    notes.mkdir()
    (notes / "facts.md").write_text("# Facts\n\n" + "".join(
        f"## Fact {n}\nService {n} listens on port {10000 + n} and logs to /var/log/s{n}.log.\n\n"
        for n in range(entries)), encoding="utf-8")
    subprocess.run([*GITMEM, "--root", str(root), "-w", "bench-project", "import", "markdown", str(notes),
                    "--scope", "workspace", "--layer", "semantic"], check=True, env=env,
                   capture_output=True)
    folder = memory_folder(Path(env["HOME"]), project.resolve())
    folder.mkdir(parents=True)
    index = "".join(f"- [Topic {n}](topic{n}.md) — what Claude Code noted, part {n}\n" for n in range(20))
    (folder / "MEMORY.md").write_text("# Project memory\n\n" + index, encoding="utf-8")
    for n in range(20):
        (folder / f"topic{n}.md").write_text(
            f"---\nname: Topic {n}\ndescription: part {n}\ntype: project\n---\n\n"
            f"Claude Code's note number {n} about the build and its caches.\n", encoding="utf-8")
    return root, project.resolve(), folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gitmem-bench-native-"))
    (tmp / "home").mkdir()
    env = {**os.environ, **GIT_ENV, "HOME": str(tmp / "home"), "GITMEM_SERVE": "off"}
    os.environ.update({**GIT_ENV, "HOME": env["HOME"], "GITMEM_SERVE": "off"})
    try:
        root, project, folder = setup(tmp, args.entries, env)
        store = Store(root, cwd=project)
        first = ms(lambda: run_pass(store, project, Path(env["HOME"])))
        unchanged, changed, plain, native, python = [], [], [], [], []
        payload = json.dumps({"hook_event_name": "SessionStart", "cwd": str(project),
                              "session_id": "bench", "source": "startup"})
        base = [*GITMEM, "--root", str(root), "context", "--hook"]
        for n in range(args.runs):
            unchanged.append(ms(lambda: run_pass(store, project, Path(env["HOME"]))))
            (folder / "topic0.md").write_text(f"---\nname: Topic 0\ntype: project\n---\n\nRevision {n}.\n",
                                              encoding="utf-8")
            changed.append(ms(lambda: run_pass(store, project, Path(env["HOME"]))))
            for args_, into in ((base, plain), ([*base, "--native-memory"], native)):
                into.append(ms(lambda a=args_: subprocess.run(a, input=payload, capture_output=True,
                                                              text=True, cwd=project, env=env,
                                                              check=True)))
            python.append(ms(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True)))
        store.close()
        text = (folder / "MEMORY.md").read_text(encoding="utf-8")
        block = nb.split(text).block or []
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{args.entries} entries in the workspace, 20 Claude Code topic files; medians of {args.runs}, ms")
    rows = [("first pass (20 files imported, MEMORY.md written)", [first]),
            ("pass, folder unchanged (in process)", unchanged),
            ("pass, one topic file changed (in process)", changed),
            ("CLI `gitmem context --hook` (SessionStart), no server", plain),
            ("CLI `gitmem context --hook --native-memory`, folder unchanged, no server", native),
            ("reference: `python -c pass`", python)]
    for name, values in rows:
        print(f"{name:<76} {statistics.median(values):8.1f}")
    print(f"MEMORY.md: {len(text.splitlines())} lines (window {nb.WINDOW_LINES}), "
          f"{len(text.encode('utf-8'))} bytes (window {nb.WINDOW_BYTES}); block lists "
          f"{len(block) - nb.FRAME_LINES + 2} entries; last line: {block[-1] if block else ''}")


if __name__ == "__main__":
    from benchutil import run_bench

    run_bench(main)
