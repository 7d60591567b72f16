"""Capture while the session runs: the Stop hook (`capture --hook --turn`) that `integrate
claude-code` installs captures at a turn's end in the background, at most every
capture.turnMinutes minutes per session, and each capture reads only the turns since the last."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from gitmem.integrate.turns import TURNS_FILE
from gitmem.store.store import Store
from gitmem.verbs.workspaces import associate
from support import Cli, git, run_gitmem

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SESSION = "4f2a9c1e-7d3b-4c55-9a1e-2b8f0c6d7e11"


@pytest.fixture
def project(store: Store, tmp_path: Path) -> Path:
    folder = tmp_path / "acme-api"
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    associate(store, "acme-api", "The API", folder.resolve())
    # Every turn has something to keep: no delta waits for more signal.
    assert run_gitmem("--root", str(store.root), "config", "set", "capture.minSignalChars", "0").returncode == 0
    return folder


def stop_payload(project: Path, transcript: Path, event: str = "stop") -> str:
    data = json.loads((FIXTURES / "hooks" / f"{event}.json").read_text())
    data.update(cwd=str(project), transcript_path=str(transcript))
    return json.dumps(data)


def turn_end(store: Store, project: Path, transcript: Path) -> str:
    done = run_gitmem("--root", str(store.root), "capture", "--hook", "--turn",
                      input_text=stop_payload(project, transcript))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout.strip()


def captures(root: Path) -> list[dict[str, object]]:
    """The capture records of logs/memory.log, oldest first."""
    log = root / "logs" / "memory.log"
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return [r for r in map(json.loads, lines) if r.get("event") == "capture"]


def wait_for_captures(root: Path, count: int, seconds: float = 60.0) -> list[dict[str, object]]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = captures(root)
        if len(found) >= count:
            return found
        time.sleep(0.1)
    raise AssertionError(f"{count} capture(s) expected, found {len(captures(root))}")


def write_lines(transcript: Path, lines: list[str]) -> None:
    transcript.write_text("".join(lines), encoding="utf-8")


def test_integrate_installs_the_stop_hook_and_remove_takes_it_out(gm: Cli, tmp_path: Path) -> None:
    folder = tmp_path / "fresh"
    folder.mkdir()
    assert gm("integrate", "claude-code", "--project", str(folder)).exit_code == 0
    settings = json.loads((folder / ".claude" / "settings.json").read_text())
    [group] = settings["hooks"]["Stop"]
    assert group["hooks"][0]["command"].endswith("capture --hook --turn")
    gm("integrate", "claude-code", "--project", str(folder), "--remove")
    assert not (folder / ".claude" / "settings.json").exists()


def test_turns_are_captured_incrementally_and_throttled_per_session(store: Store, project: Path,
                                                                    tmp_path: Path) -> None:
    lines = (FIXTURES / "transcripts" / "claude-code.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    transcript = tmp_path / "session.jsonl"
    write_lines(transcript, lines[:9])
    started = turn_end(store, project, transcript)
    assert started.endswith("started in the background")
    [first] = wait_for_captures(store.root, 1)
    # The first 9 lines: a summary line and 8 events; the watermark stands after line 9.
    assert first["new_events"] == 8 and first["result"] == "notes"
    assert json.loads((store.root / "state" / "sessions.json").read_text())[SESSION]["events"] == 9

    # The next turn ends a moment later: the session was captured less than 10 minutes ago.
    write_lines(transcript, lines)
    skipped = turn_end(store, project, transcript)
    assert skipped.startswith("capture skipped: this session's last capture started 0 minute(s) ago")
    assert "capture.turnMinutes is 10" in skipped

    # Eleven minutes on (the record of the last start moved back): only the new turns are read.
    turns_file = store.root / TURNS_FILE
    record = json.loads(turns_file.read_text())
    record[SESSION]["started"] -= 11 * 60
    turns_file.write_text(json.dumps(record))
    assert turn_end(store, project, transcript).endswith("started in the background")
    second = wait_for_captures(store.root, 2)[1]
    assert second["new_events"] == 5 and second["session"] == SESSION  # lines 10-15, not 1-15
    assert len(list((store.root / "digests").rglob("*.md"))) >= 1
    marks = json.loads((store.root / "state" / "sessions.json").read_text())
    assert marks[SESSION]["events"] == len(lines)  # the watermark: nothing is read twice


def test_a_compaction_capture_counts_and_zero_minutes_captures_every_turn(store: Store, project: Path,
                                                                         tmp_path: Path) -> None:
    lines = (FIXTURES / "transcripts" / "claude-code.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    transcript = tmp_path / "session.jsonl"
    write_lines(transcript, lines[:9])
    compacted = run_gitmem("--root", str(store.root), "capture", "--hook",
                           input_text=stop_payload(project, transcript, "pre_compact"))
    assert compacted.returncode == 0 and "started in the background" in compacted.stdout
    wait_for_captures(store.root, 1)
    assert turn_end(store, project, transcript).startswith("capture skipped")
    assert run_gitmem("--root", str(store.root), "config", "set", "capture.turnMinutes", "0").returncode == 0
    write_lines(transcript, lines)
    assert turn_end(store, project, transcript).endswith("started in the background")
    assert wait_for_captures(store.root, 2)[1]["new_events"] == 5


def test_the_setting_is_validated_and_turn_needs_hook(store: Store) -> None:
    root = str(store.root)
    refused = run_gitmem("--root", root, "config", "set", "capture.turnMinutes", "-5")
    assert refused.returncode != 0 and refused.stderr.startswith("gitmem: error: capture.turnMinutes cannot be")
    shown = json.loads(run_gitmem("--root", root, "config", "get", "capture.turnMinutes", "--json").stdout)
    assert shown["value"] == 10 and shown["explicit"] is False
    alone = run_gitmem("--root", root, "capture", "--turn", "x.jsonl")
    assert alone.returncode == 2 and "--turn goes with --hook" in alone.stderr


def test_the_quick_path_and_the_command_line_throttle_alike(store: Store, project: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from gitmem.cli import cli

    transcript = tmp_path / "session.jsonl"
    transcript.write_text((FIXTURES / "transcripts" / "claude-code.jsonl").read_text(encoding="utf-8"))
    assert turn_end(store, project, transcript).endswith("started in the background")  # the quick path
    quick = turn_end(store, project, transcript)
    through_click = CliRunner().invoke(cli, ["--root", str(store.root), "capture", "--hook", "--turn"],
                                       input=stop_payload(project, transcript))
    assert quick.startswith("capture skipped") and through_click.stdout.strip() == quick
    wait_for_captures(store.root, 1)
    # A memory.json that does not parse: the quick decision steps aside, the store's own
    # reading (its last good version from git) decides, and the turn is still throttled.
    (store.root / "memory.json").write_text("{ not json")
    assert turn_end(store, project, transcript).startswith("capture skipped")


def test_the_written_stop_command_captures_as_claude_code_runs_it(gm: Cli, store: Store, project: Path,
                                                                   tmp_path: Path) -> None:
    import subprocess

    assert gm("integrate", "claude-code", "--project", str(project)).exit_code == 0
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    [command] = [h["command"] for g in settings["hooks"]["Stop"] for h in g["hooks"]]
    transcript = tmp_path / "session.jsonl"
    transcript.write_text((FIXTURES / "transcripts" / "claude-code.jsonl").read_text(encoding="utf-8"))
    done = subprocess.run(command, shell=True, input=stop_payload(project, transcript), capture_output=True,
                          text=True, cwd=project, timeout=60)
    assert done.returncode == 0 and done.stdout.strip().endswith("started in the background"), done.stderr
    assert wait_for_captures(store.root, 1)[0]["session"] == SESSION
    again = subprocess.run(command, shell=True, input=stop_payload(project, transcript), capture_output=True,
                           text=True, cwd=project, timeout=60)
    assert again.returncode == 0 and again.stdout.startswith("capture skipped")
