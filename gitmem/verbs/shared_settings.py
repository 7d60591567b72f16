"""The shared settings of memory.json a person may change (freshness windows, the hot tier's and
the documents' budgets): read with their defaults, and set in one commit after the candidate
passed the very check each reader applies when it loads them, so a value the page or any other
caller writes is one gitmem reads back without an error."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from gitmem.documents.shelf import ACTIVE_LIMIT, BODY_LIMIT, DocLimits
from gitmem.errors import GitmemError, InvalidInputError
from gitmem.runtime.budget import ITEM_LIMIT, MEMORY_LIMIT, USER_LIMIT, Limits
from gitmem.store.registry import DEFAULT_SETTINGS, check_freshness
from gitmem.store.store import Store


@dataclass(frozen=True)
class Setting:
    """One number under memory.json `settings`: `group.name`, what it means, its default."""

    group: str
    name: str
    label: str
    default: int

    @property
    def key(self) -> str:
        return f"{self.group}.{self.name}"


_FRESH = DEFAULT_SETTINGS["freshness"]
SETTINGS: tuple[Setting, ...] = (
    Setting("freshness", "stable", "Freshness window of a stable fact (days)", _FRESH["stable"]),
    Setting("freshness", "normal", "Freshness window of a normal fact (days)", _FRESH["normal"]),
    Setting("freshness", "volatile", "Freshness window of a volatile fact (days)", _FRESH["volatile"]),
    Setting("runtime", "userLimitBytes", "USER.md budget (bytes)", USER_LIMIT),
    Setting("runtime", "memoryLimitBytes", "MEMORY.md budget (bytes)", MEMORY_LIMIT),
    Setting("runtime", "itemLimitBytes", "One hot item at most (bytes)", ITEM_LIMIT),
    Setting("documents", "bodyLimitBytes", "One document at most (bytes)", BODY_LIMIT),
    Setting("documents", "activeLimitBytes", "Active documents of a scope at most (bytes)", ACTIVE_LIMIT),
)
# Each group's reader, run on the candidate: it raises on what it would refuse when loading.
_READERS: dict[str, Callable[[Any], object]] = {
    "freshness": check_freshness, "runtime": Limits.from_settings, "documents": DocLimits.from_settings,
}


def current(store: Store) -> list[tuple[Setting, Any]]:
    """Every setting with its value now (the default when memory.json does not set it)."""
    out = []
    for setting in SETTINGS:
        group = store.registry.setting(setting.group)
        value = group.get(setting.name, setting.default) if isinstance(group, dict) else setting.default
        out.append((setting, value))
    return out


def _number(key: str, text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise InvalidInputError(f"settings.{key} must be a whole number, not {text.strip()!r}") from None


def set_settings(store: Store, changes: Mapping[str, str]) -> list[str]:
    """Set the `group.name` keys to the numbers given (as text); one commit `settings: ...`.
    Values equal to the current ones are left out; a refused value writes nothing. Returns
    `key=value` of what changed."""
    known = {s.key: s for s in SETTINGS}
    unknown = sorted(set(changes) - set(known))
    if unknown:
        raise InvalidInputError(f"unknown setting {unknown[0]} (known: {', '.join(known)})")
    wanted = {key: _number(key, text) for key, text in changes.items()}
    with store.writing("settings") as txn:
        registry = store.registry
        settings = copy.deepcopy(registry.data.get("settings") or {})
        now = dict(((s.key, v) for s, v in current(store)))
        done = [f"{key}={value}" for key, value in wanted.items() if now[key] != value]
        if not done:
            txn.message = ""
            return []
        for key, value in wanted.items():
            setting = known[key]
            settings.setdefault(setting.group, {})[setting.name] = value
        for group in {known[key].group for key in wanted}:
            try:
                _READERS[group](settings.get(group))
            except GitmemError as exc:
                raise InvalidInputError(str(exc).replace("memory.json: ", "")
                                        .replace("memory.json ", "") + "; nothing was written") from None
        registry.data["settings"] = settings
        store.save_registry(txn, registry)
        store.write_file(txn, "SYSTEM.md", store.render_system_doc())
        txn.message = "settings: " + ", ".join(done)
    return done
