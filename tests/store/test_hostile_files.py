"""One bad file never stops the store: a binary file, a FIFO or a folder where gitmem expects a
file is reported by name and the verb goes on with everything else."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitmem.history.ingest import ingest
from gitmem.store.store import Store
from support import Cli, git

BINARY = b"\x00\x01not text\xff\n"


def commit_bytes(root: Path, relpath: str, data: bytes) -> None:
    """Put `data` at `relpath` and commit it with plain git (as a pull could bring it)."""
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    git(root, "add", "-f", relpath)
    git(root, "commit", "-qm", f"hostile {relpath}")


def fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    os.mkfifo(path)


@pytest.fixture
def code(tmp_path: Path) -> Path:
    repo = tmp_path / "code"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", "https://github.com/acme/shop.git")
    for day in ("2026-11-20", "2026-11-21"):
        (repo / f"{day}.txt").write_text(day, encoding="utf-8")
        git(repo, "add", "-A")
        env = {"GIT_AUTHOR_DATE": f"{day}T10:00:00+00:00", "GIT_COMMITTER_DATE": f"{day}T10:00:00+00:00"}
        import subprocess

        subprocess.run(["git", "commit", "-qm", f"work of {day}"], cwd=repo, check=True,
                       env={**os.environ, **env}, capture_output=True)
    return repo


@pytest.mark.parametrize("kind", ["binary", "fifo"])
def test_history_skips_a_day_file_it_cannot_read_and_records_the_rest(
        store: Store, gm: Cli, code: Path, kind: str) -> None:
    bad = "workspaces/acme-shop/history/2026-11-20.md"
    if kind == "binary":
        commit_bytes(store.root, bad, BINARY)
    else:
        fifo(store.root / bad)
    report = ingest(store, code)
    assert report.recorded == 1 and report.days == ["2026-11-21"]
    assert len(report.skipped) == 1 and report.skipped[0].startswith(f"{bad}:1: ")
    if kind == "binary":
        assert (store.root / bad).read_bytes() == BINARY  # never overwritten
    result = gm("history", "--repo", str(code))  # the skipped day waits; nothing else is redone
    assert result.exit_code == 0, result.output
    assert f"skipped {bad}:1: " in result.output and "1 new commit" not in result.output


def test_unreadable_runtime_files_are_named_and_the_card_still_comes(store: Store, gm: Cli) -> None:
    assert gm("runtime", "add", "Prefers short answers", "--target", "user").exit_code == 0
    assert gm("runtime", "add", "Tests run with pytest").exit_code == 0
    commit_bytes(store.root, "global/runtime/USER.md", BINARY)
    result = gm("context")
    assert result.exit_code == 0
    assert "global/runtime/USER.md:1: binary file" in result.output
    assert "Tests run with pytest" in result.output
    refused = gm("runtime", "add", "Another fact")
    assert refused.exit_code == 2 and "global/runtime/USER.md:1" in refused.output
    fifo(store.root / "global/runtime/memories.json")
    result = gm("context")
    assert result.exit_code == 0 and "global/runtime/memories.json:1: not a regular file" in result.output


def test_an_unreadable_document_index_or_copy_is_named(store: Store, gm: Cli, tmp_path: Path) -> None:
    source = tmp_path / "design.md"
    source.write_text("# Design\nText.\n", encoding="utf-8")
    assert gm("doc", "add", str(source), "--title", "Design", "--scope", "global").exit_code == 0
    assert gm("associate", "shop", "--path", str(tmp_path)).exit_code == 0
    commit_bytes(store.root, "workspaces/shop/documents/index.json", BINARY)
    result = gm("doc", "list")
    assert result.exit_code == 0 and "global-doc-0001" in result.output
    assert "workspaces/shop/documents/index.json:1: binary file" in result.output
    fifo(store.root / "global/documents/active/design.md")
    shown = gm("doc", "show", "global-doc-0001")  # a FIFO is refused, never read (that would hang)
    assert shown.exit_code == 2 and "global/documents/active/design.md:1: not a regular file" in shown.output


def test_a_fifo_in_place_of_a_state_file_does_not_hang_status(store: Store, gm: Cli) -> None:
    for name in ("sync.json", "metrics.json", "history.json", "runtime.json"):
        fifo(store.root / "state" / name)
    result = gm("status")
    assert result.exit_code == 0 and "sync: never run on this machine" in result.output


def test_a_hostile_file_among_the_digests_is_passed_over(store: Store, gm: Cli) -> None:
    folder = store.root / "digests"
    folder.mkdir(exist_ok=True)
    (folder / "20261201-000000-binary.md").write_bytes(BINARY)
    fifo(folder / "20261201-000001-fifo.md")
    (folder / "20261201-000002-folder.md").mkdir()
    result = gm("status")
    assert result.exit_code == 0 and "digests: 0 pending consolidation" in result.output


def test_resolve_passes_over_a_binary_file_among_its_candidates(store: Store, gm: Cli) -> None:
    commit_bytes(store.root, "global/semantic/broken.md", b"## Not text \xff\n")
    (store.root / "global/semantic/broken.md").write_bytes(b"## Still not text \xff\n")  # dirty
    result = gm("resolve", "global-sem-0001", "--ours")
    assert result.exit_code in (1, 2) and "internal error" not in result.output


def test_fifos_and_binary_files_in_place_of_store_records_stop_no_write(store: Store, gm: Cli) -> None:
    assert gm("search", "anything").exit_code == 1  # builds the index
    fifo(store.root / "state" / "journal.json")
    fifo(store.root / "state" / "activity.jsonl")
    fifo(store.root / "state" / "metrics.json")
    fifo(store.root / "logs" / "memory.log")
    fifo(store.root / "index" / "manifest.json")
    commit_bytes(store.root, ".gitignore", BINARY)
    result = gm("remember", "Still written", "--layer", "semantic")
    assert result.exit_code == 0, result.output
    assert ".gitignore is not a regular UTF-8 file" in result.output
    assert gm("search", "written").exit_code == 0
    assert gm("log").exit_code == 0


def test_a_fifo_hook_and_a_binary_token_file_are_named_not_waited_on(store: Store, gm: Cli) -> None:
    from gitmem.errors import AuthError
    from gitmem.git.credentials import load_token

    fifo(store.root / ".git" / "hooks" / "pre-commit")
    result = gm("hooks", "status")
    assert result.exit_code == 0 and "internal error" not in result.output
    token = store.root / "state" / "git-token"
    token.write_bytes(b"\xff\xfe not a token")
    token.chmod(0o600)
    with pytest.raises(AuthError, match="cannot be read as text"):
        load_token(token)
