"""Project files that teams commit (`.mcp.json`, `.claude/settings.json`): with `gitmem` on PATH
and the default store they name no path of this machine; otherwise integrate says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import GIT_ENV

GITMEM = Path(sys.executable).with_name("gitmem")  # the console script of this install


def _integrate(project: Path, home: Path, path: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV, "HOME": str(home), "PATH": path, "GITMEM_SERVE": "off"}
    env.pop("GITMEM_ROOT", None)
    return subprocess.run([str(GITMEM), *extra, "integrate", "claude-code", "--project", str(project)],
                          capture_output=True, text=True, env=env, cwd=project)


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    if not GITMEM.is_file():
        pytest.fail(f"the gitmem console script is not installed at {GITMEM}")
    home, project = tmp_path / "person", tmp_path / "acme"
    home.mkdir()
    project.mkdir()
    env = {**os.environ, **GIT_ENV, "HOME": str(home)}
    env.pop("GITMEM_ROOT", None)
    subprocess.run([str(GITMEM), "init"], check=True, capture_output=True, env=env)
    return home, project


def _written(project: Path) -> tuple[dict, dict]:
    return (json.loads((project / ".mcp.json").read_text()),
            json.loads((project / ".claude" / "settings.json").read_text()))


def test_on_path_the_committed_files_name_no_machine_path(setup: tuple[Path, Path]) -> None:
    home, project = setup
    path = f"{GITMEM.parent}{os.pathsep}/usr/bin{os.pathsep}/bin"
    done = _integrate(project, home, path)
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    servers, settings = _written(project)
    assert servers["mcpServers"]["gitmem"]["command"] == "gitmem"
    assert servers["mcpServers"]["gitmem"]["args"] == ["mcp"]
    for text in ((project / ".mcp.json").read_text(), (project / ".claude" / "settings.json").read_text()):
        assert str(home) not in text and str(GITMEM.parent) not in text
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert command == "gitmem context --hook"
    payload = json.dumps({"hook_event_name": "SessionStart", "cwd": str(project), "session_id": "s"})
    env = {**os.environ, **GIT_ENV, "HOME": str(home), "PATH": path, "GITMEM_SERVE": "off"}
    env.pop("GITMEM_ROOT", None)
    answer = subprocess.run(command, shell=True, input=payload, capture_output=True, text=True,
                            cwd=project, env=env)  # as Claude Code runs it: a shell line, PATH lookup
    assert answer.returncode == 0, answer.stderr
    assert "## gitmem memory" in json.loads(answer.stdout)["hookSpecificOutput"]["additionalContext"]


def test_off_path_or_with_a_root_integrate_warns_about_machine_paths(setup: tuple[Path, Path]) -> None:
    home, project = setup
    off = _integrate(project, home, f"/usr/bin{os.pathsep}/bin")
    assert off.returncode == 0, off.stderr
    assert servers_command(project) == str(GITMEM)
    assert off.stderr.count("\n") == 1 and "gitmem: warning: " in off.stderr
    assert str(project / ".mcp.json") in off.stderr and str(GITMEM) in off.stderr
    rooted = _integrate(project, home, f"{GITMEM.parent}{os.pathsep}/usr/bin", "--root", str(home / ".gitmem"))
    assert rooted.returncode == 0, rooted.stderr
    assert servers_command(project) == "gitmem"
    assert "gitmem: warning: " in rooted.stderr and str(home / ".gitmem") in rooted.stderr


def servers_command(project: Path) -> str:
    return str(_written(project)[0]["mcpServers"]["gitmem"]["command"])
