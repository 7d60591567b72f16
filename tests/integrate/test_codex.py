"""`gitmem integrate codex` and `generic`: gitmem's own TOML table and AGENTS.md section, added,
kept, updated and removed without touching a byte of the person's."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from support import Cli

CONFIG = '# my settings\nmodel = "o3"  # fast enough\n\n[mcp_servers.docs]\ncommand = "docs-server"\nargs = ["--port", "0"]\n'
AGENTS = "# Rules\n\nRun the tests before you commit.\n"


@pytest.fixture
def codex_home() -> Path:
    folder = Path(os.environ["HOME"]) / ".codex"
    folder.mkdir()
    (folder / "config.toml").write_text(CONFIG)
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "acme-api"
    folder.mkdir()
    (folder / "AGENTS.md").write_text(AGENTS)
    return folder


def test_codex_gets_the_server_table_and_agents_md_its_section(gm: Cli, codex_home: Path, project: Path) -> None:
    done = gm("integrate", "codex", "--project", str(project))
    assert done.exit_code == 0, done.output
    text = (codex_home / "config.toml").read_text()
    assert text.startswith(CONFIG)
    parsed = tomllib.loads(text)
    assert parsed["model"] == "o3" and parsed["mcp_servers"]["docs"]["command"] == "docs-server"
    server = parsed["mcp_servers"]["gitmem"]
    assert server["args"][-1] == "mcp" and "--root" in server["args"]
    agents = (project / "AGENTS.md").read_text()
    assert agents.startswith(AGENTS) and "## Memory (gitmem)" in agents
    assert "Writing nothing is a correct outcome" in agents


def test_twice_changes_nothing_and_remove_restores_every_byte(gm: Cli, codex_home: Path, project: Path) -> None:
    gm("integrate", "codex", "--project", str(project))
    written = ((codex_home / "config.toml").read_bytes(), (project / "AGENTS.md").read_bytes())
    again = gm("integrate", "codex", "--project", str(project))
    assert again.stdout.startswith("nothing to change")
    assert ((codex_home / "config.toml").read_bytes(), (project / "AGENTS.md").read_bytes()) == written
    gm("integrate", "codex", "--project", str(project), "--remove")
    assert (codex_home / "config.toml").read_text() == CONFIG
    assert (project / "AGENTS.md").read_text() == AGENTS


@pytest.mark.parametrize("ending", ["", "\n\n"], ids=["no-final-newline", "blank-lines-at-end"])
def test_remove_restores_every_byte_whatever_the_files_end_with(gm: Cli, codex_home: Path, project: Path,
                                                                 ending: str) -> None:
    config, agents = CONFIG.rstrip("\n") + ending, AGENTS.rstrip("\n") + ending
    (codex_home / "config.toml").write_text(config)
    (project / "AGENTS.md").write_text(agents)
    assert gm("integrate", "codex", "--project", str(project)).exit_code == 0
    assert tomllib.loads((codex_home / "config.toml").read_text())["mcp_servers"]["gitmem"]
    assert gm("integrate", "codex", "--project", str(project), "--remove").exit_code == 0
    assert (codex_home / "config.toml").read_text() == config
    assert (project / "AGENTS.md").read_text() == agents


def test_an_edited_section_is_updated_in_place(gm: Cli, codex_home: Path, project: Path) -> None:
    gm("integrate", "codex", "--project", str(project))
    agents = project / "AGENTS.md"
    agents.write_text(agents.read_text().replace("## Memory (gitmem)", "## Memory (old)") + "\n## After\n")
    gm("integrate", "codex", "--project", str(project))
    text = agents.read_text()
    assert "## Memory (gitmem)" in text and "(old)" not in text and text.endswith("## After\n")


def test_a_table_gitmem_did_not_write_is_refused(gm: Cli, codex_home: Path, project: Path) -> None:
    theirs = CONFIG + '\n[mcp_servers.gitmem]\ncommand = "mine"\n'
    (codex_home / "config.toml").write_text(theirs)
    done = gm("integrate", "codex", "--project", str(project))
    assert done.exit_code == 2 and "did not write" in done.stderr
    assert (codex_home / "config.toml").read_text() == theirs
    assert (project / "AGENTS.md").read_text() == AGENTS


def test_invalid_toml_is_refused(gm: Cli, codex_home: Path, project: Path) -> None:
    (codex_home / "config.toml").write_text("model = \n")
    done = gm("integrate", "codex", "--project", str(project))
    assert done.exit_code == 2 and "is not valid TOML" in done.stderr
    assert (codex_home / "config.toml").read_text() == "model = \n"


def test_codex_home_and_a_missing_config_file(gm: Cli, tmp_path: Path, project: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    dry = gm("integrate", "codex", "--project", str(project), "--dry-run")
    assert f"would create {tmp_path / 'codex' / 'config.toml'}" in dry.stdout
    assert not (tmp_path / "codex").exists()
    gm("integrate", "codex", "--project", str(project))
    assert tomllib.loads((tmp_path / "codex" / "config.toml").read_text())["mcp_servers"]["gitmem"]
    gm("integrate", "codex", "--project", str(project), "--remove")
    assert not (tmp_path / "codex" / "config.toml").exists()


def test_generic_prints_a_usable_block(gm: Cli) -> None:
    data = gm.json("integrate", "generic")
    server = data["mcpServers"]["gitmem"]
    assert server["args"][-1] == "mcp" and "subagent" in data["instructions"]
    text = gm("integrate", "generic").stdout
    assert json.loads(text[: text.index("\n}\n") + 2]) == {"mcpServers": data["mcpServers"]}
