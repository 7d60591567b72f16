"""The README and docs/ pages: every verb documented, every command example valid, every link resolves."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import click
import pytest

from gitmem.cli import cli
from gitmem.cli.main import every_command

TOP = Path(__file__).resolve().parent.parent
README = (TOP / "README.md").read_text(encoding="utf-8")
PAGES = [TOP / "README.md", *sorted((TOP / "docs").rglob("*.md"))]


def _name(path: Path) -> str:
    return str(path.relative_to(TOP))


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    commands = every_command() if group is cli else group.commands
    for name, command in sorted(commands.items()):
        if command.hidden:
            continue
        found.append((f"{prefix}{name}", command))
        if isinstance(command, click.Group):
            found.extend(_commands(command, f"{prefix}{name} "))
    return found


def _outside_fences(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line not inside a fenced code block."""
    found, fence = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fence = not fence
        elif not fence:
            found.append((number, line))
    return found


def _shell_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, logical line) of every ```sh block, backslash continuations joined."""
    found: list[tuple[int, str]] = []
    inside, pending, start = False, "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            inside = line.strip() == "```sh" and not inside
            continue
        if inside:
            start = start or number
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            found.append((start, pending + line))
            pending, start = "", 0
    return found


def _gitmem_calls(line: str) -> list[list[str]]:
    """The argument lists of every `gitmem` call on a shell line (env assignments and paths dropped)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    calls, current = [], []
    for word in [*lexer, ";"]:
        if word and set(word) <= set(";&|<>()"):
            calls.append(current)
            current = []
        else:
            current.append(word)
    found = []
    for words in calls:
        while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
            words = words[1:]
        if words and words[0] == "xargs":
            words = words[1:]
        if words and (words[0] == "gitmem" or words[0].endswith("/gitmem")):
            found.append(words[1:])
    return found


def _parse_problem(args: list[str]) -> str | None:
    """What click says about `gitmem ARGS` (None: it parses: verb, subcommand, options, arguments)."""
    try:
        ctx = cli.make_context("gitmem", list(args))
        command: click.Command = cli
        while isinstance(command, click.Group):
            rest = [*ctx._protected_args, *ctx.args]
            if not rest:
                return None
            name, sub, rest = command.resolve_command(ctx, rest)
            assert sub is not None and name is not None
            ctx = sub.make_context(name, rest, parent=ctx)
            command = sub
    except click.ClickException as error:
        return error.format_message()
    return None


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for _, line in _outside_fences(path.read_text(encoding="utf-8")):
        match = re.match(r"#{1,6} (.+)", line)
        if match:
            slug = _slug(match.group(1))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def test_every_verb_has_help_text() -> None:
    for name, command in _commands(cli):
        assert (command.help or "").strip(), f"`gitmem {name}` has no help text"
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert (param.help or "").strip(), f"`gitmem {name} {param.opts[0]}` has no help text"


def test_every_verb_is_in_the_command_reference() -> None:
    reference = (TOP / "docs" / "commands.md").read_text(encoding="utf-8")
    for name, _ in _commands(cli):
        assert f"`gitmem {name}" in reference or f"`gitmem {name.split()[0]} " in reference, \
            f"`gitmem {name}` is missing from docs/commands.md"
    assert "(docs/commands.md)" in README


def test_readme_starts_with_the_two_commands() -> None:
    block = README.split("```sh", 1)[1].split("```", 1)[0].strip().splitlines()
    assert len(block) == 2
    assert "gitmem init" in block[0]
    assert "pytest" in block[1]
    ci = (TOP / ".ci" / "run").read_text(encoding="utf-8")
    assert block[1].replace("pip install -e", "pip install -q --upgrade pip && .venv/bin/pip install -q -e") in ci


def test_readme_stays_a_short_read_that_links_every_docs_page() -> None:
    assert len(README.splitlines()) <= 220, "the reference belongs in docs/, one page per concern"
    for page in sorted((TOP / "docs").glob("*.md")):
        assert f"(docs/{page.name})" in README, f"README does not link docs/{page.name}"


def test_readme_says_why_each_dependency_is_there() -> None:
    config = tomllib.loads((TOP / "pyproject.toml").read_text(encoding="utf-8"))
    specs = config["project"]["dependencies"] + config["project"]["optional-dependencies"]["test"]
    names = [re.split(r"[<>=\[ ]", spec)[0] for spec in specs]
    section = README.split("## Dependencies", 1)[1].split("\n## ", 1)[0]
    for name in names:
        assert name in section, f"README's Dependencies section does not say why {name} is there"
    for name in ("detect-secrets", "mcp"):
        assert f"{name} costs" in section or f"(`{name}`" in section, f"why {name} is worth its cost"


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_command_example_parses(page: Path) -> None:
    """Each `gitmem ...` line of a ```sh block names real verbs and options with their arguments."""
    wrong = []
    for number, line in _shell_blocks(page.read_text(encoding="utf-8")):
        for args in _gitmem_calls(line):
            problem = _parse_problem(args)
            if problem:
                wrong.append(f"{_name(page)}:{number}: gitmem {shlex.join(args)}: {problem}")
    assert wrong == []


def test_the_example_checker_catches_a_wrong_example() -> None:
    assert _gitmem_calls("A=1 .venv/bin/gitmem -v search 'x y' | head  # note") == [["-v", "search", "x y"]]
    assert _parse_problem(["search", "x", "--limit", "3"]) is None
    assert _parse_problem(["runtime", "add", "x", "--target", "user"]) is None
    assert _parse_problem(["serch", "x"]) is not None
    assert _parse_problem(["search", "x", "--no-such-flag"]) is not None
    assert _parse_problem(["runtime", "ad", "x"]) is not None
    assert _parse_problem(["show"]) is not None  # a required argument missing


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    wrong = []
    for number, line in _outside_fences(page.read_text(encoding="utf-8")):
        line = re.sub(r"`[^`]*`", "", line)
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path_part, _, anchor = target.partition("#")
            dest = (page.parent / path_part).resolve() if path_part else page
            if not dest.exists():
                wrong.append(f"{_name(page)}:{number}: {target}: no such file")
            elif anchor and anchor not in _anchors(dest):
                wrong.append(f"{_name(page)}:{number}: {target}: no heading with that anchor")
    assert wrong == []


def test_the_anchor_rule_is_githubs() -> None:
    assert _slug("Where a fact came from, and what it said before") == "where-a-fact-came-from-and-what-it-said-before"
    assert _slug("Facts about code: suspect marks") == "facts-about-code-suspect-marks"
    assert _slug("The store root defaults to ~/.gitmem") == "the-store-root-defaults-to-gitmem"


def test_the_performance_page_is_what_the_bench_results_give() -> None:
    done = subprocess.run([sys.executable, str(TOP / "bench" / "report.py"), "--check"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_figure_on_the_performance_page_names_its_command_commit_and_date() -> None:
    page = (TOP / "docs" / "performance.md").read_text(encoding="utf-8")
    sections = [part for part in page.split("\n## ")[1:] if not part.startswith(("History", ))]
    assert len(sections) >= 15
    for part in sections:
        title, _, text = part.partition("\n")
        if "No run kept yet" in text:
            continue
        assert re.search(r"^Command: `\.venv/bin/python bench/bench_\w+\.py[^`]*` — .*commit `[0-9a-f]{12}"
                         r"(\+changes)?`.*\b\d{4}-\d\d-\d\d", text, re.M), title


def test_shipped_files_are_packaged_and_found() -> None:
    from gitmem.resources import data_path

    config = tomllib.loads((TOP / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert set(shipped) == {"templates", "hooks", "SYSTEM.template.md"}
    for source in shipped:
        assert (TOP / source).exists(), source
    for name in ("SYSTEM.template.md", "templates/INDEX.md", "templates/decision.md", "hooks/pre-commit"):
        assert data_path(name).is_file(), name
