"""Documents changed by hand, through the real CLI on a real store: an index.json that does not
parse, copies deleted, moved or renamed, hand edits racing a revision check, and titles of any
shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmem.documents.repair import load_index_problems
from support import Cli, commit_count, git

TEXT = "# Plan\n\nShip the canary first.\n"


def _add(gm: Cli, tmp_path: Path, title: str, text: str = TEXT) -> dict[str, object]:
    source = tmp_path / "source.md"
    source.write_text(text)
    data = gm.json("doc", "add", str(source), "--title", title, "--scope", "global")
    assert isinstance(data, dict)
    return data


# -- index.json that does not parse ---------------------------------------------------------------
@pytest.mark.parametrize("broken, line", [("[[\n", 2), ('{"documents": 3}\n', 1),
                                          ('{"documents": [{"title": "x"}]}\n', 1),
                                          ('{"documents": [{"id": "global-doc-0001", '
                                           '"filename": "../../escape.md"}]}\n', 1)])
def test_a_broken_index_refuses_writes_and_reads_use_the_last_good_version(
        gm: Cli, tmp_path: Path, broken: str, line: int) -> None:
    _add(gm, tmp_path, "Plan")
    index = gm.root / "global/documents/index.json"
    index.write_text(broken)
    before = commit_count(gm.root)
    source = tmp_path / "new.md"
    source.write_text("more text\n")
    for args in (("doc", "add", str(source), "--title", "New", "--scope", "global"),
                 ("doc", "update", "global-doc-0001", str(source)),
                 ("doc", "archive", "global-doc-0001"), ("doc", "restore", "global-doc-0001")):
        refused = gm(*args)
        assert refused.exit_code == 2, (args, refused.output)
        assert refused.stderr.startswith(f"gitmem: error: global/documents/index.json:{line}: ")
        assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.output
    assert commit_count(gm.root) == before and index.read_text() == broken
    listed = gm("doc", "list", "--json")
    assert listed.exit_code == 0 and [d["id"] for d in json.loads(listed.stdout)] == ["global-doc-0001"]
    assert f"gitmem: note: global/documents/index.json:{line}: " in listed.stderr
    assert "until it is fixed" in listed.stderr
    shown = gm.json("doc", "show", "global-doc-0001")
    assert isinstance(shown, dict) and shown["body"] == TEXT
    assert gm.json("search", "canary")  # search reads the copies themselves
    problems = load_index_problems(gm.root)
    assert [(p.path, p.line) for p in problems] == [("global/documents/index.json", line)]


def test_a_broken_index_already_committed_lists_the_last_good_commit(gm: Cli, tmp_path: Path) -> None:
    _add(gm, tmp_path, "Plan")
    (gm.root / "global/documents/index.json").write_text("[[\n")
    git(gm.root, "commit", "-qam", "broken by hand")  # e.g. committed with plain git, then synced
    listed = gm("doc", "list", "--json")
    assert listed.exit_code == 0 and [d["id"] for d in json.loads(listed.stdout)] == ["global-doc-0001"]
    assert "gitmem reads the version committed in" in listed.stderr
    assert load_index_problems(gm.root)[0].line == 2
    (gm.root / "global/documents/index.json").write_text(
        git(gm.root, "show", "HEAD~1:global/documents/index.json"))
    assert load_index_problems(gm.root) == []
    assert gm("doc", "list").stderr == ""


# -- copies deleted, moved or renamed by hand ---------------------------------------------------------
def test_a_copy_deleted_by_hand_is_restored_from_git_never_committed_as_deleted(
        gm: Cli, tmp_path: Path) -> None:
    _add(gm, tmp_path, "Plan")
    copy = gm.root / "global/documents/active/plan.md"
    committed = copy.read_text()
    copy.unlink()
    shown = gm("doc", "show", "global-doc-0001", "--json")
    assert shown.exit_code == 0 and json.loads(shown.stdout)["body"] == TEXT
    assert "is missing" in shown.stderr and not copy.exists()  # a read writes nothing
    added = gm("doc", "add", str(tmp_path / "source.md"), "--title", "Other", "--scope", "global")
    assert added.exit_code == 0, added.output
    assert "restored it from git" in added.stdout
    assert copy.read_text() == committed
    assert git(gm.root, "show", "HEAD:global/documents/active/plan.md") == committed
    assert "D\tglobal/documents" not in git(gm.root, "log", "--name-status", "--format=")


def test_a_copy_deleted_and_committed_with_git_comes_back_from_history(gm: Cli, tmp_path: Path) -> None:
    _add(gm, tmp_path, "Plan")
    git(gm.root, "rm", "-q", "global/documents/active/plan.md")
    git(gm.root, "commit", "-qm", "removed by hand")
    assert gm.json("doc", "show", "global-doc-0001")["body"] == TEXT  # type: ignore[index]
    assert gm("doc", "archive", "global-doc-0001").exit_code == 0
    archived = gm.root / "global/documents/archived/plan.md"
    assert TEXT in archived.read_text()
    assert git(gm.root, "status", "--porcelain") == ""


@pytest.mark.parametrize("target", ["global/documents/active/renamed.md",
                                    "global/documents/archived/plan.md"])
def test_a_copy_moved_by_hand_goes_back_with_its_text(gm: Cli, tmp_path: Path, target: str) -> None:
    _add(gm, tmp_path, "Plan")
    copy = gm.root / "global/documents/active/plan.md"
    moved = gm.root / target
    moved.parent.mkdir(parents=True, exist_ok=True)
    copy.rename(moved)
    with moved.open("a") as handle:
        handle.write("Typed after the move.\n")
    source = tmp_path / "x.md"
    source.write_text("another\n")
    result = gm("doc", "add", str(source), "--title", "Another", "--scope", "global")
    assert result.exit_code == 0 and "put back at global/documents/active/plan.md" in result.stdout
    assert not moved.exists() and copy.read_text().endswith("Typed after the move.\n")
    shown = gm.json("doc", "show", "global-doc-0001")
    assert isinstance(shown, dict) and shown["body"].endswith("Typed after the move.\n")
    assert shown["revision"] == 2
    hits = gm.json("search", "canary")
    assert isinstance(hits, list) and [h["id"] for h in hits] == ["global-doc-0001"]


# -- hand edit and --revision -----------------------------------------------------------------------
def test_an_agent_following_show_never_loops_on_a_hand_edit(gm: Cli, tmp_path: Path) -> None:
    _add(gm, tmp_path, "Plan")
    copy = gm.root / "global/documents/active/plan.md"
    source = tmp_path / "mine.md"
    for turn in range(3):
        copy.write_text(copy.read_text() + f"hand edit {turn}\n")
        shown = gm.json("doc", "show", "global-doc-0001")
        assert isinstance(shown, dict)
        source.write_text(f"agent text {turn}\n")
        done = gm("doc", "update", "global-doc-0001", str(source), "--revision", str(shown["revision"]))
        assert done.exit_code == 0, done.output
        assert gm.json("doc", "show", "global-doc-0001")["body"] == f"agent text {turn}\n"  # type: ignore[index]


def test_a_refused_update_writes_and_commits_nothing(gm: Cli, tmp_path: Path) -> None:
    _add(gm, tmp_path, "Plan")
    copy = gm.root / "global/documents/active/plan.md"
    copy.write_text(copy.read_text() + "typed\n")
    other = gm.root / "global/semantic/notes.md"  # another hand edit, elsewhere in the store
    other.parent.mkdir(parents=True, exist_ok=True)
    other.write_text("# Notes\n\n## A fact\n\nwritten by hand\n")
    before, status = commit_count(gm.root), git(gm.root, "status", "--porcelain")
    source = tmp_path / "mine.md"
    source.write_text("mine\n")
    refused = gm("doc", "update", "global-doc-0001", str(source), "--revision", "1")
    assert refused.exit_code == 2 and "at revision 2, not 1" in refused.stderr
    assert commit_count(gm.root) == before and git(gm.root, "status", "--porcelain") == status
    missing = gm("doc", "update", "global-doc-0009", str(source))
    assert missing.exit_code != 0 and commit_count(gm.root) == before


# -- titles -------------------------------------------------------------------------------------
@pytest.mark.parametrize("title, filename", [
    ("index", "index-doc.md"), ("con", "con-doc.md"), ("NUL", "nul-doc.md"), ("Lpt1", "lpt1-doc.md"),
    ("...", "document.md"), ("!!!", "document.md"), ("a.b.c", "a-b-c.md"), ("../../etc", "etc.md"),
    ("C:\\temp", "c-temp.md"), ("~/home", "home.md"), ("Über Straße", "über-straße.md"),
    ("x" * 150, "x" * 80 + ".md"),
])
def test_any_title_gets_a_file_name(gm: Cli, tmp_path: Path, title: str, filename: str) -> None:
    data = _add(gm, tmp_path, title)
    assert data["path"] == f"global/documents/active/{filename}"
    assert gm.json("doc", "show", str(data["id"]))["title"] == title  # type: ignore[index]


def test_the_same_slug_twice_gets_a_number(gm: Cli, tmp_path: Path) -> None:
    assert _add(gm, tmp_path, "...")["path"] == "global/documents/active/document.md"
    assert _add(gm, tmp_path, "!!!")["path"] == "global/documents/active/document-2.md"


def test_the_size_message_quotes_the_configured_limit(gm: Cli, tmp_path: Path) -> None:
    registry = json.loads((gm.root / "memory.json").read_text())
    registry.setdefault("settings", {})["documents"] = {"bodyLimitBytes": 4096}
    (gm.root / "memory.json").write_text(json.dumps(registry, indent=2) + "\n")
    git(gm.root, "commit", "-qam", "limit")
    source = tmp_path / "big.md"
    source.write_text("y" * 5000)
    refused = gm("doc", "add", str(source), "--title", "Big", "--scope", "global")
    assert refused.exit_code == 2
    assert "at most 4096 bytes (4 KiB)" in refused.stderr and "2 MiB" not in refused.stderr
    registry["settings"]["documents"] = {"bodyLimitBytes": 4000}
    (gm.root / "memory.json").write_text(json.dumps(registry, indent=2) + "\n")
    git(gm.root, "commit", "-qam", "limit")
    refused = gm("doc", "add", str(source), "--title", "Big", "--scope", "global")
    assert "at most 4000 bytes;" in refused.stderr
