"""A failed sync is written down in state/CONFLICT.md, with what failed and how to settle it, and
the record goes with the next sync that succeeds; conflicts listed in the file stay listed."""

from __future__ import annotations

import shutil
from pathlib import Path

from gitserver import serve_git_http
from support import Cli, git, run_gitmem

TOKEN = "glpat-" + "Xy7Kq2Lm9Np4Rs6Tv8Wz"


def _conflict_file(root: Path) -> Path:
    return root / "state" / "CONFLICT.md"


def test_an_unreachable_remote_is_recorded_until_a_sync_succeeds(gm: Cli, bare_remote: Path) -> None:
    assert gm("remote", "set", str(bare_remote)).exit_code == 0
    gm("remember", "Builds run nightly.", "--layer", "semantic")
    assert gm("sync").exit_code == 0
    assert not _conflict_file(gm.root).exists()
    moved = bare_remote.with_name("moved.git")
    shutil.move(bare_remote, moved)
    failed = run_gitmem("--root", str(gm.root), "sync")
    assert failed.returncode == 3
    text = _conflict_file(gm.root).read_text(encoding="utf-8")
    assert text.startswith("# The last sync failed")
    assert str(bare_remote) in text and "run `gitmem sync` again" in text
    assert failed.stderr.split("error: ", 1)[1].strip()[:40] in text  # what failed, as it was said
    assert gm("status", "--json").exit_code == 0
    gm("remember", "Deploys are on Fridays.", "--layer", "semantic")  # writes go on meanwhile
    assert _conflict_file(gm.root).exists()
    shutil.move(moved, bare_remote)
    assert gm("sync").exit_code == 0
    assert not _conflict_file(gm.root).exists()


def test_refused_credentials_say_how_to_give_a_token(gm: Cli, tmp_path: Path) -> None:
    served = tmp_path / "srv"
    served.mkdir()
    git(served, "init", "--bare", "-q", "-b", "main", "mem.git")
    with serve_git_http(served, token=TOKEN) as base:
        assert gm("config", "set", "git.remote", base + "mem.git").exit_code == 0
        failed = run_gitmem("--root", str(gm.root), "sync")
        assert failed.returncode == 3
        text = _conflict_file(gm.root).read_text(encoding="utf-8")
        assert "refused the credentials" in text and "gitmem config set git.token -" in text
        given = run_gitmem("--root", str(gm.root), "config", "set", "git.token", "-", input_text=TOKEN)
        assert given.returncode == 0, given.stderr
        synced = run_gitmem("--root", str(gm.root), "sync")
        assert synced.returncode == 0, synced.stderr
    assert not _conflict_file(gm.root).exists()
    assert TOKEN not in text


def test_a_failure_is_kept_beside_the_conflicts_a_resolve_leaves(gm: Cli, bare_remote: Path) -> None:
    """Settling conflicts rewrites the file; the failure stays in it until a sync succeeds."""
    from gitmem.sync.state import CONFLICT_FILE, load_sync_state, write_conflicts

    gm("remote", "set", str(bare_remote))
    shutil.rmtree(bare_remote)
    assert run_gitmem("--root", str(gm.root), "sync").returncode == 3
    assert load_sync_state(gm.root)["failure"]
    write_conflicts(gm.root, [])  # what `gitmem resolve` does after settling the last conflict
    assert (gm.root / CONFLICT_FILE).read_text(encoding="utf-8").startswith("# The last sync failed")
