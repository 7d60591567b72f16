"""A JSON file gitmem reads that a pull brought broken (made on another machine with plain git,
past the hooks): on this machine reads use git's last good version of it, `status` and `check`
name it and that version, writes elsewhere go on, a write into it is refused, and gitmem never
commits it. One mechanism (store/lastgood.py) for every kind: memory.json, ids.json, a scope's
runtime/memories.json and documents/index.json."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from support import Cli, git


@dataclass(frozen=True)
class Kind:
    path: str
    read: Callable[[Cli], None]  # asserts what a read gives from the last good version
    refused: tuple[str, ...]  # a write into the broken file itself


def _read_registry(gm: Cli) -> None:
    shown = gm("workspaces", "--json")
    assert shown.exit_code == 0, shown.output
    assert "proj" in shown.stdout  # registered in the last good memory.json only


def _read_marks(gm: Cli) -> None:
    new = gm("remember", "The build needs Java 21", "-l", "semantic", "-t", "build")
    assert new.exit_code == 0, new.output
    assert new.stdout.strip().splitlines()[0] == "global-sem-0008"  # past the last good mark (7)


def _read_runtime(gm: Cli) -> None:
    shown = gm("runtime", "show", "--json")
    assert shown.exit_code == 0, shown.output
    assert "The laptop runs the nightly job" in shown.stdout


def _read_documents(gm: Cli) -> None:
    listed = gm.json("doc", "list", "--json")
    assert isinstance(listed, list) and [d["title"] for d in listed] == ["Runbook"]
    shown = gm.json("doc", "show", str(listed[0]["id"]))
    assert isinstance(shown, dict) and "drain the queue" in str(shown["body"])


KINDS = {
    "memory.json": Kind("memory.json", _read_registry, ("associate", "other", "--title", "Other")),
    "ids.json": Kind("ids.json", _read_marks, ()),
    "runtime": Kind("global/runtime/memories.json", _read_runtime, ("runtime", "add", "Another fact")),
    "documents": Kind("global/documents/index.json", _read_documents,
                      ("doc", "update", "global-doc-0001", "{source}")),
}


def _break(text: str) -> str:
    """A hand edit gone wrong: the file cut short (no longer JSON)."""
    return text.rstrip()[:-2] + "\n"


@pytest.fixture
def pulled(tmp_path: Path, bare_remote: Path, request: pytest.FixtureRequest) -> tuple[Cli, Kind, str]:
    """Machine B after a sync brought the file broken by hand on machine A; and its broken text."""
    kind = KINDS[request.param]
    a = Cli(tmp_path / "a", CliRunner())
    assert a("init", "--remote", str(bare_remote)).exit_code == 0
    source = tmp_path / "runbook.md"
    source.write_text("# Runbook\n\nStep one: drain the queue.\n")
    assert a("doc", "add", str(source), "--title", "Runbook", "--scope", "global").exit_code == 0
    assert a("runtime", "add", "The laptop runs the nightly job").exit_code == 0
    assert a("associate", "proj", "--title", "Project", "--path", str(tmp_path)).exit_code == 0
    assert a("remember", "The deploy runs on Fridays", "-l", "semantic", "-t", "deploy").exit_code == 0
    assert a("sync").exit_code == 0
    (a.root / "ids.json").write_text(json.dumps({"global-sem": 7}, indent=2) + "\n")
    git(a.root, "add", "ids.json")
    git(a.root, "commit", "-q", "-m", "ids.json: numbers handed out")
    target = a.root / kind.path
    broken = _break(target.read_text())
    target.write_text(broken)
    git(a.root, "add", kind.path)
    git(a.root, "commit", "-q", "--no-verify", "-m", "hand edit gone wrong")
    git(a.root, "push", "-q", "origin", "main")
    b = Cli(tmp_path / "b", CliRunner())
    assert b("init", "--remote", str(bare_remote)).exit_code == 0
    assert (b.root / kind.path).read_text() == broken
    return b, kind, broken


@pytest.mark.parametrize("pulled", list(KINDS), indirect=True)
def test_reads_use_the_last_good_version_and_say_so(pulled: tuple[Cli, Kind, str]) -> None:
    b, kind, _broken = pulled
    kind.read(b)
    listed = b("search", "deploy")
    assert listed.exit_code == 0 and "The deploy runs on Fridays" in listed.stdout
    for verb in ("status", "check"):
        shown = b(verb)
        lines = [line for line in shown.output.splitlines() if line.lstrip().startswith(f"{kind.path}:")]
        assert lines, shown.output
        assert "gitmem reads the version committed in" in lines[0], lines[0]
    assert b("check").exit_code == 2


@pytest.mark.parametrize("pulled", list(KINDS), indirect=True)
def test_writes_elsewhere_go_on_and_never_commit_the_broken_file(pulled: tuple[Cli, Kind, str],
                                                                  tmp_path: Path) -> None:
    b, kind, broken = pulled
    head = git(b.root, "rev-parse", "HEAD").strip()
    done = b("remember", "The VPN is needed for the deploy", "-l", "semantic", "-t", "vpn")
    assert done.exit_code == 0, done.output
    if kind.refused:
        source = tmp_path / "new.md"
        source.write_text("# Runbook\n\nStep two.\n")
        refused = b(*(str(source) if a == "{source}" else a for a in kind.refused))
        assert refused.exit_code != 0 and "Traceback" not in refused.output
        assert kind.path in refused.output
    assert (b.root / kind.path).read_text() == broken
    assert b("sync").exit_code == 0
    assert git(b.root, "status", "--porcelain", "--", kind.path).strip() == ""
    changed = git(b.root, "log", "--format=", "--name-only", f"{head}..HEAD").split()
    assert changed and kind.path not in changed
