"""Every CLI verb has help text and appears in the README's command reference."""

from __future__ import annotations

from pathlib import Path

import click

from gitmem.cli import cli

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    for name, command in sorted(group.commands.items()):
        if command.hidden:
            continue
        found.append((f"{prefix}{name}", command))
        if isinstance(command, click.Group):
            found.extend(_commands(command, f"{prefix}{name} "))
    return found


def test_every_verb_has_help_text() -> None:
    for name, command in _commands(cli):
        assert (command.help or "").strip(), f"`gitmem {name}` has no help text"
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert (param.help or "").strip(), f"`gitmem {name} {param.opts[0]}` has no help text"


def test_every_verb_is_in_the_readme_reference() -> None:
    reference = README.split("## Command reference", 1)[1]
    for name, _ in _commands(cli):
        top = name.split()[0]
        assert f"`gitmem {top}" in reference, f"`gitmem {name}` is missing from the README"


def test_readme_starts_with_the_two_commands() -> None:
    block = README.split("```sh", 1)[1].split("```", 1)[0].strip().splitlines()
    assert len(block) == 2
    assert "gitmem init" in block[0]
    assert "pytest" in block[1]
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert block[1].replace("pip install -e", "pip install -q --upgrade pip && .venv/bin/pip install -q -e") in ci


def test_shipped_files_are_packaged_and_found() -> None:
    import tomllib

    from gitmem.resources import data_path

    top = Path(__file__).resolve().parent.parent
    config = tomllib.loads((top / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert set(shipped) == {"templates", "hooks", "SYSTEM.template.md"}
    for source in shipped:
        assert (top / source).exists(), source
    for name in ("SYSTEM.template.md", "templates/INDEX.md", "templates/decision.md", "hooks/pre-commit"):
        assert data_path(name).is_file(), name
