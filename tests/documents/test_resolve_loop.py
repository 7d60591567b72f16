"""Every locator `gitmem conflicts` prints is taken by `gitmem resolve`: two machines change the
same topic entry, the same document and the same runtime memory item differently, sync, and then
each listed conflict is resolved by the ref the listing gives until none is left."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitmem.format.document import split_copy
from support import Cli, git

PLAN = "# Plan\n\nline one\n\n## Steps\n\nline two\n"


def _conflicted(tmp_path: Path, bare_remote: Path) -> tuple[Cli, Cli]:
    laptop, desktop = Cli(tmp_path / "laptop", CliRunner()), Cli(tmp_path / "desktop", CliRunner())
    assert laptop("init", "--remote", str(bare_remote)).exit_code == 0
    source = tmp_path / "plan.md"
    source.write_text(PLAN)
    assert laptop("doc", "add", str(source), "--title", "Plan", "--scope", "global").exit_code == 0
    assert laptop("remember", "Staging DB host is 10.0.0.7", "-l", "semantic", "-t", "staging").exit_code == 0
    assert laptop("runtime", "add", "Tests run with make test").exit_code == 0
    assert laptop("sync").exit_code == 0
    assert desktop("init", "--remote", str(bare_remote)).exit_code == 0
    for machine, word in ((laptop, "laptop"), (desktop, "desktop")):
        source.write_text(PLAN.replace("line two", f"line two, {word}"))
        assert machine("doc", "update", "global-doc-0001", str(source)).exit_code == 0
        topic = machine.root / "global/semantic/staging.md"
        topic.write_text(topic.read_text().replace("10.0.0.7", f"10.0.0.{word}"))
        replaced = machine("runtime", "replace", "make test", f"Tests run with make test-{word}")
        assert replaced.exit_code == 0, replaced.output
    assert laptop("sync", env={"GITMEM_MACHINE": "laptop"}).exit_code == 0
    assert desktop("sync", env={"GITMEM_MACHINE": "desktop"}).exit_code == 3
    return laptop, desktop


def _listed(gm: Cli) -> list[dict[str, object]]:
    result = gm("conflicts", "--json")
    data = json.loads(result.stdout) if result.stdout.strip() else []
    assert isinstance(data, list)
    return data


@pytest.mark.parametrize("how", ["ours", "theirs", "both"])
def test_each_listed_conflict_is_resolved_by_its_ref(tmp_path: Path, bare_remote: Path, how: str) -> None:
    laptop, desktop = _conflicted(tmp_path, bare_remote)
    first = _listed(desktop)
    kinds = {(str(c["path"]).split("/")[1], c["kind"]) for c in first}
    assert {"documents", "semantic", "runtime"} <= {k for k, _ in kinds}, first
    for _turn in range(len(first) + 1):
        listed = _listed(desktop)
        if not listed:
            break
        ref = str(listed[0]["ref"])
        choice = "ours" if how == "both" and ref.startswith("rt-") else how
        done = desktop("resolve", ref, f"--{choice}", env={"GITMEM_MACHINE": "desktop"})
        assert done.exit_code == 0, (ref, done.output)
        assert ref not in {str(c["ref"]) for c in _listed(desktop)} or ":" in ref
    assert _listed(desktop) == []
    assert git(desktop.root, "status", "--porcelain") == ""
    shown = desktop.json("doc", "show", "global-doc-0001")
    assert isinstance(shown, dict) and "<<<<<<<" not in str(shown["body"])
    expected = {"ours": ["line two, desktop"], "theirs": ["line two, laptop"],
                "both": ["line two, desktop", "line two, laptop"]}[how]
    assert [line for line in str(shown["body"]).splitlines() if line.startswith("line two")] == expected
    copy = (desktop.root / "global/documents/active/plan.md").read_text()
    assert split_copy(copy)[0]["revision"] == shown["revision"] == 3
    assert desktop("sync").exit_code == 0 and laptop("sync").exit_code == 0
    assert laptop.json("doc", "show", "global-doc-0001")["body"] == shown["body"]  # type: ignore[index]


@pytest.mark.parametrize("ref", ["global-doc-0001", "global/documents/index.json:0",
                                 "global/documents/active/plan.md"])
def test_naming_the_document_settles_its_whole_copy(tmp_path: Path, bare_remote: Path, ref: str) -> None:
    _laptop, desktop = _conflicted(tmp_path, bare_remote)
    done = desktop("resolve", ref, "--both")
    assert done.exit_code == 0, done.output
    assert not [c for c in _listed(desktop) if "/documents/" in str(c["path"])]
    body = str(desktop.json("doc", "show", "global-doc-0001")["body"])  # type: ignore[index]
    assert "line two, desktop" in body and "line two, laptop" in body and "<<<<<<<" not in body


def test_a_hand_settled_copy_is_taken_by_resolve_without_a_flag(tmp_path: Path, bare_remote: Path) -> None:
    _laptop, desktop = _conflicted(tmp_path, bare_remote)
    copy = desktop.root / "global/documents/active/plan.md"
    refused = desktop("resolve", "global-doc-0001")
    assert refused.exit_code == 2 and "markers are still in global/documents/active/plan.md:" in refused.stderr
    values, _body, _line = split_copy(copy.read_text())
    copy.write_text("---\nid: \"global-doc-0001\"\n---\n# Plan\n\nagreed by hand\n")
    done = desktop("resolve", "global-doc-0001")
    assert done.exit_code == 0, done.output
    assert desktop.json("doc", "show", "global-doc-0001")["body"] == "# Plan\n\nagreed by hand\n"  # type: ignore[index]
    assert not [c for c in _listed(desktop) if "/documents/" in str(c["path"])]


def test_a_runtime_item_cannot_keep_both_texts(tmp_path: Path, bare_remote: Path) -> None:
    _laptop, desktop = _conflicted(tmp_path, bare_remote)
    [item] = [c for c in _listed(desktop) if str(c["path"]).endswith("memories.json")]
    refused = desktop("resolve", str(item["ref"]), "--both")
    assert refused.exit_code == 2 and "--ours or --theirs" in refused.stderr
