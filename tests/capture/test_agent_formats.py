"""Aider, Gemini CLI and OpenCode transcripts through `gitmem capture`: detected, filtered like the
others, and read again only where they grew."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from support import Cli, capture, digest_text

SAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"
OPENCODE_SESSION = "ses_7a1b2c3d4ffeA1b2C3d4E5f6G7"


def test_aider_history_blocks_become_turns_tool_output_is_dropped(gm: Cli, tmp_path: Path) -> None:
    history = tmp_path / "shop" / ".aider.chat.history.md"
    history.parent.mkdir()
    shutil.copy(SAMPLES / "project.aider.chat.history.md", history)
    report = capture(gm, history)
    assert (report["format"], report["result"]) == ("aider", "notes")
    assert report["session"].startswith("aider-")
    assert report["paths"] == ["billing/invoice.py", "billing/rounding.py", "billing/README.md"]
    assert report["dropped"]["tool output"] == 7 and report["dropped"]["acknowledgements"] == 2
    text = digest_text(gm, report)
    assert "Round once, on the total" in text and "Where do we store the currency" in text
    assert "within a cent" in text  # the reply goes on after its edit block
    assert "Tokens:" not in text and "Aider v0.86" not in text and "/add" not in text
    assert "never store floats for money in this project. And write that down" in text  # one input, two lines
    assert [line for line in text.splitlines() if line.startswith("## ")] == ["## 2026-11-30", "## 2026-12-01"]


def test_aider_reads_only_the_new_session_and_waits_for_a_line_being_written(gm: Cli, tmp_path: Path) -> None:
    history = tmp_path / "project.aider.chat.history.md"
    shutil.copy(SAMPLES / "project.aider.chat.history.md", history)
    capture(gm, history)
    with open(history, "a", encoding="utf-8") as handle:
        handle.write("\n# aider chat started at 2026-12-03 08:00:00\n\n"
                     "#### Refunds go back to the original payment method, never to store credit.  \n\n"
                     "Refunds now always go back to the original payment method")  # mid-line
    report = capture(gm, history)
    assert report["new_events"] == 1 and report["turns"] == 1
    assert "original payment method, never to store credit" in digest_text(gm, report)
    with open(history, "a", encoding="utf-8") as handle:
        handle.write("; store credit is only offered, never applied by itself.\n")
    report = capture(gm, history)
    assert report["new_events"] == 1
    assert "never applied by itself" in digest_text(gm, report)


def gemini_project(tmp_path: Path, name: str) -> Path:
    """A chat file in Gemini CLI's place for it, the project's folder named in .project_root."""
    project = tmp_path / "home" / ".gemini" / "tmp" / "shop"
    (project / "chats").mkdir(parents=True)
    code = tmp_path / "src" / "shop"
    code.mkdir(parents=True)
    (project / ".project_root").write_text(f"{code}\n")
    chat = project / "chats" / f"session-2026-12-02T10-00-8c1d2e3f{Path(name).suffix}"
    shutil.copy(SAMPLES / name, chat)
    return chat


def test_gemini_jsonl_counts_a_message_written_twice_once(gm: Cli, tmp_path: Path) -> None:
    chat = gemini_project(tmp_path, "gemini-session.jsonl")
    report = capture(gm, chat)
    assert (report["format"], report["session"]) == ("gemini", "8c1d2e3f-4a5b-4c6d-9e8f-0a1b2c3d4e5f")
    assert report["tool_calls"] == 2 and report["turns"] == 2
    assert report["paths"] == ["export/orders.py"]  # absolute paths made relative to .project_root
    assert report["dropped"]["thinking"] == 1 and report["dropped"]["injected"] == 1
    text = digest_text(gm, report)
    assert "server-side cursor in batches of 5000" in text and "fetchall" not in text
    assert "Request cancelled" not in text and "should look at how rows" not in text


def test_gemini_subagent_chat_is_skipped(gm: Cli, tmp_path: Path) -> None:
    chat = gemini_project(tmp_path, "gemini-session.jsonl")
    lines = chat.read_text().splitlines()
    lines[0] = lines[0].replace('"kind":"main"', '"kind":"subagent"')
    chat.write_text("\n".join(lines) + "\n")
    assert capture(gm, chat)["result"] == "subagent"


def test_gemini_chat_document_is_read_by_message_when_rewritten(gm: Cli, tmp_path: Path) -> None:
    chat = gemini_project(tmp_path, "gemini-session.json")
    first = capture(gm, chat)
    assert (first["format"], first["result"], first["turns"]) == ("gemini", "notes", 2)
    assert first["paths"] == ["scripts/seed_demo.py"]
    data = json.loads(chat.read_text())
    data["messages"].append({"id": "a3", "timestamp": "2026-11-20T08:06:00.000Z", "type": "user",
                             "content": "Also: the demo tenant's admin password is rotated by the same reset, "
                                        "so nobody writes it into a slide or a ticket again."})
    chat.write_text(json.dumps(data, indent=2))  # Gemini rewrites the whole file
    second = capture(gm, chat)
    assert second["new_events"] == 1 and second["turns"] == 1
    assert "rotated by the same reset" in digest_text(gm, second)


def opencode_storage(tmp_path: Path) -> Path:
    storage = tmp_path / "share" / "opencode" / "storage"
    shutil.copytree(SAMPLES / "opencode" / "storage", storage)
    return storage


def session_file(storage: Path, session: str = OPENCODE_SESSION) -> Path:
    [found] = storage.glob(f"session/*/{session}.json")
    return found


def test_opencode_session_is_read_message_by_message(gm: Cli, tmp_path: Path) -> None:
    storage = opencode_storage(tmp_path)
    report = capture(gm, session_file(storage))
    assert (report["format"], report["session"], report["result"]) == ("opencode", OPENCODE_SESSION, "notes")
    assert report["paths"] == ["src/cart.py", "src/settings.py"] and report["tool_calls"] == 3
    assert report["dropped"]["thinking"] == 1 and report["dropped"]["injected"] == 1
    text = digest_text(gm, report)
    assert "expire after 7 days" in text and "CART_EXPIRY_DAYS" in text
    assert "Called the Read tool" not in text and "EXPIRY_DAYS = 30" not in text
    assert "You're wel" not in text  # the last reply has not completed: it waits
    running = next(storage.glob("message/*/msg_a1b2c3d4e004AssistantRunng.json"))
    message = json.loads(running.read_text())
    message["time"]["completed"] = message["time"]["created"] + 5000
    running.write_text(json.dumps(message))
    [part] = storage.glob("part/msg_a1b2c3d4e004AssistantRunng/*.json")
    data = json.loads(part.read_text())
    data["text"] = ("Noted as well: the expiry job runs hourly, so a cart can live up to an hour past "
                    "its seven days before it is removed.")
    part.write_text(json.dumps(data))
    again = capture(gm, session_file(storage))
    assert again["new_events"] == 1 and "runs hourly" in digest_text(gm, again)


def test_opencode_subagent_session_is_skipped(gm: Cli, tmp_path: Path) -> None:
    storage = opencode_storage(tmp_path)
    assert capture(gm, session_file(storage, "ses_7a1b2c3d5ffeSubagentTask01"))["result"] == "subagent"


def test_a_folder_of_every_agent_finds_each_session_once(gm: Cli, tmp_path: Path) -> None:
    storage = opencode_storage(tmp_path)
    chat = gemini_project(tmp_path, "gemini-session.jsonl")
    shutil.copy(SAMPLES / "project.aider.chat.history.md", tmp_path / ".aider.chat.history.md")
    (chat.parent.parent / "logs.json").write_text('[{"sessionId": "x", "type": "user", "message": "hi"}]')
    report = gm.json("capture", str(tmp_path), "--no-model", "--min-signal", "0")
    assert isinstance(report, dict) and report["skipped"] == []
    found = sorted((r["format"], r["result"]) for r in report["reports"])
    assert found == [("aider", "notes"), ("gemini", "notes"), ("opencode", "notes"), ("opencode", "subagent")]
    assert storage.is_dir()


def test_the_format_is_given_by_name_and_an_unknown_name_is_refused(gm: Cli, tmp_path: Path) -> None:
    history = tmp_path / "chat.md"
    shutil.copy(SAMPLES / "project.aider.chat.history.md", history)
    assert capture(gm, history, "--format", "aider")["format"] == "aider"
    refused = gm("capture", str(history), "--format", "cursor")
    assert refused.exit_code == 2 and "cursor" in refused.stderr
