"""One reader of each: only git/binary.py (and git/gitnet.py for the network) start git, only
git/gitlog.py runs `git log`, only git/workrepo.py asks where a code repository is, only
git/repo.py opens a repository with pygit2 and only git/history.py walks the store's history
(docs/decisions/0028-one-repository-reader.md)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent.parent / "gitmem"

# Modules that start processes: git (binary; gitnet for fetch/push/clone, bounded in time and
# with the store's token), the configured model command, the detached capture job (gitmem itself).
STARTS_PROCESSES = {"git/binary.py", "git/gitnet.py", "models/run.py", "integrate/hooks.py"}
RUNS_GIT_LOG = {"git/gitlog.py"}
FINDS_CODE_REPOS = {"git/workrepo.py"}
OPENS_WITH_PYGIT2 = {"git/repo.py"}
WALKS_HISTORY = {"git/history.py"}
_PYGIT2_OPENERS = {"Repository", "discover_repository", "init_repository"}


def _strings(node: ast.List | ast.Tuple) -> list[str | None]:
    return [e.value if isinstance(e, ast.Constant) and isinstance(e.value, str) else None
            for e in node.elts]


def _git_subcommand(words: list[str | None]) -> str | None:
    """The git subcommand of an argument list (`-c key=value` options skipped)."""
    position = 0
    while position + 1 < len(words) and words[position] == "-c":
        position += 2
    return words[position] if position < len(words) else None


def findings(source: str) -> set[str]:
    """What one module's code does of the things only one module may do."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                if func.value.id == "os" and func.attr.startswith(("system", "spawn", "exec", "popen")):
                    found.add("starts processes")
                if func.value.id == "pygit2" and func.attr in _PYGIT2_OPENERS:
                    found.add("opens a repository with pygit2")
            if isinstance(func, ast.Attribute) and func.attr == "walk" and (
                    (isinstance(func.value, ast.Attribute) and func.value.attr == "_repo")
                    or (isinstance(func.value, ast.Name) and func.value.id == "repo")):
                found.add("walks history")
        if isinstance(node, ast.List | ast.Tuple):
            words = _strings(node)
            if _git_subcommand(words) == "log":
                found.add("runs git log")
            if "--show-toplevel" in words:
                found.add("finds a code repository")
        if isinstance(node, ast.Import) and any(a.name == "subprocess" for a in node.names) or \
                isinstance(node, ast.ImportFrom) and node.module == "subprocess":
            found.add("starts processes")
        if isinstance(node, ast.ImportFrom) and node.module == "pygit2" and \
                any(alias.name in _PYGIT2_OPENERS for alias in node.names):
            found.add("opens a repository with pygit2")
    return found


def _allowed(kind: str, module: str) -> bool:
    return module in {
        "starts processes": STARTS_PROCESSES, "runs git log": RUNS_GIT_LOG,
        "finds a code repository": FINDS_CODE_REPOS,
        "opens a repository with pygit2": OPENS_WITH_PYGIT2, "walks history": WALKS_HISTORY,
    }[kind]


def test_each_git_mechanism_lives_in_its_one_module() -> None:
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        for kind in sorted(findings(path.read_text(encoding="utf-8"))):
            if not _allowed(kind, module):
                wrong.append(f"{module} {kind}")
    assert wrong == []


def test_the_chosen_modules_do_what_they_are_chosen_for() -> None:
    """The rule names real modules: each still does its one thing (a rename cannot empty it)."""
    seen: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for kind in findings(path.read_text(encoding="utf-8")):
            seen.setdefault(kind, set()).add(path.relative_to(PACKAGE).as_posix())
    assert seen["starts processes"] == STARTS_PROCESSES
    assert seen["runs git log"] == RUNS_GIT_LOG
    assert seen["finds a code repository"] == FINDS_CODE_REPOS
    assert seen["opens a repository with pygit2"] == OPENS_WITH_PYGIT2
    assert seen["walks history"] == WALKS_HISTORY


def test_the_checker_sees_each_way_around_the_readers() -> None:
    samples = {
        'import subprocess\nsubprocess.run(["git", "merge-base", a, b])': "starts processes",
        "from subprocess import run": "starts processes",
        'os.system("git log")': "starts processes",
        'gitcli.run(repo, ["-c", "core.quotePath=false", "log", "--stdin"])': "runs git log",
        'run(path, ["rev-parse", "--show-toplevel"])': "finds a code repository",
        "pygit2.Repository(str(root))": "opens a repository with pygit2",
        "from pygit2 import discover_repository": "opens a repository with pygit2",
        "self._repo.walk(head, order)": "walks history",
    }
    for source, kind in samples.items():
        assert kind in findings(source), source
    assert findings('os.walk(root)\nrun(r, ["diff"])\nREAD_ONLY = {"log", "show"}') == set()
