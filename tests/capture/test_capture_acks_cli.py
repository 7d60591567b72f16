"""Through the real CLI: a transcript's bare acknowledgements, the assistant's as the user's,
never reach the digest."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import run_gitmem


def test_capture_drops_both_sides_acknowledgements(store_root: Path, gm, tmp_path: Path) -> None:
    lines = [
        {"session": "acks-1", "cwd": str(tmp_path), "branch": "main"},
        {"role": "user", "content": "The nightly export times out since the orders table passed ten million rows; "
                                    "find out why and how we should page through it.", "ts": "2026-12-01T10:00:00Z"},
        {"role": "assistant", "content": "Let me take a look.", "ts": "2026-12-01T10:00:01Z"},
        {"role": "assistant", "content": "The export loads every row at once. A server-side cursor with a batch size "
                                         "of 5000 keeps memory flat; the job finished in four minutes with it.",
         "ts": "2026-12-01T10:00:02Z"},
        {"role": "user", "content": "thanks!", "ts": "2026-12-01T10:00:03Z"},
        {"role": "assistant", "content": "You're welcome.", "ts": "2026-12-01T10:00:04Z"},
    ]
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    done = run_gitmem("--root", str(store_root), "capture", str(transcript), "--format", "jsonl",
                      "--no-model", "--min-signal", "0", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["dropped"]["acknowledgements"] == 3
    digest = (store_root / "digests" / f"{report['digest']}.md").read_text(encoding="utf-8")
    assert "server-side cursor" in digest
    assert "welcome" not in digest.lower() and "take a look" not in digest and "thanks" not in digest
