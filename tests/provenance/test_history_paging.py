"""An entry with many versions: `why` shows its creation and its newest changes (the newest 20
unless --all), `log ID` its newest versions (--limit, --all), reading only what they show, and
what they show is what the whole history says."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitmem.provenance.trace import EntryTrace
from gitmem.store.store import Store
from support import GIT_ENV, Cli, git

STAGING = "global/semantic/staging.md"
EDITS = 26


@pytest.fixture
def busy(tmp_path: Path) -> Cli:
    """A store whose first entry was changed in EDITS commits after the one that created it."""
    gm = Cli(tmp_path / "store", CliRunner())
    gm("init")
    assert gm("remember", "Staging listens on port 5000", "-l", "semantic", "-t", "staging").stdout.strip() \
        == "global-sem-0001"
    gm("remember", "Staging runs in eu-west-1", "-l", "semantic", "-t", "staging")
    path = gm.root / STAGING
    for n in range(EDITS):
        path.write_text(path.read_text().replace(f"port {5000 + n}", f"port {5001 + n}"))
        stamp = f"@{1_893_456_000 + n * 3600} +0000"
        env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
        subprocess.run(["git", "commit", "-qam", f"port {5001 + n}"], cwd=gm.root, check=True, env=env)
    return gm


def messages(changes: list[dict[str, object]]) -> list[object]:
    return [c["message"] for c in changes]


def test_why_shows_the_creation_and_the_newest_twenty_changes(busy: Cli) -> None:
    everything = busy.json("why", "global-sem-0001", "--all")
    assert len(everything["changes"]) == EDITS and everything["more"] == 0
    shown = busy.json("why", "global-sem-0001")
    assert shown["created"] == everything["created"]
    assert shown["changes"] == everything["changes"][-20:]  # oldest first, the newest 20
    assert messages(shown["changes"])[-1] == f"port {5000 + EDITS}"
    # The commits between the creation and those, not read: at most that many changes (the one
    # that wrote the second entry into the file is among them, and changed nothing of this one).
    assert shown["more"] == EDITS - 20 + 1
    assert {k: v for k, v in shown.items() if k not in ("changes", "more")} == \
        {k: v for k, v in everything.items() if k not in ("changes", "more")}
    text = busy("why", "global-sem-0001").stdout
    assert f"up to {EDITS - 20 + 1} older changes not shown (--all shows every one)" in text
    assert "not shown" not in busy("why", "global-sem-0001", "--all").stdout


def test_log_shows_the_newest_versions_and_all_of_them_on_demand(busy: Cli) -> None:
    everything = busy.json("log", "global-sem-0001", "--all")
    assert len(everything) == EDITS + 1 and everything[-1]["kind"] == "created"
    assert busy.json("log", "global-sem-0001") == everything[:20]
    five = busy.json("log", "global-sem-0001", "--limit", "5")
    assert five == everything[:5] and "port 5026" in five[0]["text"]


def test_only_the_versions_shown_are_read(busy: Cli, tmp_path: Path) -> None:
    store = Store(busy.root, cwd=tmp_path)
    trace = EntryTrace(store.git, "global-sem-0001")
    shown = trace.shown(3)
    assert [c.commit.message.strip() for c in shown.newest] == ["port 5026", "port 5025", "port 5024"]
    assert shown.created.kind == "created" and shown.unread == EDITS - 3 + 1
    # The versions read: the three shown, the creation, and each one's parent.
    assert len(trace._states) <= 2 * 4
    assert EntryTrace(store.git, "global-sem-0001").changes(4) == trace.changes()[:4]
    store.close()


def test_an_entry_shown_in_full_when_it_has_few_changes(busy: Cli) -> None:
    other = busy.json("why", "global-sem-0002")
    assert other["changes"] == [] and other["more"] == 0
    assert git(busy.root, "log", "-1", "--format=%H").strip() != other["created"]["commit"]
