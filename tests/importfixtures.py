"""Copies of the import fixtures (tests/fixtures/imports/<tool>/) placed where each tool keeps them."""

from __future__ import annotations

import shutil
from pathlib import Path

from gitmem.imports.claude_code import encoded_project

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "imports"


def stage(tool: str, tmp: Path) -> Path:
    """A copy of the tool's fixture folder under tmp (returned)."""
    target = tmp / f"fixture-{tool}"
    shutil.copytree(FIXTURES / tool, target)
    return target


def stage_claude(tmp: Path, home: Path) -> Path:
    """The Claude Code fixture: its home files in `home`, the auto-memory folder named after
    the project's path as Claude Code names it; returns the project folder."""
    copy = stage("claude-code", tmp)
    shutil.copytree(copy / "home", home, dirs_exist_ok=True)
    project = copy / "project"
    projects = home / ".claude" / "projects"
    (projects / "PROJECT").rename(projects / encoded_project(project))
    return project
