"""The package layout states the architecture: one folder per concern, imports pointing one way.

Rules (docs/decisions/0004-package-layout.md, whose folder table must say the same as LAYERS and
ALLOWED here: a test compares them):
- the top level holds only the package face and ground modules;
- the folders stand in a layer order (LAYERS, bottom first); a folder may import only folders below
  it, and of those only the ones listed for it in ALLOWED (ground modules are open to all);
- only git/ imports pygit2, only search/ imports whoosh, only cli/ imports click, nothing imports cli/;
- no import circle between modules, nor between folders (imports under `if TYPE_CHECKING:` count);
- no module past the line ceiling;
- `gitmem --help` loads neither pygit2 nor whoosh nor markdown-it nor detect-secrets;
- only caller.py reads the process's environment, working folder or time zone setting
  (docs/decisions/0027-calls-with-explicit-caller.md): the warm server runs calls of many
  callers at once, and each call's are passed to it.
"""

from __future__ import annotations

import ast
import functools
import os
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "gitmem"
MAX_LINES = 410  # "about 400": a module past it is split by concern

# Modules at the top: the package face and the ground everything stands on.
TOP_LEVEL = {"__init__", "__main__", "errors", "fsio", "stamps", "eventlog", "redaction", "resources",
             "caller"}
GROUND = TOP_LEVEL - {"__init__", "__main__"}

# The folders from the bottom up: imports point down this list, never up or sideways-up.
LAYERS: tuple[str, ...] = (
    "observe", "format", "git", "secrets", "notes", "merge", "search", "store", "runtime", "documents",
    "githooks", "sync", "spaces", "provenance", "models", "capture", "verbs", "consolidate",
    "history", "imports", "serve", "integrate", "mcp", "web", "cli",
)

# folder -> the folders its modules may import (besides ground modules and itself).
# observe/ (metrics, the activity feed, the one recording function) imports ground modules only,
# so the store's write transaction can record every write without a circle.
ALLOWED: dict[str, set[str]] = {
    "observe": set(),
    "format": set(),
    "notes": {"format"},
    "merge": {"format"},
    "git": set(),
    "search": {"format"},
    "secrets": set(),
    "store": {"format", "git", "search", "observe", "secrets"},
    "runtime": {"store", "format", "search", "observe", "secrets"},
    "documents": {"store", "format", "search", "observe", "secrets"},
    "githooks": {"store", "merge", "git", "format", "observe", "runtime", "secrets"},
    "sync": {"store", "merge", "git", "githooks", "format", "observe", "runtime", "documents", "secrets"},
    "spaces": {"store", "sync", "format", "notes", "secrets", "search"},
    "provenance": {"store", "git", "search", "format", "secrets"},
    "verbs": {"store", "sync", "githooks", "format", "capture", "observe", "runtime", "documents",
              "secrets", "spaces", "provenance"},
    "models": {"observe"},
    "capture": {"store", "format", "models", "observe", "secrets"},
    "consolidate": {"store", "verbs", "format", "capture", "models", "observe", "secrets", "runtime"},
    "history": {"store", "verbs", "format", "git", "observe", "secrets"},
    # imports/: other tools' memory read in (`gitmem import`), and gitmem's own export.
    "imports": {"store", "verbs", "format", "runtime", "documents", "secrets", "spaces", "notes", "merge"},
    # serve/: the warm server, its thin client and its schedule (the client imports wire only).
    "serve": {"store", "sync", "history", "consolidate", "capture", "models", "observe", "imports"},
    "integrate": {"verbs", "store", "capture", "observe", "imports"},
    "mcp": {"verbs", "store", "sync", "format", "capture", "history", "runtime", "documents",
            "spaces", "secrets", "consolidate", "provenance"},
    # web/: the local page, a thin adapter over the same library functions as the CLI.
    "web": {"verbs", "store", "sync", "format", "runtime", "documents", "provenance", "spaces",
            "secrets", "models", "capture", "consolidate"},
    "cli": {"verbs", "store", "sync", "githooks", "format", "observe", "models", "capture",
            "consolidate", "history", "runtime", "documents", "spaces", "provenance", "mcp",
            "integrate", "serve", "secrets", "web", "imports"},
}
# Imports against the layer order that exist today, each with the change that removes it (none:
# the server's status read, once verbs -> serve, now lives in store/serverstate.py).
KNOWN_EXCEPTIONS: dict[tuple[str, str], str] = {}
# Ground modules: what each may import (nothing else of gitmem).
GROUND_ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "redaction": {"caller"},
    "resources": set(),
    "fsio": {"errors"},
    "stamps": set(),
    "eventlog": {"redaction", "caller"},
    "caller": set(),
}


def _modules() -> dict[str, Path]:
    """Dotted name below gitmem (e.g. 'store.catalog', 'errors') -> file."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        if "_data" in path.parts:
            continue
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        found[".".join(parts)] = path
    return found


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module a `gitmem.<name>` import refers to (a package means its __init__)."""
    if name in modules:
        return name
    if f"{name}.__init__" in modules:
        return f"{name}.__init__"
    return None


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once per test process (every rule here walks them all)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _imports(module: str, path: Path, modules: dict[str, Path]) -> tuple[set[str], set[str]]:
    """(gitmem modules imported, third-party top-level packages imported) anywhere in the file
    (found once per test process: every rule here asks for every module's)."""
    key = (module, path)  # `modules` is always the package's own map (_modules())
    if key not in _IMPORTS:
        _IMPORTS[key] = _find_imports(module, path, modules)
    internal, external = _IMPORTS[key]
    return set(internal), set(external)


_IMPORTS: dict[tuple[str, Path], tuple[set[str], set[str]]] = {}


def _find_imports(module: str, path: Path, modules: dict[str, Path]) -> tuple[set[str], set[str]]:
    internal: set[str] = set()
    external: set[str] = set()
    package = module.rsplit(".", 1)[0] if "." in module else ""
    for node in ast.walk(_tree(path)):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if package else []
                stem = ".".join([*base, node.module] if node.module else base)
                names = [f"{stem}.{a.name}" if stem else a.name for a in node.names] + [stem]
            elif node.module and (node.module == "gitmem" or node.module.startswith("gitmem.")):
                stem = node.module.removeprefix("gitmem").lstrip(".")
                names = [f"{stem}.{a.name}" if stem else a.name for a in node.names] + [stem]
            elif node.module:
                external.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("gitmem."):
                    names.append(alias.name.removeprefix("gitmem."))
                else:
                    external.add(alias.name.split(".")[0])
        for name in names:
            target = _resolve(name, modules) if name else None
            if target is not None and target != module:
                internal.add(target)
    internal.discard("__init__")  # `from gitmem.x import y` names the package face only in passing
    return internal, external


def _module_level_imports(path: Path) -> set[str]:
    """Third-party packages imported at module level (what every importer pays for)."""
    found: set[str] = set()
    for node in _tree(path).body:
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def _folder(module: str) -> str:
    return module.split(".")[0] if "." in module else ""


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules)[0] for name, path in modules.items()}


def test_top_level_holds_only_the_package_face_and_ground_modules() -> None:
    top = {name for name in _modules() if "." not in name}
    assert top <= TOP_LEVEL, f"modules at the top that belong in a folder: {sorted(top - TOP_LEVEL)}"
    assert len(top) <= 9


def test_every_folder_has_a_rule() -> None:
    folders = {_folder(name) for name in _modules()} - {""}
    assert folders <= set(ALLOWED), f"folders without import rules: {sorted(folders - set(ALLOWED))}"


def test_folders_import_only_what_their_rule_allows() -> None:
    offenders = []
    for module, targets in _graph().items():
        folder = _folder(module)
        for target in targets:
            other = _folder(target)
            if folder == "":
                allowed = GROUND_ALLOWED.get(module)
                if allowed is not None and target not in allowed:
                    offenders.append(f"{module} -> {target}")
                continue
            if other in ("", folder) and (other == folder or target in GROUND):
                continue
            if other not in ALLOWED[folder] and (folder, other) not in KNOWN_EXCEPTIONS:
                offenders.append(f"{module} -> {target}")
    assert offenders == []


def _folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Folder -> the other folders its modules import (ground modules left out)."""
    folders: dict[str, set[str]] = {}
    for module, targets in graph.items():
        folder = _folder(module)
        if folder:
            folders.setdefault(folder, set()).update(
                other for t in targets if (other := _folder(t)) and other != folder)
    return folders


def test_the_layer_order_names_every_folder_once() -> None:
    assert len(set(LAYERS)) == len(LAYERS)
    assert set(LAYERS) == set(ALLOWED)


def test_every_rule_points_down_the_layer_order() -> None:
    upwards = [f"{folder} -> {other}" for folder, others in ALLOWED.items() for other in others
               if LAYERS.index(other) >= LAYERS.index(folder)]
    assert upwards == []


def test_folder_imports_point_down_the_layer_order() -> None:
    upwards = sorted(f"{folder} -> {other}" for folder, others in _folder_graph(_graph()).items()
                     for other in others if LAYERS.index(other) > LAYERS.index(folder)
                     and (folder, other) not in KNOWN_EXCEPTIONS)
    assert upwards == []


def test_known_exceptions_still_exist_and_go_against_the_order() -> None:
    """An exception that is gone (or that the order allows) is taken out of the list."""
    folders = _folder_graph(_graph())
    for folder, other in KNOWN_EXCEPTIONS:
        assert other in folders.get(folder, set()), f"{folder} -> {other} no longer exists"
        assert LAYERS.index(other) > LAYERS.index(folder)


def test_no_import_circles_between_folders() -> None:
    folders = _folder_graph(_graph())
    for folder, other in KNOWN_EXCEPTIONS:
        folders[folder].discard(other)
    assert _find_cycles(folders) == []


def _find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every back edge of a depth-first walk, as the circle it closes."""
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return cycles


def test_no_import_circles() -> None:
    assert _find_cycles(_graph()) == []


def test_modules_stay_small() -> None:
    big = {name: n for name, path in _modules().items()
           if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert big == {}


def test_only_the_git_layer_imports_pygit2() -> None:
    modules = _modules()
    offenders = [name for name, path in modules.items()
                 if "pygit2" in _imports(name, path, modules)[1] and _folder(name) != "git"]
    assert offenders == []


def test_only_the_search_layer_imports_whoosh() -> None:
    modules = _modules()
    offenders = [name for name, path in modules.items()
                 if "whoosh" in _imports(name, path, modules)[1] and _folder(name) != "search"]
    assert offenders == []


def test_only_the_cli_imports_click_and_nothing_imports_the_cli() -> None:
    modules = _modules()
    for name, path in modules.items():
        internal, external = _imports(name, path, modules)
        if _folder(name) != "cli" and name != "__main__":
            assert "click" not in external, f"{name} imports click"
            assert not {m for m in internal if _folder(m) == "cli"}, f"{name} imports the CLI"


def test_only_the_mcp_wing_imports_the_mcp_sdk() -> None:
    modules = _modules()
    offenders = [name for name, path in modules.items()
                 if {"mcp", "mcp_types", "pydantic"} & _imports(name, path, modules)[1]
                 and _folder(name) != "mcp"]
    assert offenders == []
    # ... and only `gitmem mcp` reaches the server: every other verb runs without the SDK.
    servers = [name for name, path in modules.items()
               if any(_folder(t) == "mcp" for t in _imports(name, path, modules)[0])
               and _folder(name) != "mcp" and name != "cli.mcp"]
    assert servers == []


def test_cli_imports_heavy_libraries_lazily() -> None:
    for name, path in _modules().items():
        if _folder(name) == "cli":
            heavy = _module_level_imports(path) & {"pygit2", "whoosh", "markdown_it", "frontmatter", "yaml", "sqlite3"}
            assert heavy == set(), f"{name} imports {heavy} at module level"


def test_help_does_not_load_pygit2_or_whoosh() -> None:
    code = ("import sys; from gitmem.cli import cli\n"
            "try:\n    cli(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('pygit2', 'whoosh', 'markdown_it', 'detect_secrets', 'mcp', 'pydantic')"
            " if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_a_search_loads_neither_the_note_readers_nor_the_model_ladder(tmp_path: Path) -> None:
    """They are for folder spaces and reranking: a store with neither does not pay their start-up
    (about a tenth of a search's imports)."""
    root = tmp_path / "store"
    code = ("import sys; from gitmem.cli import cli\n"
            f"for argv in (['init'], ['remember', 'Deploys go out at noon', '--layer', 'semantic'],"
            " ['search', 'deploys'], ['context']):\n"
            f"    try:\n        cli(['--root', {str(root)!r}, *argv])\n    except SystemExit:\n        pass\n"
            "print(sorted(m for m in ('gitmem.notes.model', 'gitmem.models.ladder',"
            " 'gitmem.spaces.projection') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "GITMEM_SERVE": "off"})
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stderr


def _decision_table() -> list[tuple[str, set[str]]]:
    """(folder, may import) of each row of decision 0004's folder table, in its order."""
    text = (PACKAGE.parent / "docs/decisions/0004-package-layout.md").read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`") and cells[0].endswith("/`"):
            grants = {g.strip() for g in cells[2].split(",") if g.strip() not in ("", "—")}
            rows.append((cells[0].strip("`/"), grants))
    return rows


def test_the_decision_table_states_the_same_rules() -> None:
    table = _decision_table()
    assert [folder for folder, _ in table] == list(LAYERS), "rows are the layer order, bottom first"
    assert dict(table) == ALLOWED


def test_the_folder_rules_catch_an_upward_import() -> None:
    """The folder checks are not vacuous: store importing verbs closes a folder circle."""
    graph = {"store.a": {"verbs.b"}, "verbs.b": {"store.a"}}
    folders = _folder_graph(graph)
    assert folders == {"store": {"verbs"}, "verbs": {"store"}}
    assert _find_cycles(folders) == [["store", "verbs", "store"]]
    assert LAYERS.index("verbs") > LAYERS.index("store")


def test_the_rules_catch_a_circle(tmp_path: Path) -> None:
    """The cycle finder is not vacuous: two modules importing each other are reported."""
    (tmp_path / "a.py").write_text("from gitmem.b import x\n")
    (tmp_path / "b.py").write_text("from gitmem.a import y\n")
    modules = {"a": tmp_path / "a.py", "b": tmp_path / "b.py"}
    assert _imports("a", modules["a"], modules)[0] == {"b"}
    graph = {name: _imports(name, path, modules)[0] for name, path in modules.items()}
    assert _find_cycles(graph) == [["a", "b", "a"]]


def test_public_api_names_resolve() -> None:
    import gitmem

    for name in gitmem.__all__:
        value = getattr(gitmem, name)
        assert value is not None and not isinstance(value, type(gitmem)), name


def test_public_api_lists_every_lazy_name() -> None:
    import gitmem

    assert set(gitmem.__all__) == {"GitmemError", "__version__", *gitmem._LAZY}


# Reads of the process's own surroundings (attribute chains, as written in the source).
PROCESS_STATE = {"os.environ", "os.getenv", "os.putenv", "os.unsetenv", "os.getcwd", "os.getcwdb",
                 "os.chdir", "Path.cwd", "pathlib.Path.cwd", "time.tzset", "os.environb"}
# Not run inside gitmem's process: git runs the credential helper as a file of its own.
OWN_PROCESS = {"git.credhelper"}


def _process_state_reads(path: Path) -> list[str]:
    """`module:line name` of every use of PROCESS_STATE in a file."""
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name | ast.Attribute):
            name = f"{ast.unparse(node.value)}.{node.attr}"
            if name in PROCESS_STATE:
                found.append(f"{path.name}:{node.lineno} {name}")
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "pathlib", "time"):
            found += [f"{path.name}:{node.lineno} {node.module}.{a.name}" for a in node.names
                      if f"{node.module}.{a.name}" in PROCESS_STATE]
    return found


def test_only_the_caller_module_reads_the_process_environment_and_folder() -> None:
    offenders = [read for name, path in _modules().items() if name not in {"caller", *OWN_PROCESS}
                 for read in _process_state_reads(path)]
    assert offenders == []


def test_the_process_state_rule_catches_each_kind_of_read(tmp_path: Path) -> None:
    """The rule is not vacuous: each way of reading the process's state is reported."""
    probe = tmp_path / "probe.py"
    probe.write_text("import os, time\nfrom pathlib import Path\nfrom os import environ\n"
                     "a = os.environ.get('HOME')\nb = os.getcwd()\nc = Path.cwd()\n"
                     "os.chdir('/')\ntime.tzset()\nd = os.getenv('X')\n", encoding="utf-8")
    found = [read.split(" ")[1] for read in _process_state_reads(probe)]
    assert sorted(found) == sorted(["os.environ", "os.environ", "os.getcwd", "Path.cwd", "os.chdir",
                                    "time.tzset", "os.getenv"])
