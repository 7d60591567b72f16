"""Messages and exit codes: one line, the right code, JSON errors under --json, ways out that exist,
a bad --root refused, the store found from the current folder, text from stdin."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitmem.cli import cli
from support import Cli, run_gitmem

PACKAGE = Path(__file__).resolve().parents[2] / "gitmem"


def test_an_internal_error_exits_4_in_one_line(gm: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    import gitmem.verbs.reads as reads

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("something gitmem did not expect")

    monkeypatch.setattr(reads, "list_entries", broken)
    result = gm("list")
    assert result.exit_code == 4
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("gitmem: internal error: RuntimeError: something gitmem did not expect")
    as_json = gm("list", "--json")
    assert as_json.exit_code == 4 and json.loads(as_json.stdout)["code"] == 4


def test_errors_under_json_are_a_json_object_on_stdout_too(gm: Cli) -> None:
    result = gm("show", "global-sem-0042", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {"error": "gitmem: error: no entry with id global-sem-0042", "code": 1}
    assert result.stderr == "gitmem: error: no entry with id global-sem-0042\n"
    usage = gm("search", "--json")
    assert usage.exit_code == 2 and json.loads(usage.stdout)["code"] == 2
    plain = gm("show", "global-sem-0042")
    assert plain.stdout == ""


def test_a_root_that_cannot_be_a_store_is_a_one_line_exit_2(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    runner = CliRunner()
    for args, env, expected in (
        (["--root", str(afile), "status"], {}, f"--root {afile} is a file, not a folder"),
        (["--root", str(afile / "sub"), "init"], {}, f"--root {afile / 'sub'} lies under a file ({afile})"),
        (["list"], {"GITMEM_ROOT": str(afile)}, f"GITMEM_ROOT {afile} is a file, not a folder"),
    ):
        result = runner.invoke(cli, args, env=env)
        assert result.exit_code == 2, result.output
        assert result.stderr == f"gitmem: error: {expected}\n"


def test_check_reports_an_invalid_memory_json(gm: Cli) -> None:
    (gm.root / "memory.json").write_text("{broken")
    result = gm("check")
    assert result.exit_code == 2
    assert result.stdout.startswith("memory.json:1: memory.json is not valid JSON")
    status = gm("status")
    assert status.exit_code == 0 and "attention: memory.json:1: memory.json is not valid JSON" in status.stdout


def _registered() -> set[str]:
    return set(cli.commands)


def test_every_way_out_a_message_names_is_a_real_verb() -> None:
    named: dict[str, str] = {}
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        # `gitmem {verb}` names the verb that is running; any other variable could name anything.
        assert "`gitmem {" not in text.replace("`gitmem {verb}`", ""), f"{path}: a verb named by a variable"
        for verb in re.findall(r"`gitmem (?:--root \S+ )?([a-z][a-z-]*)", text):
            named.setdefault(verb, str(path.relative_to(PACKAGE)))
    hidden = {"hook", "merge-driver"}  # commands git itself calls
    missing = {verb: where for verb, where in named.items() if verb not in _registered() | hidden}
    assert missing == {}


@pytest.mark.parametrize(("layer", "way_out"), [("junk", "edited by hand"), ("state", "`gitmem state"),
                                                ("working", "`gitmem working`")])
def test_remember_into_a_single_file_layer_names_the_real_way(gm: Cli, layer: str, way_out: str) -> None:
    result = gm("remember", "x", "--layer", layer, workspace="alpha")
    assert result.exit_code == 2 and way_out in result.stderr


def test_the_store_is_found_from_the_folder_you_stand_in(gm: Cli, tmp_path: Path) -> None:
    inside = gm.root / "global"
    env = {k: v for k, v in os.environ.items() if k != "GITMEM_ROOT"}
    found = subprocess.run([sys.executable, "-m", "gitmem", "status", "--json"], cwd=inside, env=env,
                           capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["root"] == str(gm.root)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    missing = subprocess.run([sys.executable, "-m", "gitmem", "status"], cwd=elsewhere, env=env,
                             capture_output=True, text=True)
    assert missing.returncode == 2
    assert missing.stderr == (f"gitmem: error: no gitmem store found: looked in {elsewhere} and the folders "
                              f"above it, then {Path.home() / '.gitmem'}; create one with `gitmem init` "
                              "(or name one with --root or GITMEM_ROOT)\n")


def test_a_dash_reads_the_text_from_stdin(gm: Cli) -> None:
    text = "A long note\n\nwith several lines, piped in"
    done = run_gitmem("--root", str(gm.root), "remember", "-", "--layer", "semantic", input_text=text)
    assert done.returncode == 0 and done.stdout.strip() == "global-sem-0001", done.stderr
    assert gm.json("show", "global-sem-0001")["body"] == text  # type: ignore[index]
    state = run_gitmem("--root", str(gm.root), "--workspace", "alpha", "state", "Deploy", "-",
                       input_text="step 3 of 5")
    assert state.returncode == 0, state.stderr
    assert "step 3 of 5" in (gm.root / "workspaces" / "alpha" / "state.md").read_text()
