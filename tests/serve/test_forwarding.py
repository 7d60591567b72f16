"""Calls forwarded to the warm server print and exit exactly as the CLI run in its own process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from gitmem.caller import by_short_name
from gitmem.store.store import Store
from servers import wait_for_server
from support import git, run_gitmem

OFF = {"GITMEM_SERVE": "off"}
ANSWERED = "answered by the gitmem server"
STAMP = re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?")


def clock_apart(text: str) -> tuple[str, list[datetime]]:
    """The text with its timestamps taken out, and the timestamps."""
    stamps = [datetime.fromisoformat(found.replace(" ", "T")) for found in STAMP.findall(text)]
    return STAMP.sub("<time>", text), stamps


def same_but_the_clock(served: str, alone: str) -> bool:
    """Equal texts, except that a timestamp may have moved on by the minute or the day that passed
    between the two calls (a time zone mistake moves it by hours, and is caught)."""
    (left, early), (right, late) = clock_apart(served), clock_apart(alone)
    return left == right and len(early) == len(late) and all(
        timedelta(0) <= b - a <= timedelta(days=1 if len(s) == 10 else 0, minutes=2)
        for a, b, s in zip(early, late, STAMP.findall(served), strict=True))


def both(root: Path, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
         input_text: str | None = None) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    """The same call through the server (checked to be answered by it) and in-process."""
    served = run_gitmem("-v", "--root", str(root), *args, cwd=cwd, env=env, input_text=input_text)
    assert ANSWERED in served.stderr, served.stderr
    alone = run_gitmem("--root", str(root), *args, cwd=cwd, env={**(env or {}), **OFF},
                       input_text=input_text)
    assert ANSWERED not in alone.stderr
    served.stderr = "\n".join(line for line in served.stderr.splitlines() if ANSWERED not in line)
    return served, alone


def test_reads_match_the_in_process_cli(served: Path) -> None:
    first = run_gitmem("--root", str(served), "remember", "Staging listens on port 5433",
                       "--layer", "semantic", "--topic", "staging")
    assert first.returncode == 0, first.stderr
    for args in (["search", "staging port"], ["search", "staging", "--json"], ["search", "nothing-like-this"],
                 ["show", first.stdout.strip()], ["show", "global-sem-9999"], ["list", "--json"],
                 ["context"], ["context", "--json"], ["search", "--limit", "oops", "x"],
                 ["show", "not an id"]):
        served_run, alone = both(served, *args)
        assert (served_run.returncode, served_run.stdout) == (alone.returncode, alone.stdout), args
        assert served_run.stderr.strip() == alone.stderr.strip(), args
    status = json.loads(run_gitmem("--root", str(served), "status", "--json").stdout)
    assert status["server"]["up"] is True and status["entries"] == 1


def test_history_reads_match_the_in_process_cli(served: Path) -> None:
    """why, log ID and as-of are answered warm (no pygit2 to load), and say the same."""
    first = run_gitmem("--root", str(served), "remember", "Staging listens on port 5433",
                       "--layer", "semantic", "--topic", "staging")
    entry_id = first.stdout.strip()
    today = datetime.now().date().isoformat()
    for args in (["why", entry_id], ["why", entry_id, "--all", "--json"], ["log", entry_id],
                 ["log", entry_id, "--all", "--json"], ["as-of", today, "show", entry_id],
                 ["why", "global-sem-9999"], ["as-of", "1999-01-01", "show", entry_id]):
        served_run, alone = both(served, *args)
        assert (served_run.returncode, served_run.stdout) == (alone.returncode, alone.stdout), args
        assert served_run.stderr.strip() == alone.stderr.strip(), args


def test_writes_through_the_server_land_in_the_store(served: Path) -> None:
    done = run_gitmem("-v", "--root", str(served), "remember", "-", "--layer", "learnings",
                      input_text="Run the migrations before the deploy\n")
    assert done.returncode == 0 and ANSWERED in done.stderr, done.stderr
    entry_id = done.stdout.strip()
    assert entry_id.startswith("global-lrn-")
    assert "Run the migrations before the deploy" in git(served, "show", "HEAD")
    again = run_gitmem("--root", str(served), "remember", "Run the migrations before the deploy",
                       "--layer", "learnings", env=OFF)
    assert again.stdout.strip() == entry_id  # the in-process CLI sees the server's write
    for args in (["verify", entry_id], ["forget", entry_id], ["forget", entry_id, "--undo"]):
        step = run_gitmem("-v", "--root", str(served), *args)
        assert step.returncode == 0 and ANSWERED in step.stderr, (args, step.stderr)
    assert "forget" in git(served, "log", "--format=%s", "-3")


def test_a_hand_edit_between_two_requests_is_seen(served: Path) -> None:
    missed = run_gitmem("-v", "--root", str(served), "search", "zanzibar")
    assert missed.returncode == 1 and ANSWERED in missed.stderr
    topic = served / "global" / "semantic" / "travel.md"
    topic.parent.mkdir(parents=True, exist_ok=True)
    topic.write_text("---\ntopic: travel\n---\n# travel\n\n## The offsite is in Zanzibar\n"
                     "Flights are booked through the usual agency.\n", encoding="utf-8")
    found = run_gitmem("-v", "--root", str(served), "search", "zanzibar", "--json")
    assert found.returncode == 0 and ANSWERED in found.stderr, found.stderr
    assert [hit["title"] for hit in json.loads(found.stdout)] == ["The offsite is in Zanzibar"]
    topic.write_text(topic.read_text(encoding="utf-8").replace("Zanzibar", "Lisbon"), encoding="utf-8")
    assert run_gitmem("--root", str(served), "search", "zanzibar").returncode == 1


def test_workspace_and_environment_come_from_the_caller(served: Path, tmp_path: Path) -> None:
    repo = tmp_path / "code" / "shop"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", "git@example.com:acme/shop.git")
    sub = repo / "src"
    sub.mkdir()
    done = run_gitmem("-v", "--root", str(served), "remember", "Shop uses Postgres 16",
                      "--layer", "semantic", "--scope", "workspace", cwd=sub)
    assert done.returncode == 0 and ANSWERED in done.stderr, done.stderr
    assert done.stdout.startswith("acme-shop-sem-")
    card, alone = both(served, "context", cwd=sub)
    assert card.stdout == alone.stdout and "workspace acme-shop" in card.stdout
    refused = run_gitmem("-v", "--root", str(served), "remember", "x y z", "--layer", "semantic",
                         env={"GITMEM_SUBAGENT": "1"})
    assert refused.returncode != 0 and ANSWERED in refused.stderr
    root_from_env = run_gitmem("-v", "search", "Postgres", cwd=tmp_path, env={"GITMEM_ROOT": str(served)})
    assert root_from_env.returncode == 0 and ANSWERED in root_from_env.stderr
    assert "Shop uses Postgres 16" in root_from_env.stdout


def test_without_a_server_nothing_is_said_unless_asked(store: Store) -> None:
    told = run_gitmem("--root", str(store.root), "search", "anything",
                      env={"GITMEM_VERBOSE": "1", "GITMEM_SERVE": "manual"})
    assert told.returncode == 1 and "no server for this store" in told.stderr
    assert "started a gitmem server" not in told.stderr
    quiet = run_gitmem("--root", str(store.root), "search", "anything")  # starts one, silently
    assert quiet.returncode == 1 and "server" not in quiet.stderr


def test_a_stale_socket_is_ignored_and_a_new_server_starts(store: Store) -> None:
    import socket

    path = store.root / "state" / "serve.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    by_short_name(str(path), sock.bind)
    sock.close()  # the file stays, nobody listens: what a killed server leaves
    assert path.exists()
    done = run_gitmem("-v", "--root", str(store.root), "remember", "Deploys run at noon", "--layer", "semantic")
    assert done.returncode == 0 and "no server answers" in done.stderr, done.stderr
    assert "started a gitmem server in the background" in done.stderr
    assert done.stdout.startswith("global-sem-")
    wait_for_server(store.root)
    found = run_gitmem("-v", "--root", str(store.root), "search", "noon")
    assert found.returncode == 0 and ANSWERED in found.stderr


def test_agent_hooks_get_their_payload_through_the_server(served: Path) -> None:
    assert run_gitmem("--root", str(served), "remember", "Staging listens on port 5433",
                      "--layer", "semantic").returncode == 0
    payload = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s1",
                          "prompt": "which port does staging listen on?"})
    for args in (["search", "--hook"], ["context", "--hook"]):
        served_run, alone = both(served, *args, input_text=payload)
        assert (served_run.returncode, served_run.stdout) == (alone.returncode, alone.stdout), args
    hooked = run_gitmem("--root", str(served), "search", "--hook", input_text=payload)
    assert "5433" in hooked.stdout


@pytest.mark.parametrize("zone", [None, "Pacific/Kiritimati", "Etc/GMT+12"])
def test_every_verb_prints_the_same_through_the_server(tmp_path: Path, zone: str | None) -> None:
    """The same calls (writes and reads, with --json and without, from a workspace, with input,
    in the caller's time zone) on two new stores, one through its server and one in-process:
    the same output, exit codes and ids (the root's path aside), the same commit times' offsets,
    then the same status."""
    from gitmem.store.store import Store as Fresh
    from servers import QUIET, start_server, stop

    repo = tmp_path / "code" / "shop"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", "git@example.com:acme/shop.git")
    roots = [tmp_path / "a" / "store", tmp_path / "b" / "store"]
    for root in roots:
        fresh = Fresh(root, cwd=root.parent)
        fresh.init()
        fresh.close()
    calls: list[tuple[list[str], str | None]] = [
        (["remember", "Staging listens on port 5433", "--layer", "semantic"], None),
        (["remember", "-", "--layer", "learnings", "--scope", "workspace"], "Run migrations first\n"),
        (["decision", "Use Postgres 16", "--rationale", "-", "--topic", "db"], "It has the features\n"),
        (["verify", "global-sem-0001"], None),
        (["forget", "global-sem-0001"], None),
        (["forget", "global-sem-0001", "--undo"], None),
        (["state", "Build", "make all"], None),
        (["working", "--section", "Task", "--content", "Ship the cart"], None),
        (["working", "--activity", "Looked at the cart"], None),
        (["remember", "x", "--layer", "nonsense"], None),
        (["forget", "global-sem-9999"], None),
        (["remember", "Deploys run at noon", "--layer", "semantic", "--json"], None),
        (["verify", "global-sem-0001", "--json"], None),
        (["state", "Test", "make test", "--json"], None),
        (["working", "--activity", "Read the deploy notes", "--json"], None),
        (["search", "staging port"], None), (["search", "deploys noon", "--json"], None),
        (["search", "--limit", "oops", "x"], None),
        (["list"], None), (["list", "--json"], None), (["show", "global-sem-0001", "--json"], None),
        (["show", "global-sem-0001"], None), (["context"], None), (["context", "--json"], None),
        (["context", "--cwd", "."], None), (["context", "--cwd", "no-such-folder"], None),
    ]
    tz = {"TZ": zone} if zone else {}
    proc = start_server(roots[0], *QUIET)
    try:
        for args, stdin in calls:
            served = run_gitmem("-v", "--root", str(roots[0]), *args, cwd=repo, input_text=stdin, env=tz)
            assert ANSWERED in served.stderr, (args, served.stderr)
            alone = run_gitmem("--root", str(roots[1]), *args, cwd=repo, input_text=stdin, env={**tz, **OFF})
            err = "\n".join(line for line in served.stderr.splitlines() if ANSWERED not in line)
            same = [text.replace(str(roots[0]), "ROOT") for text in (served.stdout, err.strip())]
            other = [t.replace(str(roots[1]), "ROOT") for t in (alone.stdout, alone.stderr.strip())]
            assert served.returncode == alone.returncode, args
            # each call runs on the served store and then on the other: a minute may turn between them
            assert all(same_but_the_clock(a, b) for a, b in zip(same, other, strict=True)), (args, same, other)
        offsets = [git(root, "log", "--format=%ad", "--date=format:%z") for root in roots]
        assert offsets[0] == offsets[1]
        statuses = []
        for root, env in ((roots[0], None), (roots[1], OFF)):
            data = json.loads(run_gitmem("--root", str(root), "status", "--json", cwd=repo, env=env).stdout)
            data["metrics"] = {k: v for k, v in data["metrics"].items() if k not in ("since", "updated")}
            statuses.append({k: v for k, v in data.items() if k not in ("root", "head", "server")})
        assert statuses[0] == statuses[1]
    finally:
        stop(proc)


def test_the_comparison_forgives_a_minute_turning_but_not_a_time_zone() -> None:
    assert same_but_the_clock("- 2026-12-05 01:25 — Read", "- 2026-12-05 01:26 — Read")
    assert same_but_the_clock("(2026-12-04)", "(2026-12-05)")
    assert not same_but_the_clock("- 2026-12-05 01:25 — Read", "- 2026-12-05 13:25 — Read")
    assert not same_but_the_clock("- 2026-12-05 01:25 — Read", "- 2026-12-05 01:25 — Wrote")
    assert not same_but_the_clock("(2026-12-05)", "(2026-12-04)")


def test_an_output_that_fails_is_told_as_the_command_line_tells_it(served: Path) -> None:
    """The answer of the server written to a full disk: one line, exit 3, no traceback (as a call
    run in its own process says it: tests/cli/test_messages.py)."""
    run_gitmem("--root", str(served), "remember", "The staging cluster has three nodes", "-l", "semantic")
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "gitmem", "--root", str(served), "-v", "list", "--json"],
                              stdout=full, stderr=subprocess.PIPE, text=True)
    assert ANSWERED in done.stderr
    assert done.returncode == 3 and "No space left on device" in done.stderr
    assert "Traceback" not in done.stderr
