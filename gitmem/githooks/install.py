"""Git hooks for the store: install, uninstall and status.

The scripts shipped in `hooks/` are written into the store's hooks folder with the interpreter
that installed them baked in, so they work without gitmem on PATH. A hook that was there before
is kept as `<name>.gitmem-chained` and run first; uninstall puts it back.

Git runs a hook as `python -P -m gitmem.githooks <name> [args]` in the work tree (run.py).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gitmem.errors import InvalidInputError, StoreStateError
from gitmem.fsio import load_json_object, read_regular_file
from gitmem.git import binary as gitcli
from gitmem.githooks import HOOK_NAMES
from gitmem.githooks.driver import merge_driver_command

MARKER = "# gitmem-managed hook"
CHAINED_SUFFIX = ".gitmem-chained"
DRIVER_NAME = "gitmem entry-level merge"
DRIVER_KEYS = ("merge.gitmem.name", "merge.gitmem.driver")
STATE_FILE = "state/hooks.json"
_PYTHON_LINE = re.compile(r"^GITMEM_PYTHON=(.*)$", re.MULTILINE)


# -- install / uninstall / status -----------------------------------------------------------
@dataclass
class HookInfo:
    name: str
    state: str  # installed | missing | foreign | outdated
    chained: bool = False
    python: str | None = None


@dataclass
class HooksReport:
    root: str
    hooks_dir: str
    python: str
    hooks: list[HookInfo] = field(default_factory=list)
    driver: str | None = None
    driver_ok: bool = False
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def render_script(name: str, python: str) -> str:
    from gitmem.resources import read_text

    return read_text(f"hooks/{name}").replace("{{python}}", shlex.quote(python))


def is_gitmem_script(path: Path) -> bool:
    try:  # never opened when it is a FIFO or a folder: a hook script is a regular file
        head = read_regular_file(path)[:400].decode("utf-8", errors="replace")
    except OSError:
        return False
    return MARKER in head


def _script_python(path: Path) -> str | None:
    try:
        match = _PYTHON_LINE.search(read_regular_file(path).decode("utf-8", errors="replace"))
    except OSError:
        return None
    if not match:
        return None
    parts = shlex.split(match.group(1))
    return parts[0] if parts else None


def _current_script(target: Path, name: str, python: str) -> bool:
    """True when the installed script is what this version of gitmem would write."""
    try:
        return read_regular_file(target).decode("utf-8") == render_script(name, python)
    except (OSError, UnicodeDecodeError):
        return False


def _require_store(root: Path) -> None:
    if not (root / "memory.json").is_file() or not (root / ".git").exists():
        raise StoreStateError(f"no gitmem store at {root}: run `gitmem init` first")


def _hooks_dir(root: Path) -> Path:
    folder = gitcli.hooks_dir(root)
    resolved, base = folder.resolve(), root.resolve()
    if resolved != base and base not in resolved.parents:
        raise InvalidInputError(
            f"git looks for hooks in {folder} (core.hooksPath), outside the store; "
            "unset core.hooksPath for the store or point it inside it, then install again"
        )
    return folder


def _state(root: Path) -> dict[str, Any]:
    return load_json_object(root / STATE_FILE)


def status(root: Path, python: str | None = None) -> HooksReport:
    """What is installed: each hook, the chained hooks, the merge driver config."""
    _require_store(root)
    python = python or sys.executable
    folder = gitcli.hooks_dir(root)
    report = HooksReport(str(root), str(folder), python)
    for name in HOOK_NAMES:
        target = folder / name
        chained = (folder / (name + CHAINED_SUFFIX)).exists()
        if not target.exists():
            report.hooks.append(HookInfo(name, "missing", chained))
        elif not is_gitmem_script(target):
            report.hooks.append(HookInfo(name, "foreign", chained))
        else:
            baked = _script_python(target)
            fresh = (baked is not None and os.access(baked, os.X_OK) and os.access(target, os.X_OK)
                     and _current_script(target, name, baked))
            report.hooks.append(HookInfo(name, "installed" if fresh else "outdated", chained, baked))
    report.driver = gitcli.config_get(root, DRIVER_KEYS[1])
    report.driver_ok = bool(report.driver and "merge-driver" in report.driver
                            and f" -m gitmem --root {shlex.quote(str(root))} " in report.driver)
    return report


def install(root: Path, python: str | None = None) -> HooksReport:
    """Install (or refresh) every hook and the merge driver config; idempotent."""
    _require_store(root)
    python = python or sys.executable
    folder = _hooks_dir(root)
    plan = []
    for name in HOOK_NAMES:  # check everything before changing anything
        target, chained = folder / name, folder / (name + CHAINED_SUFFIX)
        foreign = (target.exists() or target.is_symlink()) and not is_gitmem_script(target)
        if foreign and (chained.exists() or chained.is_symlink()):
            raise InvalidInputError(
                f"both {target} and {chained} exist: move one of them away, then install again"
            )
        plan.append((name, target, chained, foreign))
    folder.mkdir(parents=True, exist_ok=True)
    notes = []
    for name, target, chained, foreign in plan:
        if foreign:
            os.replace(target, chained)
            notes.append(f"kept your {name} hook as {chained.name}; it runs first")
        tmp = target.with_name(f".{name}.gitmem-tmp")
        tmp.write_text(render_script(name, python), encoding="utf-8")
        tmp.chmod(0o755)
        os.replace(tmp, target)
    state = _state(root)
    previous = state.get("previous_config")
    driver = merge_driver_command(root, python)
    if not isinstance(previous, dict):
        previous = {key: gitcli.config_get(root, key) for key in DRIVER_KEYS}
    gitcli.config_set(root, DRIVER_KEYS[0], DRIVER_NAME)
    gitcli.config_set(root, DRIVER_KEYS[1], driver)
    from gitmem.fsio import write_json_atomic

    write_json_atomic(root / STATE_FILE, {"python": python, "previous_config": previous,
                                          "hooks": list(HOOK_NAMES)})
    report = status(root, python)
    report.notes = notes
    return report


# The hooks an install wrote before the install recorded its list (state/hooks.json "hooks").
FIRST_HOOKS = ("pre-commit", "post-commit", "post-merge", "post-checkout", "post-rewrite")


def add_new_hooks(root: Path) -> list[str]:
    """Write the hooks this gitmem has and the store's last install did not (commit-msg came
    later): an upgrade must not leave a store without a check it believes it has. A hook
    someone removed by hand, or a foreign one in its place, is left alone."""
    state = _state(root)
    if not state:
        return []  # gitmem never installed hooks here
    listed = state.get("hooks")
    known = set(listed) if isinstance(listed, list) else set(FIRST_HOOKS)
    new = [name for name in HOOK_NAMES if name not in known]
    if not new:
        return []
    recorded = state.get("python")
    python = recorded if isinstance(recorded, str) and recorded else sys.executable
    folder = _hooks_dir(root)
    added = []
    for name in new:
        target = folder / name
        if not (target.exists() or target.is_symlink()):
            tmp = target.with_name(f".{name}.gitmem-tmp")
            tmp.write_text(render_script(name, python), encoding="utf-8")
            tmp.chmod(0o755)
            os.replace(tmp, target)
            added.append(name)
    from gitmem.fsio import write_json_atomic

    write_json_atomic(root / STATE_FILE, {**state, "hooks": sorted(known | set(new))})
    return added


def uninstall(root: Path) -> HooksReport:
    """Remove gitmem's hooks, put chained hooks back, restore the merge config as it was."""
    _require_store(root)
    folder = gitcli.hooks_dir(root)
    notes = []
    for name in HOOK_NAMES:
        target, chained = folder / name, folder / (name + CHAINED_SUFFIX)
        if target.exists() and not is_gitmem_script(target):
            if chained.exists():
                notes.append(f"{name} is not gitmem's; left it and {chained.name} as they are")
            continue
        if target.exists():
            target.unlink()
        if chained.exists() or chained.is_symlink():
            os.replace(chained, target)
            notes.append(f"restored your {name} hook")
    state = _state(root)
    previous = state.get("previous_config")
    for key in DRIVER_KEYS:
        old = previous.get(key) if isinstance(previous, dict) else None
        if old is not None:
            gitcli.config_set(root, key, str(old))
        else:
            gitcli.config_unset(root, key)
    (root / STATE_FILE).unlink(missing_ok=True)
    report = status(root)
    report.notes = notes
    return report
