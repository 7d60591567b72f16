"""Module boundaries: dependencies point one way (cli -> store -> format / git / index)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "gitmem"

# The format layer: pure values and rules, no I/O dependencies on the rest of gitmem.
PURE = {"errors", "entry", "markdown", "layers", "freshness", "paths", "redaction"}
GIT_MODULES = {"git", "gitauth"}
INDEX_MODULES = {p.stem for p in PACKAGE.glob("index*.py")} | {"analysis", "search_rank"}
# Pure merge logic: three texts in, text out.
MERGE_MODULES = {"merge", "merge_json", "merge_prep"}


def _modules() -> dict[str, Path]:
    return {p.stem: p for p in PACKAGE.glob("*.py") if p.stem != "__main__"}


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """(gitmem modules imported, third-party top-level packages imported) anywhere in the file."""
    internal: set[str] = set()
    external: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level and node.level > 0:
                if node.module:
                    internal.add(node.module.split(".")[0])
                else:
                    internal.update(alias.name for alias in node.names)
            elif node.module and node.module.startswith("gitmem"):
                parts = node.module.split(".")
                internal.add(parts[1] if len(parts) > 1 else parts[0])
            elif node.module:
                external.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                external.add(alias.name.split(".")[0])
    return internal, external


def _module_level_imports(path: Path) -> set[str]:
    """Third-party packages imported at module level (what every importer pays for)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def test_only_the_git_layer_imports_pygit2() -> None:
    offenders = [name for name, path in _modules().items()
                 if "pygit2" in _imports(path)[1] and name not in GIT_MODULES]
    assert offenders == []


def test_only_the_index_imports_whoosh() -> None:
    offenders = [name for name, path in _modules().items()
                 if "whoosh" in _imports(path)[1] and name not in INDEX_MODULES]
    assert offenders == []


def test_pure_modules_depend_only_on_pure_modules() -> None:
    for name in PURE | MERGE_MODULES:
        path = _modules().get(name)
        if path is None:
            continue
        internal, _ = _imports(path)
        assert internal <= PURE | MERGE_MODULES, f"{name} imports {internal - PURE - MERGE_MODULES}"


def test_git_and_index_layers_do_not_reach_into_the_store() -> None:
    for name in GIT_MODULES | INDEX_MODULES:
        path = _modules().get(name)
        if path is None:
            continue
        internal, _ = _imports(path)
        allowed = PURE | GIT_MODULES | INDEX_MODULES | {"fsio"}
        assert internal <= allowed, f"{name} imports {internal - allowed}"


def test_nothing_imports_the_cli() -> None:
    for name, path in _modules().items():
        if name.startswith("cli"):
            continue
        internal, _ = _imports(path)
        assert not {m for m in internal if m.startswith("cli")}, f"{name} imports the CLI"


def test_cli_imports_heavy_libraries_lazily() -> None:
    for name, path in _modules().items():
        if name.startswith("cli"):
            heavy = _module_level_imports(path) & {"pygit2", "whoosh", "markdown_it", "frontmatter", "yaml", "sqlite3"}
            assert heavy == set(), f"{name} imports {heavy} at module level"


def test_help_does_not_load_pygit2_or_whoosh() -> None:
    code = ("import sys; from gitmem.cli import cli\n"
            "try:\n    cli(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('pygit2', 'whoosh', 'markdown_it') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"
