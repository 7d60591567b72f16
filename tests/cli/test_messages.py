"""Messages and exit codes: one line, the right code, JSON errors under --json, ways out that exist,
a bad --root refused, the store found from the current folder, text from stdin."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from gitmem.cli import cli
from gitmem.cli.main import every_command
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
    assert json.loads(result.stdout) == {"error": "gitmem: error: no entry with Id global-sem-0042", "code": 1}
    assert result.stderr == "gitmem: error: no entry with Id global-sem-0042\n"
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
    return set(every_command())


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


def _problem(command: str) -> str | None:
    """What is wrong with `gitmem COMMAND` as written in a message (None: it would run)."""
    ctx = click.Context(cli)
    globals_ = {opt for param in cli.params for opt in param.opts} | {"--help"}
    words = command.split()
    while words and (words[0] in globals_ or words[0].isupper() or words[0] in ("X", "...")
                     or words[0].startswith("[") or words[0].endswith("]")):
        words = words[1:]  # --root PATH, [--workspace K], COMMAND --help, `gitmem ... mcp`
    if not words or words[0] in {"hook", "merge-driver"}:  # commands git itself calls
        return None
    found = cli.get_command(ctx, words[0])
    if found is None:
        return f"no verb {words[0]!r}"
    rest = words[1:]
    if isinstance(found, click.Group) and rest and rest[0][:1].islower():
        for name in rest[0].replace("\\", "").split("|"):
            if found.get_command(ctx, name) is None:
                return f"no {words[0]} {name!r}"
        found, rest = found.get_command(ctx, rest[0].replace("\\", "").split("|")[0]), rest[1:]
    assert found is not None
    options = {o for p in found.params for o in (*p.opts, *p.secondary_opts)} | globals_ | {"--help"}
    flags = [f for word in rest for f in re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", word)]
    unknown = [flag for flag in flags if flag not in options]
    return f"{words[0]} has no option {unknown[0]}" if unknown else None


def _strings(path: Path) -> list[tuple[int, str]]:
    """Every string literal of a module; an f-string with X where a value goes."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parts_of_f: set[int] = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts_of_f.update(id(v) for v in node.values)
            found.append((node.lineno, "".join(str(v.value) if isinstance(v, ast.Constant) else "X"
                                               for v in node.values)))
    found += [(node.lineno, node.value) for node in ast.walk(tree)
              if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in parts_of_f]
    return found


def test_every_command_a_message_or_doc_names_has_those_subcommands_and_flags() -> None:
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, text in _strings(path):
            # `gitmem ...` in backticks, and a string that starts with a command (CONFLICT.md lines)
            for match in re.finditer(r"`gitmem ([^`]*)`|^\s*gitmem ([a-z][a-z-]*(?: \S+)*)", text, re.M):
                command = match.group(1) or match.group(2)
                if match.group(2) and cli.get_command(click.Context(cli), command.split()[0]) is None:
                    continue  # prose that starts with the word gitmem
                problem = _problem(command)
                if problem:
                    wrong.append(f"{path.relative_to(PACKAGE)}:{line}: `gitmem {command}`: {problem}")
    top = PACKAGE.parent
    for path in [top / "README.md", top / "SYSTEM.template.md", *sorted((top / "docs").glob("*.md"))]:
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in re.finditer(r"`gitmem ([^`]*)`", text):
                problem = _problem(match.group(1))
                if problem:
                    wrong.append(f"{path.name}:{number}: `gitmem {match.group(1)}`: {problem}")
    assert wrong == []


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


def test_an_output_that_fails_is_one_line_and_no_bug(gm: Cli) -> None:
    """A reader that closes the pipe early ends gitmem quietly (141, as a shell reports SIGPIPE);
    a full disk under stdout is one line and exit 3, not an internal error or a traceback,
    --json or not."""
    for n in range(60):
        assert gm("remember", f"Fact number {n} about the staging cluster", "--layer", "semantic").exit_code == 0
    env = {**os.environ, "GITMEM_SERVE": "off"}
    piped = subprocess.run(f"{sys.executable} -m gitmem --root {gm.root} export | head -c 100 >/dev/null;"
                           " echo ${PIPESTATUS[0]}", shell=True, executable="/bin/bash",
                           capture_output=True, text=True, env=env)
    assert piped.stdout.strip() == "141" and "Traceback" not in piped.stderr and piped.stderr == ""
    if Path("/dev/full").exists():
        for args in (["export"], ["list", "--json"]):
            with open("/dev/full", "w") as full:
                done = subprocess.run([sys.executable, "-m", "gitmem", "--root", str(gm.root), *args],
                                      stdout=full, stderr=subprocess.PIPE, text=True, env=env)
            assert done.returncode == 3 and "No space left on device" in done.stderr, done.stderr
            assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
