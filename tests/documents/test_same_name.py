"""Two machines adding documents under one title: each keeps a copy file of its own, in every
scope, on both machines and on a fresh clone; the same for entries two machines add to a topic
file both created (the sibling case of the topic tier)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from support import Cli, git


def _machines(tmp_path: Path, bare_remote: Path) -> tuple[Cli, Cli]:
    a, b = Cli(tmp_path / "a", CliRunner()), Cli(tmp_path / "b", CliRunner())
    assert a("init", "--remote", str(bare_remote)).exit_code == 0
    assert a("sync").exit_code == 0
    assert b("init", "--remote", str(bare_remote)).exit_code == 0
    return a, b


def _add(gm: Cli, tmp_path: Path, text: str, *scope: str) -> str:
    source = tmp_path / "source.md"
    source.write_text(f"# Runbook\n\n{text}\n")
    added = gm("doc", "add", str(source), "--title", "Runbook", *scope, "--json")
    assert added.exit_code == 0, added.output
    return str(json.loads(added.stdout)["path"])


def _sync_all(a: Cli, b: Cli) -> None:
    for gm in (a, b, a):
        done = gm("sync")
        assert done.exit_code == 0, done.output


def _documents(gm: Cli) -> dict[str, str]:
    """{the text of each document's body: its copy's path}, every copy on disk counted once."""
    found: dict[str, str] = {}
    for view in gm.json("doc", "list", "--all", "--json"):  # type: ignore[union-attr]
        shown = gm.json("doc", "show", str(view["id"]))
        assert isinstance(shown, dict)
        assert str(shown["body"]) in (gm.root / str(shown["path"])).read_text()
        found[str(shown["body"]).strip()] = str(shown["path"])
    return found


@pytest.mark.parametrize("ahead", [False, True], ids=["same-id", "other-id"])
def test_same_titled_documents_from_two_machines_keep_a_copy_each(
        tmp_path: Path, bare_remote: Path, ahead: bool) -> None:
    a, b = _machines(tmp_path, bare_remote)
    if ahead:  # b numbers its document past a's: the ids differ, the file names do not
        source = tmp_path / "other.md"
        source.write_text("# Other\n\nanother document\n")
        assert b("doc", "add", str(source), "--title", "Other", "--scope", "global").exit_code == 0
    assert _add(a, tmp_path, "drain the queue (laptop)", "--scope", "global") == \
        _add(b, tmp_path, "restart the workers (desktop)", "--scope", "global")
    _sync_all(a, b)
    fresh = Cli(tmp_path / "fresh", CliRunner())
    assert fresh("init", "--remote", str(bare_remote)).exit_code == 0
    for gm in (a, b, fresh):
        docs = _documents(gm)
        texts = {"# Runbook\n\ndrain the queue (laptop)", "# Runbook\n\nrestart the workers (desktop)"}
        assert texts <= set(docs)
        assert len(set(docs.values())) == len(docs)  # one copy file per document
        copies = sorted((gm.root / "global/documents").glob("*/*.md"))
        assert len(copies) == len(docs)
        assert not any("<<<<<<<" in p.read_text() for p in copies)
        assert git(gm.root, "status", "--porcelain").strip() == ""
        assert gm("conflicts").exit_code == 1
    assert _documents(a) == _documents(b) == _documents(fresh)


def test_same_titled_workspace_documents_keep_a_copy_each(tmp_path: Path, bare_remote: Path) -> None:
    a, b = _machines(tmp_path, bare_remote)
    paths = [_add(gm, tmp_path, f"written on {name}", "--scope", "workspace", "--workspace", "proj")
             for gm, name in ((a, "a"), (b, "b"))]
    assert paths[0] == paths[1] and paths[0].startswith("workspaces/proj/documents/active/")
    _sync_all(a, b)
    for gm in (a, b):
        listed = gm.json("doc", "list", "--all", "--workspace", "proj", "--json")
        assert isinstance(listed, list) and len(listed) == 2
        assert len({d["path"] for d in listed}) == 2
        bodies = {str(gm.json("doc", "show", str(d["id"]))["body"]).strip() for d in listed}  # type: ignore[index]
        assert bodies == {"# Runbook\n\nwritten on a", "# Runbook\n\nwritten on b"}


def test_a_topic_file_created_on_two_machines_keeps_both_entries(tmp_path: Path, bare_remote: Path) -> None:
    a, b = _machines(tmp_path, bare_remote)
    assert a("remember", "The deploy runs from the laptop", "-l", "semantic", "-t", "deploy").exit_code == 0
    assert b("remember", "The deploy needs the VPN", "-l", "semantic", "-t", "deploy").exit_code == 0
    _sync_all(a, b)
    for gm in (a, b):
        text = (gm.root / "global/semantic/deploy.md").read_text()
        assert "The deploy runs from the laptop" in text and "The deploy needs the VPN" in text
        assert "<<<<<<<" not in text
        ids = [line for line in text.splitlines() if line.startswith("Id:") or "**Id:**" in line]
        assert len(ids) == len(set(ids)) == 2, text
        assert gm("check").exit_code == 0
