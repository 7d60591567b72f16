"""Ids are never re-used: a number stays handed out after its entry is deleted, on every machine
(ids.json, committed, merged by the larger number)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitmem.format.idmarks import merge_marks, parse_marks
from gitmem.githooks.install import install as install_hooks
from gitmem.merge.files import merge_file
from gitmem.store.store import Store
from gitmem.sync.remote import init_store
from support import GIT_ENV, Cli, git

DB = "global/semantic/db.md"


def ok(gm: Cli, *args: str) -> str:
    result = gm(*args)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def sh_git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV})


def drop_last_entry(root: Path, relpath: str = DB) -> None:
    """Delete the last entry of a file by hand, as in an editor."""
    text = (root / relpath).read_text(encoding="utf-8")
    (root / relpath).write_text(text[:text.rindex("\n## ")] + "\n", encoding="utf-8")


def two_machines(tmp_path: Path, bare_remote: Path) -> tuple[Cli, Cli]:
    """Machine a makes the store and pushes it; machine b is made from the remote."""
    machines = []
    for name in ("a", "b"):
        store = Store(tmp_path / name, cwd=tmp_path)
        init_store(store, remote=str(bare_remote), branch="main")
        if name == "a":
            store.close()
            assert Cli(tmp_path / name, CliRunner())("sync").exit_code == 0
        store.close()
        machines.append(Cli(tmp_path / name, CliRunner()))
    return machines[0], machines[1]


def three(gm: Cli) -> None:
    for n in (1, 2, 3):
        assert ok(gm, "remember", f"fact number {n}", "-l", "semantic", "-t", "db") == f"global-sem-000{n}"


def test_the_number_of_a_deleted_highest_entry_is_not_handed_out_again(gm: Cli) -> None:
    three(gm)
    drop_last_entry(gm.root)
    assert ok(gm, "remember", "fact number 4", "-l", "semantic", "-t", "db") == "global-sem-0004"
    assert parse_marks((gm.root / "ids.json").read_text()) == {("global", "semantic"): 3}
    assert "ids.json" in git(gm.root, "ls-files")
    (gm.root / DB).unlink()  # the whole file goes, 0004 with it
    assert ok(gm, "remember", "fact number 5", "-l", "semantic", "-t", "other") == "global-sem-0005"
    assert json.loads((gm.root / "ids.json").read_text()) == {"global-sem": 4}
    (gm.root / "state/catalog.sqlite").unlink()  # the committed file is enough
    assert ok(gm, "remember", "fact number 6", "-l", "semantic", "-t", "other") == "global-sem-0006"
    assert gm("check").exit_code == 0


def test_a_deletion_committed_with_git_keeps_the_number(gm: Cli) -> None:
    install_hooks(gm.root)
    three(gm)
    drop_last_entry(gm.root)
    done = sh_git(gm.root, "commit", "-qam", "drop the third fact")
    assert done.returncode == 0, done.stderr
    assert "ids.json" in git(gm.root, "show", "--name-only", "--format=", "HEAD")
    (gm.root / "state/catalog.sqlite").unlink()
    with open(gm.root / "global/semantic/new.md", "w", encoding="utf-8") as handle:
        handle.write("## Written by hand\nno Id yet\n")
    sh_git(gm.root, "add", "-A")
    done = sh_git(gm.root, "commit", "-qm", "new fact")
    assert done.returncode == 0, done.stderr
    assert "**Id:** global-sem-0004" in (gm.root / "global/semantic/new.md").read_text()


def test_a_deletion_on_one_machine_holds_on_the_other(tmp_path: Path, bare_remote: Path) -> None:
    a, b = two_machines(tmp_path, bare_remote)
    three(a)
    assert a("sync").exit_code == 0
    drop_last_entry(a.root)
    assert a("sync").exit_code == 0  # the deletion and ids.json go out together
    assert b("sync").exit_code == 0
    (b.root / "state/catalog.sqlite").unlink()
    assert ok(b, "remember", "written on b", "-l", "semantic", "-t", "db") == "global-sem-0004"


def test_ids_json_merges_by_the_larger_number_in_sync_and_in_git() -> None:
    base = '{\n  "global-sem": 3\n}\n'
    ours = '{\n  "global-sem": 5,\n  "proj-cod": 2\n}\n'
    theirs = '{\n  "global-pro": 7,\n  "global-sem": 4\n}\n'
    merged = merge_file("ids.json", base, ours, theirs)
    assert merged is not None and not merged.conflicts
    assert json.loads(merged.text) == {"global-pro": 7, "global-sem": 5, "proj-cod": 2}
    assert merged.text == merge_marks(theirs, ours)
    assert parse_marks('{"global-sem": "x", "nonsense": 3, "global-sem2": 1}') == {}


def test_a_plain_git_pull_merges_ids_json_without_a_conflict(tmp_path: Path, bare_remote: Path) -> None:
    a, b = two_machines(tmp_path, bare_remote)
    for cli in (a, b):
        install_hooks(cli.root)
    three(a)
    ok(a, "remember", "a procedure", "-l", "procedural", "-t", "ops")
    ok(a, "remember", "another procedure", "-l", "procedural", "-t", "ops")
    assert a("sync").exit_code == 0 and b("sync").exit_code == 0
    drop_last_entry(a.root)
    ok(a, "remember", "more on a", "-l", "semantic", "-t", "other")  # ids.json: global-sem 3
    drop_last_entry(b.root, "global/procedural/ops.md")
    ok(b, "remember", "more on b", "-l", "procedural", "-t", "other")  # ids.json: global-pro 2
    assert a("sync").exit_code == 0
    pulled = sh_git(b.root, "pull", "--no-rebase", "-q", "origin", "main")
    assert pulled.returncode == 0, pulled.stderr
    assert json.loads((b.root / "ids.json").read_text()) == {"global-pro": 2, "global-sem": 3}


@pytest.mark.parametrize("layer", ["procedural", "semantic"])
def test_space_merge_does_not_bring_back_a_number_the_target_handed_out(tmp_path: Path, layer: str) -> None:
    home, team = Cli(tmp_path / "mine", CliRunner()), Cli(tmp_path / "team", CliRunner())
    for cli in (home, team):
        assert cli("init").exit_code == 0
    abbr = "pro" if layer == "procedural" else "sem"
    for n in (1, 2):
        ok(home, "remember", f"home fact {n}", "-l", layer, "-t", "x")
        ok(team, "remember", f"team fact {n}", "-l", layer, "-t", "x")
    drop_last_entry(home.root, f"global/{layer}/x.md")
    ok(home, "remember", "elsewhere", "-l", "episodic", "-t", "y")  # commits the deletion
    assert home("space", "add", "team", str(team.root)).exit_code == 0
    report = json.loads(ok(home, "space", "merge", "team", "home", "--json"))
    assert report["imported"] == {f"global-{abbr}-0001": f"global-{abbr}-0003",
                                  f"global-{abbr}-0002": f"global-{abbr}-0004"}


def test_the_highest_numbers_are_those_of_every_scope_and_layer_the_ids_name(tmp_path: Path) -> None:
    """The catalog reads each scope+layer's highest number by index seeks; it finds what one
    GROUP BY over every entry finds, Ids of other scopes, malformed Ids and entries without one
    included."""
    from gitmem.format.entry import TopicFile
    from gitmem.format.markdown import parse_topic_file
    from gitmem.store.catalog import Catalog

    files = {
        "global/semantic/a.md": ["global-sem-0007", "global-sem-0002", "ws-a-sem-0040", "not-an-id", ""],
        "global/procedural/b.md": ["global-pro-0003", "global-sem-0011"],
        "workspaces/ws-a/codebase/c.md": ["ws-a-cod-0005", "ws-b-his-0009", ""],
    }
    texts = {path: "---\ntopic: t\n---\n# T\n\n" + "".join(
        f"## Entry {n}\nBody {n}.\n\n" + (f"**Id:** {ident}\n" if ident else "") + "\n"
        for n, ident in enumerate(ids)) for path, ids in files.items()}
    catalog = Catalog(tmp_path)

    def read(relpath: str) -> TopicFile | None:
        return parse_topic_file(texts[relpath], relpath)

    catalog.rebuild(list(texts), read)
    grouped = {(str(s), str(lay)): int(n) for s, lay, n in catalog.db.execute(
        "SELECT id_scope, id_layer, MAX(num) FROM entries WHERE num IS NOT NULL GROUP BY 1, 2")}
    assert catalog.tops() == grouped == {
        ("global", "semantic"): 11, ("global", "procedural"): 3, ("ws-a", "semantic"): 40,
        ("ws-a", "codebase"): 5, ("ws-b", "history"): 9}
    catalog.note_seen()
    texts["global/procedural/b.md"] = texts["global/procedural/b.md"].replace("**Id:** global-sem-0011\n", "")
    catalog.refresh(["global/procedural/b.md"], read)
    assert catalog.tops()[("global", "semantic")] == 7
    assert catalog.lost_tops() == {("global", "semantic"): 11}
    catalog.close()
