"""Project documents through the real CLI on a real store: index and copies, revisions, caps and
the least-recently-accessed archive, sourcePaths, search, access state, the card, two machines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitmem.cli import cli
from gitmem.format.document import split_copy
from support import Cli, commit_count, git

RUNBOOK = "# Deploy runbook\n\nIntro.\n\n## Staging\n\nRun make stage first.\n\n```sh\n# not a heading\n```\n\n## Production\n\nRun make ship after approval.\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace repository, the current directory of every command."""
    folder = tmp_path / "shop"
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    monkeypatch.chdir(folder)
    return folder


def write(folder: Path, name: str, text: str) -> str:
    (folder / name).write_text(text, encoding="utf-8")
    return str(folder / name)


def index(root: Path, scope: str = "global") -> list[dict[str, object]]:
    folder = "global" if scope == "global" else f"workspaces/{scope}"
    docs: list[dict[str, object]] = json.loads((root / folder / "documents/index.json").read_text())["documents"]
    return docs


def set_caps(root: Path, **caps: int) -> None:
    registry = json.loads((root / "memory.json").read_text())
    registry.setdefault("settings", {})["documents"] = caps
    (root / "memory.json").write_text(json.dumps(registry, indent=2) + "\n")
    git(root, "commit", "-qam", "caps")


def add(gm: Cli, path: str, title: str, *extra: str) -> dict[str, object]:
    data = gm.json("doc", "add", path, "--title", title, "--scope", "global", *extra)
    assert isinstance(data, dict)
    return data


# -- add, copies, index -------------------------------------------------------------------------
def test_add_writes_index_and_copy_in_one_commit(gm: Cli, repo: Path) -> None:
    before = commit_count(gm.root)
    data = add(gm, write(repo, "runbook.md", RUNBOOK), "Deploy runbook", "--description",
               "How we ship", "--source-path", "docs/deploy.md", "--session", "session:42")
    assert data["id"] == "global-doc-0001" and data["path"] == "global/documents/active/deploy-runbook.md"
    assert commit_count(gm.root) == before + 1
    record = index(gm.root)[0]
    assert {k: record[k] for k in ("title", "description", "status", "filename", "sourcePaths",
                                    "session", "revision", "size")} == {
        "title": "Deploy runbook", "description": "How we ship", "status": "active",
        "filename": "deploy-runbook.md", "sourcePaths": ["docs/deploy.md"], "session": "session:42",
        "revision": 1, "size": len(RUNBOOK.encode())}
    assert len(str(record["sha256"])) == 64 and record["createdAt"] == record["updatedAt"]
    copy = (gm.root / "global/documents/active/deploy-runbook.md").read_text()
    values, body, _line = split_copy(copy)
    assert body == RUNBOOK and values["id"] == "global-doc-0001" and values["status"] == "active"
    assert "doc add: global-doc-0001" in git(gm.root, "log", "-1", "--format=%s")
    assert git(gm.root, "status", "--porcelain") == ""
    second = add(gm, write(repo, "other.md", "other text\n"), "Deploy runbook")
    assert second["id"] == "global-doc-0002"
    assert index(gm.root)[1]["filename"] == "deploy-runbook-2.md"


def test_add_from_stdin_into_the_current_workspace(gm: Cli, repo: Path) -> None:
    result = gm.runner.invoke(cli, ["--root", str(gm.root), "doc", "add", "-", "--title", "Notes",
                                    "--workspace", "shop"], input="From standard input\n")
    assert result.exit_code == 0, result.output
    assert "shop-doc-0001" in result.stdout
    assert index(gm.root, "shop")[0]["size"] == len("From standard input\n")
    listed = gm.json("doc", "list")
    assert isinstance(listed, list) and [r["id"] for r in listed] == ["shop-doc-0001"]


@pytest.mark.parametrize(("args", "needle"), [
    (["--source-path", "../outside.md"], "outside the workspace repository"),
    (["--source-path", "/etc/passwd"], "outside the workspace repository"),
    (["--source-path", "link/secret.md"], "outside the workspace repository"),
    (["--title", " "], "must not be empty"),
])
def test_bad_documents_are_refused_exit_2_nothing_written(gm: Cli, repo: Path, tmp_path: Path,
                                                         args: list[str], needle: str) -> None:
    (tmp_path / "elsewhere").mkdir()
    (repo / "link").symlink_to(tmp_path / "elsewhere")
    path = write(repo, "doc.md", "text\n")
    before = commit_count(gm.root)
    title = [] if "--title" in args else ["--title", "Doc"]
    result = gm("doc", "add", path, *title, "--scope", "global", *args)
    assert result.exit_code == 2 and needle in result.stderr
    assert commit_count(gm.root) == before and not (gm.root / "global/documents").exists()


def test_source_paths_need_not_exist_and_never_point_into_the_store_documents(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    gm = Cli(project / "memory", CliRunner())  # a store inside the repository
    assert gm("init").exit_code == 0
    monkeypatch.chdir(project / "memory")
    path = write(project, "d.md", "text\n")
    ok = gm("doc", "add", path, "--title", "D", "--scope", "global", "--source-path", "../src/missing.py",
            "--source-path", str(project / "README.md"))
    assert ok.exit_code == 0, ok.output
    assert index(gm.root)[0]["sourcePaths"] == ["src/missing.py", "README.md"]
    refused = gm("doc", "add", path, "--title", "E", "--scope", "global",
                 "--source-path", "global/documents/index.json")
    assert refused.exit_code == 2 and "store's documents/ folder" in refused.stderr


def test_body_over_its_cap_is_refused(gm: Cli, repo: Path) -> None:
    set_caps(gm.root, bodyLimitBytes=2048)
    before = commit_count(gm.root)
    result = gm("doc", "add", write(repo, "big.md", "x" * 2049), "--title", "Big", "--scope", "global")
    assert result.exit_code == 2 and "2049 bytes" in result.stderr and "at most 2048" in result.stderr
    assert commit_count(gm.root) == before


def test_default_body_cap_is_two_mebibytes(gm: Cli, repo: Path) -> None:
    result = gm("doc", "add", write(repo, "big.md", "y" * (2 * 1024 * 1024 + 1)), "--title", "Big",
                "--scope", "global")
    assert result.exit_code == 2 and "at most 2097152 bytes" in result.stderr


# -- update and revisions -----------------------------------------------------------------------
def test_update_moves_the_revision_and_refuses_a_stale_one(gm: Cli, repo: Path) -> None:
    add(gm, write(repo, "a.md", "one\n"), "A")
    updated = gm.json("doc", "update", "global-doc-0001", write(repo, "a.md", "two\n"), "--revision", "1")
    assert isinstance(updated, dict) and updated["revision"] == 2
    before = commit_count(gm.root)
    stale = gm("doc", "update", "global-doc-0001", write(repo, "a.md", "three\n"), "--revision", "1")
    assert stale.exit_code == 2 and "is at revision 2, not 1" in stale.stderr
    same = gm("doc", "update", "global-doc-0001", write(repo, "a.md", "two\n"))
    assert same.exit_code == 0 and "nothing else changed" in same.stdout
    assert commit_count(gm.root) == before
    shown = gm.json("doc", "show", "global-doc-0001")
    assert isinstance(shown, dict) and shown["body"] == "two\n" and shown["revision"] == 2


def test_hand_edit_of_a_copy_becomes_a_revision_never_overwritten(gm: Cli, repo: Path) -> None:
    add(gm, write(repo, "a.md", "original\n"), "A")
    copy = gm.root / "global/documents/active/a.md"
    copy.write_text(copy.read_text() + "added by hand\n")
    edited = copy.read_text()
    shown = gm.json("doc", "show", "global-doc-0001")
    # show names the revision an update is checked against: the pending hand edit counts
    assert isinstance(shown, dict) and shown["editedByHand"] is True and shown["revision"] == 2
    before = commit_count(gm.root)
    refused = gm("doc", "update", "global-doc-0001", write(repo, "a.md", "mine\n"), "--revision", "1")
    assert refused.exit_code == 2 and "is at revision 2, not 1" in refused.stderr
    assert commit_count(gm.root) == before and copy.read_text() == edited  # nothing changed
    assert git(gm.root, "status", "--porcelain") == " M global/documents/active/a.md\n"
    done = gm("doc", "update", "global-doc-0001", write(repo, "a.md", "mine\n"), "--revision",
              str(shown["revision"]))
    assert done.exit_code == 0, done.output
    assert index(gm.root)[0]["revision"] == 3
    assert "added by hand" in git(gm.root, "show", "HEAD~1:global/documents/active/a.md")


# -- archive, restore, search, access -----------------------------------------------------------
def test_archive_and_restore_move_the_copy_and_search_follows(gm: Cli, repo: Path) -> None:
    add(gm, write(repo, "r.md", RUNBOOK), "Deploy runbook")
    hits = gm.json("search", "approval ship")
    assert isinstance(hits, list) and hits[0]["id"] == "global-doc-0001"
    assert hits[0]["path"] == "global/documents/active/deploy-runbook.md"
    lines = (gm.root / hits[0]["path"]).read_text().splitlines()
    assert lines[hits[0]["line"] - 1] == "## Production" and hits[0]["title"] == "Deploy runbook › Production"
    assert gm("search", "not a heading").exit_code == 0  # fenced lines are text, not headings
    assert gm("doc", "archive", "global-doc-0001").exit_code == 0
    assert git(gm.root, "ls-files", "global/documents").split() == [
        "global/documents/archived/deploy-runbook.md", "global/documents/index.json"]
    assert split_copy((gm.root / "global/documents/archived/deploy-runbook.md").read_text())[0]["status"] == "archived"
    assert gm("search", "approval ship").exit_code == 1
    archived = gm.json("search", "approval ship", "--all")
    assert isinstance(archived, list) and archived[0]["status"] == "archived"
    assert gm.json("doc", "list") == []
    assert [r["id"] for r in gm.json("doc", "list", "--all")] == ["global-doc-0001"]  # type: ignore[union-attr]
    assert gm.json("doc", "show", "global-doc-0001")["status"] == "archived"  # type: ignore[index]
    assert gm("doc", "restore", "global-doc-0001").exit_code == 0
    assert gm.json("search", "approval ship", "--layer", "documents")[0]["status"] == "live"  # type: ignore[index]
    assert git(gm.root, "status", "--porcelain") == ""


def test_reads_and_searches_record_access_without_a_commit(gm: Cli, repo: Path) -> None:
    add(gm, write(repo, "r.md", RUNBOOK), "Deploy runbook")
    before = commit_count(gm.root)
    gm("search", "approval")
    access = json.loads((gm.root / "state/documents-access.json").read_text())
    assert set(access) == {"global-doc-0001"}
    gm.json("doc", "show", "global-doc-0001")
    assert commit_count(gm.root) == before and git(gm.root, "status", "--porcelain") == ""
    assert "lastAccessedAt" not in (gm.root / "global/documents/index.json").read_text()


def test_full_shelf_archives_the_least_recently_accessed(gm: Cli, repo: Path) -> None:
    set_caps(gm.root, activeLimitBytes=4096)
    for name in ("alpha", "beta", "gamma"):
        add(gm, write(repo, f"{name}.md", f"{name} " * 150 + "\n"), name.capitalize())
    gm.json("doc", "show", "global-doc-0001")  # alpha and gamma were read; beta never was
    gm.json("doc", "show", "global-doc-0003")
    out = gm("doc", "add", write(repo, "delta.md", "delta " * 150 + "\n"), "--title", "Delta",
             "--scope", "global")
    assert out.exit_code == 0, out.output
    assert "1 archived" in out.stdout and "global-doc-0002 Beta -> global/documents/archived/beta.md" in out.stdout
    status = {str(r["id"]): r["status"] for r in index(gm.root)}
    assert status == {"global-doc-0001": "active", "global-doc-0002": "archived",
                      "global-doc-0003": "active", "global-doc-0004": "active"}
    total = sum(p.stat().st_size for p in (gm.root / "global/documents/active").iterdir())
    assert total <= 4096
    assert gm.json("doc", "show", "global-doc-0002")["body"].startswith("beta")  # type: ignore[index]
    assert gm.json("search", "beta", "--all")[0]["id"] == "global-doc-0002"  # type: ignore[index]
    assert "archived global-doc-0002" in git(gm.root, "log", "-1", "--format=%B")


def test_without_access_records_the_oldest_update_leaves_first(gm: Cli, repo: Path) -> None:
    set_caps(gm.root, activeLimitBytes=3072)
    for name in ("alpha", "beta"):
        add(gm, write(repo, f"{name}.md", f"{name} " * 150 + "\n"), name.capitalize())
    data = json.loads((gm.root / "global/documents/index.json").read_text())
    data["documents"][0]["updatedAt"] = "2026-06-01T00:00:00Z"
    data["documents"][1]["updatedAt"] = "2025-01-01T00:00:00Z"  # beta is older
    (gm.root / "global/documents/index.json").write_text(json.dumps(data, indent=2) + "\n")
    (gm.root / "state/documents-access.json").unlink(missing_ok=True)  # as on a fresh clone
    out = gm("doc", "add", write(repo, "c.md", "gamma " * 150 + "\n"), "--title", "Gamma", "--scope", "global")
    assert out.exit_code == 0 and "global-doc-0002 Beta" in out.stdout


def test_card_lists_active_documents(gm: Cli, repo: Path) -> None:
    add(gm, write(repo, "a.md", "a\n"), "Architecture overview", "--description", "Why the store is git")
    add(gm, write(repo, "b.md", "b\n"), "Old incident")
    gm("doc", "archive", "global-doc-0002")
    card = gm("context", "--cwd", str(repo.parent)).stdout
    assert "### Project documents\n- global-doc-0001 Architecture overview — Why the store is git" in card
    assert "Old incident" not in card


# -- two machines -------------------------------------------------------------------------------
def test_documents_added_on_two_machines_are_both_kept(tmp_path: Path, bare_remote: Path, repo: Path) -> None:
    laptop, desktop = Cli(tmp_path / "laptop", CliRunner()), Cli(tmp_path / "desktop", CliRunner())
    assert laptop("init", "--remote", str(bare_remote)).exit_code == 0
    add(laptop, write(repo, "base.md", "base\n"), "Base")
    assert laptop("sync").exit_code == 0
    assert desktop("init", "--remote", str(bare_remote)).exit_code == 0
    add(laptop, write(repo, "l.md", "laptop text\n"), "Laptop design")
    add(desktop, write(repo, "d.md", "desktop text\n"), "Desktop design")
    assert laptop("sync").exit_code == 0
    synced = desktop("sync")
    assert synced.exit_code == 0, synced.output
    assert "renumbered global-doc-0002 -> global-doc-0003" in synced.stdout
    ids = {str(r["title"]): r["id"] for r in index(desktop.root)}
    assert ids == {"Base": "global-doc-0001", "Laptop design": "global-doc-0002",
                   "Desktop design": "global-doc-0003"}
    copy = (desktop.root / "global/documents/active/desktop-design.md").read_text()
    assert split_copy(copy)[0]["id"] == "global-doc-0003"
    assert desktop.json("doc", "show", "global-doc-0003")["body"] == "desktop text\n"  # type: ignore[index]
    assert desktop("conflicts").exit_code == 1


def test_quoted_conflict_markers_in_a_document_are_not_a_conflict(gm: Cli, repo: Path) -> None:
    text = "# Resolving merges\n\n```\n<<<<<<< ours\nmine\n=======\ntheirs\n>>>>>>> theirs\n```\n"
    add(gm, write(repo, "m.md", text), "Resolving merges")
    assert gm("conflicts").exit_code == 1
    assert "### Conflicts" not in gm("context", "--cwd", str(repo.parent)).stdout


def test_one_document_updated_on_two_machines_is_a_listed_conflict(
        tmp_path: Path, bare_remote: Path, repo: Path) -> None:
    laptop, desktop = Cli(tmp_path / "laptop", CliRunner()), Cli(tmp_path / "desktop", CliRunner())
    assert laptop("init", "--remote", str(bare_remote)).exit_code == 0
    add(laptop, write(repo, "base.md", "line one\nline two\n"), "Plan")
    assert laptop("sync").exit_code == 0
    assert desktop("init", "--remote", str(bare_remote)).exit_code == 0
    laptop("doc", "update", "global-doc-0001", write(repo, "l.md", "line one\nline two, laptop\n"))
    desktop("doc", "update", "global-doc-0001", write(repo, "d.md", "line one\nline two, desktop\n"))
    assert laptop("sync").exit_code == 0
    assert desktop("sync").exit_code == 3
    listed = desktop.json("conflicts")
    assert isinstance(listed, list)
    assert ("global/documents/index.json", "global-doc-0001") in {(c["path"], c["entry_id"]) for c in listed}
    settled = desktop("doc", "update", "global-doc-0001", write(repo, "s.md", "line one\nline two, agreed\n"))
    assert settled.exit_code == 0, settled.output
    assert desktop("sync").exit_code == 0 and desktop("conflicts").exit_code == 1
    assert laptop("sync").exit_code == 0
    assert laptop.json("doc", "show", "global-doc-0001")["body"] == "line one\nline two, agreed\n"  # type: ignore[index]
