"""`status` problems and `check` errors are one list, and `check` reads every file gitmem reads:
for each kind of problem, put in the store by hand or committed with plain git, both name it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from gitmem.store.store import Store
from gitmem.verbs.entries import remember
from support import Cli, git


def _write(root: Path, relpath: str, data: str | bytes) -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")


def duplicate_id(root: Path) -> str:
    text = (root / "global/semantic/notes.md").read_text(encoding="utf-8")
    _write(root, "global/semantic/zcopy.md", text)
    return "global/semantic/zcopy.md"


def conflict_marker(root: Path) -> str:
    path = root / "global/semantic/notes.md"
    path.write_text(path.read_text() + "\n<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n")
    return "global/semantic/notes.md"


def not_utf8(root: Path) -> str:
    _write(root, "global/semantic/pasted.md", b"## Pasted\n\xff\n")
    return "global/semantic/pasted.md"


def malformed_id(root: Path) -> str:
    _write(root, "global/semantic/odd.md", "## Odd\ntext\n\n**Id:** not-an-id\n")
    return "global/semantic/odd.md"


def document_index(root: Path) -> str:
    _write(root, "global/documents/index.json", "[[\n")
    return "global/documents/index.json"


def runtime_records(root: Path) -> str:
    _write(root, "global/runtime/memories.json", '{"items": [}\n')
    return "global/runtime/memories.json"


def id_marks(root: Path) -> str:
    _write(root, "ids.json", "{not json\n")
    return "ids.json"


def workspace_meta(root: Path) -> str:
    _write(root, "workspaces/proj/meta.json", '"just a string"\n')
    return "workspaces/proj/meta.json"


def document_copy(root: Path) -> str:
    _write(root, "global/documents/active/runbook.md", "---\ntitle: \"Runbook\"\nbody without an end\n")
    return "global/documents/active/runbook.md"


def registry(root: Path) -> str:
    _write(root, "memory.json", "{\n")
    return "memory.json"


def bad_workspace_folder(root: Path) -> str:
    _write(root, "workspaces/Bad Name/semantic/x.md", "## X\ntext\n")
    return "workspaces/Bad Name"


def layer_index_folder(root: Path) -> str:
    (root / "global/procedural.md").mkdir(parents=True)
    (root / "global/procedural.md/keep").write_text("x")
    return "global/procedural.md"


KINDS: list[Callable[[Path], str]] = [
    duplicate_id, conflict_marker, not_utf8, malformed_id, document_index, runtime_records,
    id_marks, workspace_meta, document_copy, registry, bad_workspace_folder, layer_index_folder,
]


def _agree(gm: Cli, relpath: str) -> None:
    status = gm("status", "--json")
    assert status.exit_code == 0, status.output
    problems = json.loads(status.stdout)["problems"]
    check = gm("check", "--json")
    assert check.exit_code == 2, check.output
    errors = json.loads(check.stdout)["errors"]
    assert problems == errors
    assert any(p.startswith(relpath) for p in errors), errors


@pytest.mark.parametrize("make", KINDS, ids=[k.__name__ for k in KINDS])
def test_status_and_check_name_the_same_errors_uncommitted(store: Store, gm: Cli,
                                                           make: Callable[[Path], str]) -> None:
    remember(store, "A fact worth keeping", "semantic", topic="notes")
    _agree(gm, make(store.root))


@pytest.mark.parametrize("make", [duplicate_id, conflict_marker, document_index, runtime_records,
                                  id_marks, document_copy],
                         ids=lambda k: k.__name__)
def test_status_and_check_name_the_same_errors_committed_with_plain_git(
        store: Store, gm: Cli, make: Callable[[Path], str]) -> None:
    remember(store, "A fact worth keeping", "semantic", topic="notes")
    relpath = make(store.root)
    git(store.root, "add", "-A")
    git(store.root, "-c", "core.hooksPath=/dev/null", "commit", "-qm", "by hand")
    _agree(gm, relpath)


def test_a_clean_store_has_no_problems_in_either(store: Store, gm: Cli) -> None:
    remember(store, "A fact worth keeping", "semantic", topic="notes")
    assert json.loads(gm("status", "--json").stdout)["problems"] == []
    assert gm("check").exit_code == 0
