"""`gitmem status` tells what is true now: the last sync as it stands, what the next write will do
with hand edits, and a few of the problems `gitmem check` would list."""

from __future__ import annotations

from pathlib import Path

from gitmem.store.store import Store
from gitmem.verbs.entries import remember
from support import Cli


def status_text(gm: Cli) -> str:
    result = gm("status")
    assert result.exit_code == 0, result.output
    return result.output


def test_a_sync_error_goes_once_the_remote_it_was_about_changed(gm: Cli, bare_remote: Path) -> None:
    assert "sync: never run on this machine" in status_text(gm)
    assert gm("sync").exit_code != 0
    text = status_text(gm)
    assert "the last attempt failed (" in text and "no remote is configured" in text
    assert gm("remote", "set", str(bare_remote)).exit_code == 0
    text = status_text(gm)
    assert "no remote is configured" not in text and "the remote has changed since" in text
    data = gm.json("status")
    assert isinstance(data, dict) and "error" not in data["sync"] and data["sync"]["obsoleteError"]
    assert gm("sync").exit_code == 0
    text = status_text(gm)
    assert "sync: pushed (" in text and "failed" not in text


def test_a_hand_edit_the_next_write_would_refuse_is_not_promised(store: Store, gm: Cli) -> None:
    remember(store, "A fact", "semantic", topic="notes")
    path = store.root / "global" / "semantic" / "notes.md"
    good = path.read_text(encoding="utf-8")
    path.write_text(good + "\n## Fine hand edit\nText.\n", encoding="utf-8")
    assert "(committed as a hand edit by the next write)" in status_text(gm)
    path.write_text(good + "\n## Bad hand edit\nText.\n\n**Id:** not-an-id\n", encoding="utf-8")
    text = status_text(gm)
    assert "committed as a hand edit by the next write" not in text
    assert "the next write leaves 1 of them uncommitted until fixed" in text and "not-an-id" in text
    held = gm.json("status")["dirty_held"]  # type: ignore[index]
    assert len(held) == 1 and held[0].startswith("global/semantic/notes.md:17: malformed Id 'not-an-id'")
    assert gm("remember", "Another", "--layer", "semantic", "--topic", "notes").exit_code == 2
    assert gm("remember", "Elsewhere", "--layer", "semantic", "--topic", "other").exit_code == 0


def test_status_shows_a_count_of_problems_and_the_first_few(store: Store, gm: Cli) -> None:
    folder = store.root / "global" / "semantic"
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(5):
        (folder / f"broken-{number}.md").write_bytes(b"## Not text \xff\xfe\n")
    text = status_text(gm)
    assert "problems: 5 (`gitmem check` lists all)" in text
    listed = [line for line in text.splitlines() if line.startswith("  global/semantic/broken-")]
    assert len(listed) == 3 and "  ... and 2 more" in text
