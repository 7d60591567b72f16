"""`gitmem import basic-memory`: notes, observations and typed relations of a basic-memory
project (fixture written from its note format), and Hermes' §-separated files into the runtime tier."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from importfixtures import stage

from support import Cli, commit_count


def _report(gm: Cli, tool: str, path: Path, *args: str) -> dict[str, Any]:
    report = gm.json("import", tool, str(path), *args)
    assert isinstance(report, dict)
    return report


def _entry(gm: Cli, entry_id: str) -> dict[str, Any]:
    shown = gm.json("show", entry_id)
    assert isinstance(shown, dict)
    return shown


def _fields(gm: Cli, entry_id: str) -> dict[str, str]:
    shown = _entry(gm, entry_id)
    return shown.get("fields") or shown["entry"]["fields"]


def test_notes_observations_and_relations(gm: Cli, tmp_path: Path) -> None:
    project = stage("basic-memory", tmp_path) / "project"
    report = _report(gm, "basic-memory", project)
    ids = {a["title"]: a["id"] for a in report["actions"] if a["action"] == "added"}
    coffee, tea, grinder = ids["Coffee Brewing Methods"], ids["Tea Brewing Methods"], ids["Proper Grinding Technique"]
    # Observations: layer from the category, category/tags/context kept, linked to their note.
    burr = ids["We chose a burr grinder over a blade grinder for even particles"]
    assert burr.split("-")[1] == "dec"
    assert ids["Grind size matters more than the dose, we learned the hard way"].split("-")[1] == "lrn"
    assert ids["Cupping session on 2026-11-20"].split("-")[1] == "epi"
    temperature = _fields(gm, ids["Water temperature at 96 °C extracts the sweetest cup"])
    assert temperature["Category"] == "technique" and temperature["Tags"] == "brewing"
    assert temperature["Related"] == f"entity:{coffee}"
    assert _fields(gm, ids["Ethiopian beans work well with lighter roasts"])["Context"] == "personal experience"
    # A checked task is prose, not an observation.
    assert "a checked task, not an observation" not in ids
    # Relations: typed by their name, resolved by title or permalink; missing targets reported.
    related = _fields(gm, coffee)["Related"]
    assert f"causal:{grinder}" in related and f"semantic:{tea}" in related
    assert f"semantic:{coffee}" in _fields(gm, grinder)["Related"]  # [[coffee-brewing-methods]]
    unlinked = sorted(a["title"] for a in report["actions"] if a["action"] == "unlinked")
    assert unlinked == ["entity: Roastery Team (no such note)", "semantic: Coffee Bean Origins (no such note)",
                        "temporal: Coffee Bean Origins (no such note)"]
    graph = gm.json("related", coffee)
    assert grinder in json.dumps(graph)
    assert _fields(gm, ids["Ana Núñez"])["Type"] == "Person"


def test_reimport_is_idempotent_and_an_edited_observation_updates(gm: Cli, tmp_path: Path) -> None:
    project = stage("basic-memory", tmp_path) / "project"
    first = _report(gm, "basic-memory", project)
    before = commit_count(gm.root)
    again = _report(gm, "basic-memory", project)
    assert set(again["counts"]) == {"unchanged", "unlinked"} and commit_count(gm.root) == before
    tea = project / "tea-brewing.md"
    tea.write_text(tea.read_text(encoding="utf-8").replace("for one minute", "for ninety seconds"),
                   encoding="utf-8")
    updated = [a for a in _report(gm, "basic-memory", project)["actions"] if a["action"] == "updated"]
    old = next(a["id"] for a in first["actions"] if a["title"].startswith("Sencha"))
    assert [(a["id"], a["title"]) for a in updated] == [(old, "Sencha is steeped at 70 °C for ninety seconds")]


def test_a_malformed_note_stops_the_import(gm: Cli, tmp_path: Path) -> None:
    copy = stage("basic-memory", tmp_path)
    shutil.copy(copy / "malformed" / "broken.md", copy / "project" / "people" / "broken.md")
    before = commit_count(gm.root)
    result = gm("import", "basic-memory", str(copy / "project"))
    assert result.exit_code == 2
    assert "cannot import people/broken.md:3: front matter is not valid YAML" in result.output
    assert commit_count(gm.root) == before and not (gm.root / "workspaces" / "project").exists()


def test_hermes_files_land_in_the_runtime_tier(gm: Cli, tmp_path: Path) -> None:
    folder = stage("hermes", tmp_path) / "memories"
    report = _report(gm, "hermes", folder)
    assert report["counts"] == {"added": 5}
    shown = gm.json("runtime", "show")
    text = json.dumps(shown, ensure_ascii=False)
    assert "never deploy on Fridays" in text and "Europe/Berlin" in text
    user = (gm.root / "global/runtime/USER.md").read_text(encoding="utf-8")
    assert user == "Name: Mira. Prefers concise answers.\n§\nTimezone Europe/Berlin; works 09:00–17:00 CET.\n"
    records = json.loads((gm.root / "global/runtime/memories.json").read_text(encoding="utf-8"))
    assert {i["source"] for i in records["items"]} >= {"import:hermes:MEMORY.md#memory-1",
                                                      "import:hermes:USER.md#user-2"}
    before = commit_count(gm.root)
    assert _report(gm, "hermes", folder)["counts"] == {"unchanged": 5}
    assert commit_count(gm.root) == before
    # A changed item is updated in place; an item a person replaced since is kept.
    memory = folder / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8").replace("uv for environments", "uv 0.5"),
                      encoding="utf-8")
    assert gm("runtime", "replace", "CI runs on GitHub Actions", "CI runs on Forgejo runners").exit_code == 0
    memory.write_text(memory.read_text(encoding="utf-8").replace("nightly only", "weekly"), encoding="utf-8")
    report = _report(gm, "hermes", folder)
    assert report["counts"] == {"updated": 1, "kept-edit": 1, "unchanged": 3}
    hot = (gm.root / "global/runtime/MEMORY.md").read_text(encoding="utf-8")
    assert "uv 0.5" in hot and "Forgejo runners" in hot and "weekly" not in hot


def test_hermes_bad_input_is_refused(gm: Cli, tmp_path: Path) -> None:
    copy = stage("hermes", tmp_path)
    result = gm("import", "hermes", str(copy / "malformed"))
    assert result.exit_code == 2
    assert "cannot import MEMORY.md:3: runtime memory text contains §" in result.output
    assert not (gm.root / "global/runtime/memories.json").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "holds neither MEMORY.md nor USER.md" in gm("import", "hermes", str(empty)).output


def test_a_dry_run_plans_the_same_ids_and_links_and_writes_nothing(gm: Cli, tmp_path: Path) -> None:
    project = stage("basic-memory", tmp_path) / "project"
    before = commit_count(gm.root)
    planned = _report(gm, "basic-memory", project, "--dry-run")
    assert commit_count(gm.root) == before and not (gm.root / "workspaces" / "project").exists()
    done = _report(gm, "basic-memory", project)

    def summary(report: dict[str, Any]) -> list[tuple[str, Any, str]]:
        return sorted((a["action"], a["id"], a["source"]) for a in report["actions"]
                      if a["action"] in ("added", "linked", "unlinked"))

    assert summary(planned) == summary(done)
    assert planned["counts"] == done["counts"]
