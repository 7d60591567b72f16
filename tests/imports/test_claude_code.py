"""`gitmem import claude-code`: user and project CLAUDE.md files, rules, @path imports (with a
cycle guard) and the auto-memory folder, from the documented layout (tests/fixtures/imports)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from importfixtures import stage_claude

from support import Cli, commit_count


def _report(gm: Cli, project: Path, *args: str) -> dict[str, Any]:
    report = gm.json("import", "claude-code", str(project), *args)
    assert isinstance(report, dict)
    return report


def _home() -> Path:
    return Path(os.environ["HOME"])


def test_user_project_local_rules_nested_and_auto_memory(gm: Cli, tmp_path: Path) -> None:
    project = stage_claude(tmp_path, _home())
    report = _report(gm, project)
    by_source = {a["source"].rsplit(":", 1)[0]: a for a in report["actions"] if a["id"]}
    # User level -> global; project level -> the project's workspace.
    assert by_source["~/.claude/CLAUDE.md"]["path"].startswith("global/")
    assert by_source["~/.claude/rules/python.md"]["path"].startswith("global/")
    for name in ("CLAUDE.md", "CLAUDE.local.md", ".claude/rules/testing.md", "services/api/CLAUDE.md",
                 "docs/conventions.md", "~/.claude/personal-notes.md"):
        assert by_source[name]["path"].startswith("workspaces/project/"), name
    memory = [a for a in report["actions"] if "/memory/" in a["source"]]
    assert {a["title"] for a in memory} == {"Memory index", "Debugging the scheduler", "User preferences"}
    # Auto-memory `type: feedback` is a lesson.
    assert next(a for a in memory if a["title"] == "Debugging the scheduler")["id"] == "project-lrn-0001"
    kiruna = next(a for a in report["actions"] if a["title"] == "My test station")
    assert "日本語のラベル" in (gm.root / kiruna["path"]).read_text(encoding="utf-8")


def test_imports_are_followed_once_and_a_missing_one_is_reported(gm: Cli, tmp_path: Path) -> None:
    project = stage_claude(tmp_path, _home())
    report = _report(gm, project)
    sources = [a["source"] for a in report["actions"] if a["id"]]
    # conventions.md imports CLAUDE.md back: read once, no loop.
    assert sum(s.startswith("CLAUDE.md:") for s in sources) == 3
    assert sum(s.startswith("docs/conventions.md:") for s in sources) == 1
    skipped = [a for a in report["actions"] if a["action"] == "skipped"]
    assert [(a["source"], a["title"]) for a in skipped] == [("CLAUDE.md:6", "@docs/removed.md: no such file")]
    # An @path inside a code fence is text, and the fenced `## Not a heading` is not an entry.
    assert "not-an-import" not in str(skipped)
    assert "Not a heading" not in {a["title"] for a in report["actions"]}


def test_import_hops_are_bounded(gm: Cli, tmp_path: Path) -> None:
    project = tmp_path / "chain"
    project.mkdir()
    (project / "CLAUDE.md").write_text("# Root\n\n## Start\nsee @a0.md\n", encoding="utf-8")
    for n in range(7):
        (project / f"a{n}.md").write_text(f"# Link {n}\n\n## Hop {n}\nnext @a{n + 1}.md\n", encoding="utf-8")
    (project / "a7.md").write_text("# End\n\n## Hop 7\nthe end\n", encoding="utf-8")
    report = _report(gm, project)
    titles = {a["title"] for a in report["actions"] if a["action"] == "added"}
    assert {"Start", "Hop 0", "Hop 4"} <= titles and "Hop 5" not in titles
    assert any("more than 5 import hops" in a["title"] for a in report["actions"])


def test_reimport_changes_nothing_and_a_changed_file_updates(gm: Cli, tmp_path: Path) -> None:
    project = stage_claude(tmp_path, _home())
    _report(gm, project)
    before = commit_count(gm.root)
    assert set(_report(gm, project)["counts"]) == {"unchanged", "skipped"}
    assert commit_count(gm.root) == before
    claude = project / "CLAUDE.md"
    claude.write_text(claude.read_text(encoding="utf-8").replace("make build", "make all"), encoding="utf-8")
    report = _report(gm, project)
    assert [a["title"] for a in report["actions"] if a["action"] == "updated"] == ["Build commands"]
    assert commit_count(gm.root) == before + 1


def test_a_malformed_file_names_itself_and_writes_nothing(gm: Cli, tmp_path: Path) -> None:
    project = stage_claude(tmp_path, _home())
    shutil.copy(project.parent / "malformed" / "CLAUDE.md", project / ".claude" / "rules" / "broken.md")
    before = commit_count(gm.root)
    result = gm("import", "claude-code", str(project))
    assert result.exit_code == 2
    assert result.output.strip() == ("gitmem: error: cannot import .claude/rules/broken.md:2: front "
                                     "matter is not valid YAML; nothing was written")
    assert commit_count(gm.root) == before
