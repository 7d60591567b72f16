"""Agent hooks through the warm server: as fresh as in their own process, and never held up by
a server that does not answer."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.caller import by_short_name
from gitmem.serve import wire
from gitmem.store.store import Store
from support import run_gitmem

ANSWERED = "answered by the gitmem server"


def prompt(text: str, cwd: Path) -> str:
    return json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s1", "cwd": str(cwd),
                       "prompt": text})


def test_the_prompt_hook_sees_a_hand_edit_made_just_before_it(served: Path) -> None:
    assert run_gitmem("--root", str(served), "remember", "Staging listens on port 5433",
                      "--layer", "semantic", "--topic", "staging").returncode == 0
    ask = prompt("which port does staging listen on?", served)
    first = run_gitmem("-v", "--root", str(served), "search", "--hook", input_text=ask)
    assert ANSWERED in first.stderr and "5433" in first.stdout
    topic = served / "global" / "semantic" / "staging.md"
    topic.write_text(topic.read_text().replace("5433", "6543"))  # no commit, no pause
    again = run_gitmem("-v", "--root", str(served), "search", "--hook", input_text=ask)
    assert ANSWERED in again.stderr and again.returncode == 0
    assert "6543" in again.stdout and "5433" not in again.stdout


def test_a_server_that_does_not_answer_leaves_the_hook_to_answer_itself(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITMEM_SERVE", "manual")  # the socket below is the only "server"
    assert run_gitmem("--root", str(store.root), "remember", "Staging listens on port 5433",
                      "--layer", "semantic").returncode == 0
    path = wire.socket_path(str(store.root))
    mute = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    by_short_name(path, mute.bind)
    mute.listen(4)  # connections queue and are never read: a hung server
    try:
        # The guard only stops a hang (every other verb would wait up to 900 s here).
        done = subprocess.run([sys.executable, "-m", "gitmem", "-v", "--root", str(store.root),
                               "search", "--hook"], capture_output=True, text=True, env=os.environ,
                              input=prompt("which port does staging listen on?", store.root),
                              timeout=120)
    finally:
        mute.close()
    assert done.returncode == 0 and "5433" in done.stdout
    assert "the server did not answer" in done.stderr and ANSWERED not in done.stderr


def test_a_hook_answered_by_the_server_loads_no_heavy_module(served: Path) -> None:
    """What the prompt hook's process pays: the client, nothing of the search or the CLI."""
    code = ("import sys; from gitmem.serve.client import forward\n"
            f"code = forward(['--root', {str(served)!r}, 'search', '--hook'])\n"
            "heavy = ('click', 'pygit2', 'whoosh', 'markdown_it', 'json', 're', 'typing', 'socket',"
            " 'contextlib', 'dataclasses')\n"
            "print(code, sorted(m for m in heavy if m in sys.modules), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          input=prompt("which port does staging listen on?", served))
    assert done.stderr.strip().splitlines()[-1] == "0 []"


def test_the_card_s_changes_reach_a_long_session_through_the_server(served: Path) -> None:
    root = str(served)
    assert run_gitmem("--root", root, "config", "set", "context.refreshMinutes", "5").returncode == 0
    start = json.dumps({"hook_event_name": "SessionStart", "session_id": "s1", "cwd": root,
                        "source": "startup"})
    card = run_gitmem("-v", "--root", root, "context", "--hook", input_text=start)
    assert ANSWERED in card.stderr and card.returncode == 0
    assert run_gitmem("--root", root, "remember", "Another session learned: staging needs the VPN",
                      "--layer", "learnings").returncode == 0
    record_file = served / "state" / "injections.json"
    records = json.loads(record_file.read_text())
    records["s1"]["at"] -= 6 * 60  # six minutes on
    record_file.write_text(json.dumps(records))
    changed = run_gitmem("-v", "--root", root, "search", "--hook", input_text=prompt("hello there", served))
    assert ANSWERED in changed.stderr and changed.returncode == 0
    text = json.loads(changed.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "changed since this session's card" in text and "staging needs the VPN" in text
