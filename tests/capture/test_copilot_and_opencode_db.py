"""GitHub Copilot CLI's session events and OpenCode's SQLite database through `gitmem capture`:
detected, filtered like the other formats, read again only where they grew; a database that is
locked, damaged or not OpenCode's is refused in one line naming it."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from fakemodels import fake_model
from gitmem.capture.digests import list_digests
from gitmem.capture.folder import capture_folder
from gitmem.capture.pipeline import capture as capture_transcript
from gitmem.models import config
from gitmem.store.store import Store
from support import Cli, capture, digest_text

SAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"
COPILOT_MAIN = "3f0c9a12-6b7d-4e21-9c3a-5d8e7f1a2b3c"
COPILOT_SECOND = "7b2e4d6f-1a3c-4b5d-8e9f-0a1b2c3d4e5f"
OPENCODE_HOURS = "ses_5e1f00a1b2c3OeffnungsZeit1"
OPENCODE_PRICES = "ses_5e1f00a1b2c5MenuPrices0001"


def copilot_state(tmp_path: Path) -> Path:
    state = tmp_path / "home" / ".copilot" / "session-state"
    shutil.copytree(SAMPLES / "copilot" / "session-state", state)
    return state


def test_copilot_events_become_turns_and_tool_calls(gm: Cli, tmp_path: Path) -> None:
    events = copilot_state(tmp_path) / COPILOT_MAIN / "events.jsonl"
    report = capture(gm, events)
    assert (report["format"], report["session"], report["result"]) == ("copilot", COPILOT_MAIN, "notes")
    assert report["paths"] == ["billing/invoice.py", "billing/rounding.py"]
    assert report["tool_calls"] == 3 and report["turns"] == 4
    assert report["dropped"]["thinking"] == 2 and report["dropped"]["tool results"] == 2
    assert report["dropped"]["injected"] == 1 and report["dropped"]["sidechain"] == 1
    text = digest_text(gm, report)
    assert "nur einmal runden, auf der Gesamtsumme" in text and "immer int Cent. 💶" in text
    assert "ganze Cent-Werte" in text
    assert "DOPPELT" not in text and "current_datetime" not in text  # tool output, Copilot's own context
    assert "refunds module" not in text and "terminal assistant" not in text  # a subagent's reply, the system prompt


def test_copilot_session_is_read_again_only_where_it_grew(gm: Cli, tmp_path: Path) -> None:
    events = copilot_state(tmp_path) / COPILOT_SECOND / "events.jsonl"
    first = capture(gm, events)
    assert first["dropped"]["unreadable lines"] == 1 and first["turns"] == 2
    assert "second reviewer" in digest_text(gm, first)
    with open(events, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": "user.message", "id": "f06", "timestamp": "2026-12-04T15:00:00.000Z",
                                 "data": {"content": "Also: the freeze ends Monday 08:00, not Sunday night."}}) + "\n")
    again = capture(gm, events)
    assert again["new_events"] == 1 and "Monday 08:00" in digest_text(gm, again)


def test_a_copilot_folder_captures_each_session_and_skips_the_unknown_one_by_name(gm: Cli, tmp_path: Path) -> None:
    state = copilot_state(tmp_path)
    report = gm.json("capture", str(state), "--no-model", "--min-signal", "0")
    assert isinstance(report, dict)
    assert sorted(r["session"] for r in report["reports"]) == [COPILOT_MAIN, COPILOT_SECOND]
    [skipped] = report["skipped"]
    assert "c4d5e6f7" in skipped["transcript"] and "cannot tell the format of events.jsonl" in skipped["error"]


def test_an_unknown_format_is_refused_by_name(gm: Cli, tmp_path: Path) -> None:
    events = copilot_state(tmp_path) / COPILOT_MAIN / "events.jsonl"
    refused = gm("capture", str(events), "--format", "cursor")
    assert refused.exit_code == 2 and "cursor" in refused.stderr and "Traceback" not in refused.output
    unknown = tmp_path / "chat.jsonl"
    unknown.write_text('{"kind": "Prompt"}\n')
    refused = gm("capture", str(unknown))
    assert refused.exit_code == 2 and "cannot tell the format of chat.jsonl" in refused.stderr


def opencode_db(tmp_path: Path) -> Path:
    """OpenCode's database in its data folder, built from the SQL fixture, beside its snapshots."""
    data = tmp_path / "share" / "opencode"
    (data / "snapshot" / "9c0d1e2f").mkdir(parents=True)
    (data / "snapshot" / "9c0d1e2f" / "stray.jsonl").write_text('{"role": "user", "content": "not a session"}\n')
    path = data / "opencode.db"
    with sqlite3.connect(path) as db:
        db.executescript((SAMPLES / "opencode" / "opencode-db.sql").read_text(encoding="utf-8"))
    return path


def test_opencode_database_sessions_are_captured_each_on_its_own(gm: Cli, tmp_path: Path) -> None:
    path = opencode_db(tmp_path)
    report = capture(gm, path)
    assert report["folder"] == str(path) and report["skipped"] == []
    found = {r["session"]: r for r in report["reports"]}
    assert {s: r["result"] for s, r in found.items()} == {
        OPENCODE_HOURS: "notes", "ses_5e1f00a1b2c4SubagentExplore": "subagent", OPENCODE_PRICES: "notes"}
    hours = found[OPENCODE_HOURS]
    assert hours["format"] == "opencode" and hours["paths"] == ["src/i18n/de.py"] and hours["tool_calls"] == 2
    assert hours["dropped"]["unreadable rows"] == 1 and hours["dropped"]["thinking"] == 1
    text = digest_text(gm, hours)
    assert "„喫茶 さくら“" in text and "bayerischen Kalender" in text and "einzigen Quelle" in text
    assert "kopiert aus hours.py" not in text  # a tool's output is never read
    assert "Ich stelle die Feiertage um auf" not in text  # the reply being written waits
    assert found[OPENCODE_PRICES]["paths"] == ["src/menu/price.py"]
    assert "net_for_kitchen" in digest_text(gm, found[OPENCODE_PRICES])


def test_opencode_database_is_read_again_only_where_a_session_grew(gm: Cli, tmp_path: Path) -> None:
    path = opencode_db(tmp_path)
    capture(gm, path)
    with sqlite3.connect(path) as db:
        (data,) = db.execute("SELECT data FROM message WHERE id = 'msg_5e1f00a1c004AssistantRunng1'").fetchone()
        message = json.loads(data)
        message["time"]["completed"] = message["time"]["created"] + 4000
        db.execute("UPDATE message SET data = ? WHERE id = 'msg_5e1f00a1c004AssistantRunng1'", (json.dumps(message),))
        db.execute("UPDATE part SET data = ? WHERE id = 'prt_5e1f00a1d301Partial0000001'", (json.dumps(
            {"type": "text", "text": "Die Feiertage folgen jetzt dem bayerischen Kalender (holidays.BY) in src/hours.py."}),))
    again = capture(gm, path)
    assert again["results"] == {"unchanged": 1, "subagent": 1, "notes": 1}
    [grown] = [r for r in again["reports"] if r["session"] == OPENCODE_HOURS]
    assert grown["new_events"] == 1 and "holidays.BY" in digest_text(gm, grown)


def test_opencode_data_folder_walks_the_database_not_the_snapshots(gm: Cli, tmp_path: Path) -> None:
    path = opencode_db(tmp_path)
    storage = path.parent / "storage"
    shutil.copytree(SAMPLES / "opencode" / "storage", storage)
    report = capture(gm, path.parent)
    assert report["skipped"] == []
    sessions = sorted(r["session"] for r in report["reports"])
    assert sessions == sorted([OPENCODE_HOURS, OPENCODE_PRICES, "ses_5e1f00a1b2c4SubagentExplore",
                               "ses_7a1b2c3d4ffeA1b2C3d4E5f6G7", "ses_7a1b2c3d5ffeSubagentTask01"])


def test_a_session_moved_from_the_json_storage_into_the_database_goes_on_where_it_stopped(
        gm: Cli, tmp_path: Path) -> None:
    storage = tmp_path / "share" / "opencode" / "storage"
    shutil.copytree(SAMPLES / "opencode" / "storage", storage)
    [session_file] = storage.glob("session/*/ses_7a1b2c3d4ffeA1b2C3d4E5f6G7.json")
    assert capture(gm, session_file)["result"] == "notes"
    path = opencode_db(tmp_path)
    with sqlite3.connect(path) as db:  # what OpenCode's migration does: the same ids, as rows
        info = json.loads(session_file.read_text())
        db.execute("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, "
                   "time_updated) VALUES (?, '9c0d1e2f3a4b5c6d7e8f90a1b2c3d4e5f6a7b8c9', 's', ?, ?, ?, ?, ?)",
                   (info["id"], info["directory"], info["title"], info["version"], info["time"]["created"],
                    info["time"]["updated"]))
        for file in sorted(storage.glob(f"message/{info['id']}/*.json")):
            message = json.loads(file.read_text())
            db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (message.pop("id"), message.pop("sessionID"),
                       message["time"]["created"], message["time"]["created"], json.dumps(message)))
            for part_file in sorted(storage.glob(f"part/{file.stem}/*.json")):
                part = json.loads(part_file.read_text())
                db.execute("INSERT INTO part VALUES (?, ?, ?, 0, 0, ?)", (part.pop("id"), part.pop("messageID"),
                           part.pop("sessionID"), json.dumps(part)))
    report = capture(gm, path)
    [moved] = [r for r in report["reports"] if r["session"] == info["id"]]
    assert moved["new_events"] == 0  # nothing read twice: the last reply is still being written


def test_a_database_that_is_not_opencodes_or_is_damaged_is_refused_in_one_line(gm: Cli, tmp_path: Path) -> None:
    other = tmp_path / "notes.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE note (id integer, text text)")
    refused = gm("capture", str(other))
    assert refused.exit_code == 2 and "cannot tell the format of notes.db" in refused.stderr
    damaged = tmp_path / "opencode.db"
    damaged.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    refused = gm("capture", str(damaged))
    assert refused.exit_code == 2 and str(damaged) in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and "Traceback" not in refused.output


def test_a_locked_database_waits_for_a_later_capture(gm: Cli, tmp_path: Path) -> None:
    path = opencode_db(tmp_path)
    holder = subprocess.Popen(  # another process holds the database's exclusive lock
        [sys.executable, "-c", "import sqlite3, sys; db = sqlite3.connect(sys.argv[1], isolation_level=None); "
         "db.execute('BEGIN EXCLUSIVE'); print('held', flush=True); sys.stdin.read()", str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        refused = gm("capture", str(path), "--no-model")
    finally:
        holder.communicate("")
    assert refused.exit_code == 3 and "locked" in refused.stderr and str(path) in refused.stderr
    assert not (gm.root / "digests").exists() or not list((gm.root / "digests").glob("*.md"))


def test_database_sessions_go_to_the_model_and_a_failed_summary_waits_for_the_next_pass(
        store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_MODEL_LOG", str(tmp_path / "model-calls.log"))
    path = opencode_db(tmp_path)
    config.add_rung(store.root, "fail", fake_model(tmp_path, "fail"))
    failed = capture_folder(store, path, min_signal=0)
    assert failed.failed and sorted(r.result for r in failed.reports) == ["failed", "failed", "subagent"]
    assert list_digests(store.root) == []
    config.remove_rung(store.root, "fail")
    config.add_rung(store.root, "good", fake_model(tmp_path, "good"))
    done = capture_folder(store, path, min_signal=0)
    assert sorted(r.result for r in done.reports) == ["captured", "captured", "subagent"]
    assert all(r.model == "good" for r in done.reports if r.result == "captured")
    assert (tmp_path / "model-calls.log").read_text().split().count("good") == 2
    again = capture_folder(store, path, min_signal=0).results()  # the reply being written is looked at again
    assert again == {"unchanged": 1, "no-new-events": 1, "subagent": 1}


def test_copilot_session_is_summarized_by_the_model(store: Store, tmp_path: Path) -> None:
    config.add_rung(store.root, "good", fake_model(tmp_path, "good"))
    events = copilot_state(tmp_path) / COPILOT_MAIN / "events.jsonl"
    report = capture_transcript(store, events, min_signal=0)
    assert (report.format, report.result, report.model) == ("copilot", "captured", "good")
    assert report.workspace == "dana-cafe-shop"  # its folder is not on this machine: the repository names it
