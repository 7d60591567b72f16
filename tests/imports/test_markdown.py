"""`gitmem import markdown`: the shared engine's rules through a folder of notes and the real CLI
(provenance, layer guess, dry run, idempotence, updates, a person's edit, secrets, bad input)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from importfixtures import stage

from fixtures.tokens import SHAPES
from support import Cli, commit_count, git


def _notes(tmp: Path) -> Path:
    return stage("markdown", tmp) / "notes"


def _import(gm: Cli, *args: str) -> dict[str, Any]:
    report = gm.json("import", "markdown", *args)
    assert isinstance(report, dict)
    return report


def _by_title(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["title"]: a for a in report["actions"] if a["id"]}


def test_headings_become_entries_with_provenance_and_a_guessed_layer(gm: Cli, tmp_path: Path) -> None:
    notes = _notes(tmp_path)
    before = commit_count(gm.root)
    report = _import(gm, str(notes))
    assert commit_count(gm.root) == before + 1
    got = _by_title(report)
    assert got["Release steps"]["id"] == "notes-pro-0001"
    assert got["Why we chose Fly.io"]["id"].startswith("notes-dec-")
    assert got["Incident 2026-11"]["id"].startswith("notes-epi-")
    assert got["glossary"]["id"].startswith("notes-sem-")  # no heading: named by its file
    assert got["Kiruna"]["path"] == "workspaces/notes/semantic/straße.md"
    assert got["Incident 2026-11"]["path"].endswith("/guides-ops-incident-2026-11.md")
    assert "Editor state, never imported" not in json.dumps(report)  # hidden folders skipped
    text = (gm.root / got["Release steps"]["path"]).read_text(encoding="utf-8")
    assert "**Source:** import:markdown:deploy.md#deploying-orbit/release-steps" in text
    assert "**Import-hash:**" in text
    database = _by_title(report)["Database"]
    assert "forward-only" in (gm.root / database["path"]).read_text(encoding="utf-8")
    assert "Rollback" not in got  # a heading with no text of its own makes no entry
    assert "キルナ局" in gm("search", "キルナ局", workspace="notes").output


def test_dry_run_prints_the_plan_and_writes_nothing(gm: Cli, tmp_path: Path) -> None:
    notes = _notes(tmp_path)
    before = commit_count(gm.root)
    result = gm("import", "markdown", str(notes), "--dry-run")
    assert result.exit_code == 0
    assert "added      notes-pro-0001  Release steps  <- deploy.md:7" in result.output
    assert "would import" in result.output
    assert commit_count(gm.root) == before
    assert not (gm.root / "workspaces" / "notes").exists()
    assert git(gm.root, "status", "--porcelain") == ""


def test_importing_twice_changes_nothing(gm: Cli, tmp_path: Path) -> None:
    notes = _notes(tmp_path)
    _import(gm, str(notes))
    before = commit_count(gm.root)
    again = _import(gm, str(notes))
    assert set(again["counts"]) == {"unchanged"} and again["commit"] is None
    assert commit_count(gm.root) == before


def test_a_changed_source_updates_its_entries_and_keeps_a_persons_edit(gm: Cli, tmp_path: Path) -> None:
    notes = _notes(tmp_path)
    first = _by_title(_import(gm, str(notes)))
    deploy = notes / "deploy.md"
    deploy.write_text(deploy.read_text(encoding="utf-8")
                      .replace("push the tag.", "push the tag; announce it in #releases.")
                      .replace("ground stations.", "ground stations and costs less."), encoding="utf-8")
    decision = gm.root / first["Why we chose Fly.io"]["path"]
    decision.write_text(decision.read_text(encoding="utf-8").replace(
        "close to the ground stations.", "close to the ground stations (checked by Mira)."), encoding="utf-8")
    report = _import(gm, str(notes))
    got = _by_title(report)
    assert got["Release steps"]["action"] == "updated"
    assert got["Release steps"]["id"] == first["Release steps"]["id"]
    assert got["Why we chose Fly.io"]["action"] == "kept-edit"
    assert "checked by Mira" in decision.read_text(encoding="utf-8")
    assert "costs less" not in decision.read_text(encoding="utf-8")
    steps = (gm.root / got["Release steps"]["path"]).read_text(encoding="utf-8")
    assert steps.count("## Release steps") == 1 and "announce it in #releases" in steps
    assert set(_import(gm, str(notes))["counts"]) <= {"unchanged", "kept-edit"}


def test_text_the_store_holds_is_not_written_twice(gm: Cli, tmp_path: Path) -> None:
    notes = _notes(tmp_path)
    text = "A pass is one overflight of a satellite above a ground station's horizon."
    assert gm("remember", text, "--layer", "semantic", "--topic", "glossary", "--scope", "workspace",
              workspace="notes").exit_code == 0
    got = _by_title(_import(gm, str(notes)))
    assert got["glossary"]["action"] == "duplicate" and got["glossary"]["id"] == "notes-sem-0001"


def test_scope_layer_and_workspace_can_be_forced(gm: Cli, tmp_path: Path) -> None:
    notes = _notes(tmp_path)
    report = _import(gm, str(notes), "--layer", "learnings", "--workspace", "orbit")
    assert {a["id"].rsplit("-", 1)[0] for a in report["actions"] if a["id"]} == {"orbit-lrn"}
    other = tmp_path / "other"
    shutil.copytree(notes, other)
    report = _import(gm, str(other), "--scope", "global")
    assert all(a["path"].startswith("global/") for a in report["actions"] if a["action"] == "added")
    bad = gm("import", "markdown", str(notes), "--layer", "state")
    assert bad.exit_code == 2 and "cannot import into layer 'state'" in bad.output


def test_a_secret_in_a_source_refuses_the_import(gm: Cli, tmp_path: Path) -> None:
    notes = _notes(tmp_path)
    shape = next(s for s in SHAPES if s.name == "GitHub classic token")
    (notes / "ci.md").write_text(f"# CI\n\n## Token\n{shape.forms()['prose']}\n", encoding="utf-8")
    before = commit_count(gm.root)
    result = gm("import", "markdown", str(notes))
    assert result.exit_code == 2
    assert "ci.md:4" in result.output and "nothing was written" in result.output
    assert shape.secret not in result.output
    assert commit_count(gm.root) == before and not (gm.root / "workspaces" / "notes").exists()
    dry = gm("import", "markdown", str(notes), "--dry-run")
    assert dry.exit_code == 2 and shape.secret not in dry.output
    allowed = gm("import", "markdown", str(notes), "--allow-secret")
    assert allowed.exit_code == 0 and commit_count(gm.root) == before + 1


def test_a_file_name_that_cannot_be_a_topic_stops_the_import_naming_the_file(gm: Cli,
                                                                             tmp_path: Path) -> None:
    """A file's name becomes its topic: a token or a control character there is refused, and the
    refusal says which file (the token masked), --allow-secret or not."""
    shape = next(s for s in SHAPES if s.name == "GitHub classic token")
    for name, why in ((f"{shape.secret}.md", "likely secret"), ("tab\there.md", "control characters")):
        notes = _notes(tmp_path / name.replace("\t", "-")[:8])
        (notes / "keys").mkdir()
        (notes / "keys" / name).write_text("# Note\n\nplain words here.\n", encoding="utf-8")
        before = commit_count(gm.root)
        for extra in ((), ("--allow-secret",), ("--dry-run",)):
            result = gm("import", "markdown", str(notes), *extra)
            assert result.exit_code == 2, result.output
            assert "keys/" in result.output and why in result.output
            assert shape.secret not in result.output and "Traceback" not in result.output
            assert commit_count(gm.root) == before
        assert git(gm.root, "status", "--porcelain") == ""


def test_a_malformed_file_stops_the_import_naming_file_and_line(gm: Cli, tmp_path: Path) -> None:
    copy = stage("markdown", tmp_path)
    for name, where in (("latin1.md", "latin1.md:3: not UTF-8 text"),
                        ("frontmatter.md", "frontmatter.md:2: front matter is not valid YAML")):
        notes = tmp_path / f"notes-{name}"
        shutil.copytree(copy / "notes", notes)
        shutil.copy(copy / "malformed" / name, notes / "zz-broken.md")
        before = commit_count(gm.root)
        result = gm("import", "markdown", str(notes))
        assert result.exit_code == 2, result.output
        assert where.replace(name, "zz-broken.md") in result.output
        assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
        assert commit_count(gm.root) == before
        assert git(gm.root, "status", "--porcelain") == ""
    missing = gm("import", "markdown", str(tmp_path / "nowhere"))
    assert missing.exit_code == 2 and "no such file or folder" in missing.output


def test_the_installed_command_imports_and_prints_no_progress_off_a_terminal(store_root: Path,
                                                                              tmp_path: Path) -> None:
    from support import run_gitmem

    notes = _notes(tmp_path)
    assert run_gitmem("--root", str(store_root), "init").returncode == 0
    done = run_gitmem("--root", str(store_root), "import", "markdown", str(notes))
    assert done.returncode == 0, done.stderr
    assert "importing:" not in done.stderr and done.stderr == ""
    assert done.stdout.strip().splitlines()[-1].startswith("markdown: imported from 4 file(s): 6 added")
    exported = run_gitmem("--root", str(store_root), "export", "--format", "jsonl")
    assert exported.returncode == 0
    assert sum('"kind": "entry"' in line for line in exported.stdout.splitlines()) == 6


def test_an_unknown_source_or_format_is_one_line(gm: Cli, tmp_path: Path) -> None:
    for args in (("import", "notion", str(tmp_path)), ("export", "--format", "xml")):
        result = gm(*args)
        assert result.exit_code == 2
        assert len(result.output.strip().splitlines()) == 1, result.output
