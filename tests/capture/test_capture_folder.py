"""`gitmem capture FOLDER` through the real CLI: every transcript under the folder, each from where
its last capture stopped; a bad file is reported and skipped; progress only on a terminal."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import run_gitmem

SAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"


def session_folder(tmp_path: Path) -> Path:
    """A folder of sessions as agents leave them: nested by project and day, plus stray files."""
    root = tmp_path / "sessions"
    (root / "claude" / "-home-dana-src-shop").mkdir(parents=True)
    (root / "codex" / "2026" / "12" / "02").mkdir(parents=True)
    shutil.copy(SAMPLES / "claude-code.jsonl", root / "claude" / "-home-dana-src-shop" / "4f2a9c1e.jsonl")
    shutil.copy(SAMPLES / "codex.jsonl", root / "codex" / "2026" / "12" / "02" / "rollout-2026-12-02.jsonl")
    shutil.copy(SAMPLES / "generic.jsonl", root / "retro.jsonl")
    (root / "notes.txt").write_text("not a transcript, not even looked at\n")
    (root / "codex" / "broken.jsonl").write_text('{"neither": "format"}\n{"still": "nothing"}\n')
    return root


def capture_json(store_root: Path, *args: str) -> tuple[int, dict[str, object], str]:
    done = run_gitmem("--root", str(store_root), "capture", *args, "--no-model", "--json")
    return done.returncode, json.loads(done.stdout), done.stderr


def test_a_folder_is_captured_file_by_file_and_a_bad_file_is_skipped(store_root: Path, gm: object, tmp_path: Path) -> None:
    folder = session_folder(tmp_path)
    code, report, stderr = capture_json(store_root, str(folder))
    assert code == 0, stderr
    assert report["results"] == {"notes": 3} and report["transcripts"] == 4
    formats = sorted(r["format"] for r in report["reports"])  # type: ignore[union-attr]
    assert formats == ["claude-code", "codex", "jsonl"]
    [skipped] = report["skipped"]  # type: ignore[misc]
    assert skipped["transcript"].endswith("broken.jsonl") and "cannot tell the format" in skipped["error"]
    assert len(list((store_root / "digests").glob("*.md"))) == 3
    assert "gitmem: capture [" not in stderr  # stderr is a pipe here: no progress line


def test_a_second_folder_capture_reads_only_what_grew(store_root: Path, gm: object, tmp_path: Path) -> None:
    folder = session_folder(tmp_path)
    capture_json(store_root, str(folder))
    with open(folder / "retro.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"role": "user", "ts": "2026-11-28T17:00:00Z", "content":
                                 "One more rule: a deploy on Thursday needs a second reviewer who was not "
                                 "the author, and the reviewer signs the ticket before the pipeline starts. "
                                 "The rollback command is tested on staging the day before, every time, "
                                 "and the result is pasted into the ticket with the time it took to roll "
                                 "back, so the on-call person knows how long a bad deploy will hurt. "
                                 "Nobody skips this for a one-line change: one-line changes broke "
                                 "checkout twice this year."}) + "\n")
    code, report, stderr = capture_json(store_root, str(folder))
    assert code == 0, stderr
    assert report["results"] == {"unchanged": 2, "notes": 1}  # the other two were not even opened
    [grown] = [r for r in report["reports"] if r["result"] == "notes"]  # type: ignore[union-attr]
    assert grown["transcript"].endswith("retro.jsonl") and grown["new_events"] == 1
    digest = (store_root / "digests" / f"{grown['digest']}.md").read_text()
    assert "second reviewer" in digest and "Friday deploy" not in digest


def test_progress_is_a_line_on_a_terminal(store_root: Path, gm: object, tmp_path: Path) -> None:
    folder = session_folder(tmp_path)
    leader, follower = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "gitmem", "--root", str(store_root), "capture",
                               str(folder), "--no-model"], stdout=subprocess.PIPE, stderr=follower,
                              text=True, env=os.environ.copy(), timeout=120)
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
    assert done.returncode == 0
    text = shown.decode()
    assert "gitmem: capture [" in text and "4/4 transcripts" in text
    assert "3 transcripts read" in done.stdout and "skipped" in done.stdout


def test_a_missing_path_and_an_unknown_format_are_one_line_errors(store_root: Path, gm: object, tmp_path: Path) -> None:
    done = run_gitmem("--root", str(store_root), "capture", str(tmp_path / "nowhere"), "--no-model")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"kind": "mystery"}\n')
    done = run_gitmem("--root", str(store_root), "capture", str(odd), "--no-model")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and "odd.jsonl" in done.stderr


def test_past_the_limit_the_watermarks_of_vanished_transcripts_go_first(
        store_root: Path, gm: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gitmem.capture import sessions

    monkeypatch.setattr(sessions, "MAX_SESSIONS", 2)
    kept = tmp_path / "kept.jsonl"
    kept.write_text("{}\n")
    sessions.save_watermark(store_root, "old-but-present", sessions.Watermark(
        offset=3, path=str(kept), updated="2026-01-01T00:00:00+00:00"))
    sessions.save_watermark(store_root, "gone", sessions.Watermark(
        offset=3, path=str(tmp_path / "deleted.jsonl"), updated="2026-12-01T00:00:00+00:00"))
    sessions.save_watermark(store_root, "new", sessions.Watermark(
        offset=3, path=str(kept), updated="2026-12-02T00:00:00+00:00"))
    assert sessions.load_watermark(store_root, "old-but-present").offset == 3
    assert sessions.load_watermark(store_root, "gone").offset == 0


def test_generic_logs_named_alike_in_two_folders_are_two_sessions(store_root: Path, gm: object,
                                                                  tmp_path: Path) -> None:
    """`billing/session.jsonl` and `search/session.jsonl` name no session in their lines: each is
    captured (they shared one watermark, and the older one was never read)."""
    root = tmp_path / "logs"
    for name, day in (("billing", "2026-11-30"), ("search", "2026-11-29")):
        (root / name).mkdir(parents=True)
        lines = [json.dumps({"role": "user", "ts": f"{day}T10:0{i}:00Z", "content":
                             f"{name} fact {i}: the {name} service must run on port {6000 + i} and "
                             "be restarted nightly by the ops rota; keep this for the runbook."})
                 for i in range(4)]
        (root / name / "session.jsonl").write_text("\n".join(lines) + "\n")
    code, report, stderr = capture_json(store_root, str(root))
    assert code == 0, stderr
    assert report["results"] == {"notes": 2}
    digests = "\n".join(p.read_text() for p in (store_root / "digests").glob("*.md"))
    assert "billing fact" in digests and "search fact" in digests
    again, report, _ = capture_json(store_root, str(root))
    assert again in (0, 1) and "notes" not in report["results"]  # type: ignore[operator]
