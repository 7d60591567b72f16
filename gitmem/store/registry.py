"""memory.json (committed, shared settings and workspaces) and machine-local associations."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmem.errors import StoreStateError
from gitmem.fsio import load_json_object, read_regular_file, write_json_atomic

SCHEMA_VERSION = 1
DEFAULT_SETTINGS: dict[str, Any] = {
    "freshness": {"stable": 365, "normal": 90, "volatile": 3},
    "working": {"activityMaxItems": 20, "activityMaxChars": 2000},
    "contextMaxChars": 6000,
}


@dataclass
class Registry:
    """The parsed memory.json; unknown keys are kept as they came."""

    data: dict[str, Any] = field(default_factory=dict)

    @property
    def workspaces(self) -> dict[str, dict[str, Any]]:
        value = self.data.setdefault("workspaces", {})
        assert isinstance(value, dict)
        return value

    @property
    def git(self) -> dict[str, Any]:
        value = self.data.setdefault("git", {})
        assert isinstance(value, dict)
        return value

    def setting(self, name: str) -> Any:
        settings = self.data.get("settings") or {}
        return settings.get(name, DEFAULT_SETTINGS.get(name))

    def freshness_windows(self) -> dict[str, int]:
        merged = dict(DEFAULT_SETTINGS["freshness"])
        merged.update(self.setting("freshness") or {})
        return {k: int(v) for k, v in merged.items()}


def default_registry(branch: str = "main") -> Registry:
    return Registry(
        {
            "schemaVersion": SCHEMA_VERSION,
            "git": {"remote": None, "branch": branch},
            "settings": json.loads(json.dumps(DEFAULT_SETTINGS)),
            "workspaces": {},
            "spaces": {},
        }
    )


def load_registry(root: Path) -> Registry:
    """Read memory.json; a broken file is a one-line error, never silently replaced."""
    path = root / "memory.json"
    if not os.path.lexists(path):
        return default_registry()
    try:
        text = read_regular_file(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc)
        raise StoreStateError(f"memory.json cannot be read ({reason}); restore it with git") from None
    return parse_registry(text)


def parse_registry(text: str) -> Registry:
    """memory.json's text as a Registry; StoreStateError (one line) when it is not one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StoreStateError(
            f"memory.json is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); fix it by hand or restore it with git"
        ) from None
    if not isinstance(data, dict):
        raise StoreStateError("memory.json must hold a JSON object")
    for key in ("workspaces", "git", "settings"):
        if not isinstance(data.get(key, {}), dict):
            raise StoreStateError(f"memory.json: '{key}' must be an object")
    check_freshness((data.get("settings") or {}).get("freshness", {}))
    return Registry(data)


MAX_WINDOW_DAYS = 100_000


def check_freshness(value: Any) -> None:
    """settings.freshness: volatility name -> window in whole days (1 to 100000)."""
    if not isinstance(value, dict):
        raise StoreStateError("memory.json: 'settings.freshness' must be an object of volatility -> days,"
                              ' e.g. {"stable": 365, "normal": 90, "volatile": 3}')
    for name, days in value.items():
        if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_WINDOW_DAYS:
            raise StoreStateError(f"memory.json: 'settings.freshness.{name}' must be a whole number of"
                                  f" days from 1 to {MAX_WINDOW_DAYS}, not {json.dumps(days)}")


def save_registry(root: Path, registry: Registry) -> None:
    write_json_atomic(root / "memory.json", registry.data)


# Machine-local associations: a folder on this machine -> workspace key (state/, never committed).
def _associations_path(root: Path) -> Path:
    return root / "state" / "associations.json"


def load_associations(root: Path) -> dict[str, str]:
    # A derived, machine-local file: a broken copy is rebuilt by the next associate.
    return {str(k): str(v) for k, v in load_json_object(_associations_path(root)).items()}


def save_association(root: Path, folder: Path, key: str) -> None:
    data = load_associations(root)
    data[str(folder.resolve())] = key
    write_json_atomic(_associations_path(root), data)


def associated_key(root: Path, cwd: Path) -> str | None:
    """The key associated with cwd or its nearest associated parent folder."""
    data = load_associations(root)
    if not data:
        return None
    here = cwd.resolve()
    for folder in (here, *here.parents):
        key = data.get(str(folder))
        if key:
            return key
    return None
