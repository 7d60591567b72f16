"""Calls answered side by side: many clients at once, reads during a sync, and callers in other
time zones, workspaces and environments, each getting its own answer."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from gitmem.store.store import Store
from gitserver import Gate, serve_git_http
from servers import start_server, stop
from support import git, run_gitmem

OFF = {"GITMEM_SERVE": "off"}
ANSWERED = "answered by the gitmem server"


def _all_at_once(jobs: list[Callable[[], None]]) -> list[str]:
    """Run every job on its own thread, all released together; the errors they raised."""
    start = threading.Barrier(len(jobs))
    errors: list[str] = []

    def run(job: Callable[[], None]) -> None:
        start.wait()
        try:
            job()
        except Exception as exc:  # noqa: BLE001 - collected and reported by the test
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    return errors


def _served(root: Path, *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = run_gitmem("-v", "--root", str(root), *args, **kwargs)  # type: ignore[arg-type]
    assert ANSWERED in done.stderr, (args, done.stderr)
    done.stderr = "\n".join(line for line in done.stderr.splitlines() if ANSWERED not in line)
    return done


def test_eight_clients_at_once_each_get_the_right_answer(served: Path) -> None:
    words = ["amber", "basalt", "cobalt", "dune", "ember", "fjord", "granite", "harbor"]
    ids = {}
    for word in words:
        done = run_gitmem("--root", str(served), "remember", f"The {word} service listens on its own port",
                          "--layer", "semantic", "--topic", word, env=OFF)
        assert done.returncode == 0, done.stderr
        ids[word] = done.stdout.strip()

    def client(word: str) -> Callable[[], None]:
        def calls() -> None:
            for _ in range(3):
                hits = json.loads(_served(served, "search", word, "--json").stdout)
                assert [hit["id"] for hit in hits] == [ids[word]], (word, hits)
                shown = json.loads(_served(served, "show", ids[word], "--json").stdout)
                assert word in json.dumps(shown), (word, shown)
                listed = json.loads(_served(served, "list", "--json").stdout)
                assert len(listed) == len(words), listed
        return calls

    assert _all_at_once([client(word) for word in words]) == []


def test_a_read_during_a_scheduled_sync_is_answered_while_the_sync_waits(store: Store, tmp_path: Path) -> None:
    """The server's own scheduled sync holds the store lock while the remote keeps it waiting:
    reads through the server are answered meanwhile, a write waits for the sync, then lands."""
    root = store.root
    srv = tmp_path / "srv"
    srv.mkdir()
    git(tmp_path, "init", "--bare", "-q", "-b", "main", str(srv / "mem.git"))
    gate = Gate.closed()
    with serve_git_http(srv, gate=gate) as base:
        gate.release.set()
        assert run_gitmem("--root", str(root), "remote", "set", f"{base}mem.git", env=OFF).returncode == 0
        assert run_gitmem("--root", str(root), "remember", "Staging listens on port 5433",
                          "--layer", "semantic", env=OFF).returncode == 0
        gate.release.clear()
        gate.arrived.clear()
        proc = start_server(root, "--sync-every", "0.01", "--history-every", "0", "--consolidate-every", "0")
        writer = None
        try:
            assert gate.arrived.wait(60), "the scheduled sync never reached the remote"
            # The sync now waits on the remote, holding the store lock.
            read = _served(root, "search", "staging port")
            assert read.returncode == 0 and "5433" in read.stdout, read.stderr
            writer = subprocess.Popen([sys.executable, "-m", "gitmem", "-v", "--root", str(root), "remember",
                                       "Written after the sync", "--layer", "semantic"],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            card = _served(root, "context", "--json", cwd=tmp_path)
            alone = run_gitmem("--root", str(root), "context", "--json", cwd=tmp_path, env=OFF)
            assert (card.returncode, card.stdout) == (alone.returncode, alone.stdout) and card.returncode == 0
            status = json.loads(_served(root, "status", "--json").stdout)
            assert status["entries"] == 1
            assert writer.poll() is None  # the sync still holds the store: the write waits
            assert not gate.release.is_set()  # ... and the sync is still in its network part
            gate.release.set()
            out, err = writer.communicate(timeout=120)
            assert writer.returncode == 0 and ANSWERED in err, err
            assert out.startswith("global-sem-")
        finally:
            gate.release.set()
            if writer is not None and writer.poll() is None:
                writer.kill()
            stop(proc)
    assert "Written after the sync" in run_gitmem("--root", str(root), "search", "written after sync",
                                                  env=OFF).stdout


def _repo(tmp_path: Path, name: str) -> Path:
    repo = tmp_path / "code" / name
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", f"git@example.com:acme/{name}.git")
    return repo


def test_callers_in_other_zones_and_workspaces_at_the_same_time(served: Path, tmp_path: Path) -> None:
    shop, blog = _repo(tmp_path, "shop"), _repo(tmp_path, "blog")
    for repo, fact in ((shop, "Shop uses Postgres 16"), (blog, "Blog builds with Hugo")):
        done = run_gitmem("--root", str(served), "remember", fact, "--layer", "semantic",
                          "--scope", "workspace", cwd=repo, env=OFF)
        assert done.returncode == 0, done.stderr
    # UTC+14 and UTC-12: 26 hours apart, so never the same day.
    cases = [(shop, "Pacific/Kiritimati"), (blog, "Etc/GMT+12")]
    expected = {}
    for repo, zone in cases:
        alone = run_gitmem("--root", str(served), "context", cwd=repo, env={"TZ": zone, **OFF})
        assert alone.returncode == 0, alone.stderr
        expected[zone] = alone.stdout
    assert "workspace acme-shop" in expected["Pacific/Kiritimati"]
    assert "workspace acme-blog" in expected["Etc/GMT+12"]
    first_lines = {text.splitlines()[0] for text in expected.values()}
    assert len(first_lines) == 2  # another workspace and another day

    def client(repo: Path, zone: str) -> Callable[[], None]:
        def calls() -> None:
            for _ in range(3):
                card = _served(served, "context", cwd=repo, env={"TZ": zone})
                assert card.stdout == expected[zone], (zone, card.stdout, expected[zone])
        return calls

    assert _all_at_once([client(repo, zone) for repo, zone in cases * 4]) == []


def test_nothing_of_one_callers_environment_or_input_reaches_another(served: Path) -> None:
    """Subagents (GITMEM_SUBAGENT=1: every write refused) and writers with their own standard
    input, all at once: each call sees its own environment and its own input only."""
    written: list[str] = []

    def subagent() -> None:
        refused = _served(served, "remember", "Subagents never write", "--layer", "semantic",
                          env={"GITMEM_SUBAGENT": "1"})
        assert refused.returncode != 0 and "subagent" in refused.stderr.lower(), refused.stderr

    def writer(n: int) -> Callable[[], None]:
        def call() -> None:
            done = _served(served, "remember", "-", "--layer", "learnings", "--topic", f"t{n}",
                           input_text=f"Lesson number {n} comes from its own caller\n")
            assert done.returncode == 0, done.stderr
            written.append(done.stdout.strip())
        return call

    jobs: list[Callable[[], None]] = [subagent, writer(1), subagent, writer(2), subagent, writer(3)]
    assert _all_at_once(jobs) == []
    assert len(set(written)) == 3
    for n in (1, 2, 3):
        hits = json.loads(run_gitmem("--root", str(served), "search", f"lesson number {n}", "--json",
                                     env=OFF).stdout)
        assert any(f"Lesson number {n} comes" in hit["title"] for hit in hits), hits
    listed = json.loads(run_gitmem("--root", str(served), "list", "--json", env=OFF).stdout)
    assert len(listed) == 3 and not any("Subagents" in json.dumps(e) for e in listed)
    # The server's own environment took nothing in: a plain write after them all is not refused.
    after = _served(served, "remember", "A plain write afterwards", "--layer", "semantic")
    assert after.returncode == 0, after.stderr


def test_eight_searches_at_once_after_a_hand_edit_all_see_it(served: Path) -> None:
    """Each round a hand edit changes the store, then eight searches at once bring the search
    index up to date together (each with its own index reader and writer lock): every one finds
    the new text, none fails."""
    topic = served / "global" / "semantic" / "travel.md"
    topic.parent.mkdir(parents=True, exist_ok=True)
    assert run_gitmem("--root", str(served), "search", "anything", env=OFF).returncode == 1  # index built
    for word in ("zanzibar", "lisbon", "reykjavik"):
        topic.write_text(f"---\ntopic: travel\n---\n# travel\n\n## The offsite is in {word.title()}\n"
                         "Flights are booked through the usual agency.\n", encoding="utf-8")

        def client(word: str = word) -> None:
            found = _served(served, "search", word, "--json")
            assert found.returncode == 0, (word, found.stderr)
            assert [hit["title"] for hit in json.loads(found.stdout)] == [f"The offsite is in {word.title()}"]

        assert _all_at_once([client] * 8) == []


def test_eight_reads_on_a_fresh_server_each_answer_as_a_call_of_its_own(served: Path, tmp_path: Path) -> None:
    """Eight cards and searches at once on a server that has no parts open yet: each call opens a
    set of its own (sharing what the process already read of the index and the summaries), and
    each answer equals that of the same call in its own process, before and after hand edits."""
    words = ["amber", "basalt", "cobalt", "dune"]
    for word in words:
        done = run_gitmem("--root", str(served), "remember", f"The {word} queue drains every minute",
                          "--layer", "decisions", "--topic", word, env=OFF)
        assert done.returncode == 0, done.stderr
    calls = [("context",), *[("search", word, "--json") for word in words], ("context",),
             ("search", "queue", "--json"), ("context",)]

    def round_at_once() -> None:
        expected = {args: run_gitmem("--root", str(served), *args, cwd=tmp_path, env=OFF) for args in set(calls)}

        def call(args: tuple[str, ...]) -> Callable[[], None]:
            def run() -> None:
                done = _served(served, *args, cwd=tmp_path)
                alone = expected[args]
                assert (done.returncode, done.stdout) == (alone.returncode, alone.stdout), (args, done.stderr)
            return run

        assert _all_at_once([call(args) for args in calls]) == []

    round_at_once()
    amber = next(served.rglob("amber.md"))
    amber.write_text(amber.read_text().replace("amber queue", "amber stream"))
    dune = next(served.rglob("dune.md"))
    dune.write_text(dune.read_text() + "\n<<<<<<< ours\nA line\n=======\nAnother line\n>>>>>>> theirs\n")
    round_at_once()
    card = _served(served, "context", cwd=tmp_path).stdout
    assert "amber stream" in card and "conflict markers" in card, card
    hits = json.loads(_served(served, "search", "stream", "--json").stdout)
    assert [hit["title"] for hit in hits] == ["The amber stream drains every minute"], hits
