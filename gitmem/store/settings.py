"""Readers of the memory.json settings whose users sit above verbs/ (consolidation, the warm server)
or read them inline (the context card's budget, working memory's activity log).

Each reader is the one place its setting is read and judged: the part that uses the setting calls
it, and `gitmem config set` calls it on the value it is given, so a value is accepted on write
exactly when it is accepted on read. A value a reader would refuse raises InvalidInputError naming
what is allowed.
"""

from __future__ import annotations

from typing import Any

from gitmem.errors import InvalidInputError
from gitmem.store.registry import DEFAULT_SETTINGS, Registry

CONSOLIDATE_DEFAULTS: dict[str, int] = {"batchSize": 10, "maxPromptBytes": 48_000, "maxDigestBytes": 8_000,
                                        "maxAttempts": 3, "keepDigests": 50}
DEFAULT_CONTEXT_MAX_CHARS = int(DEFAULT_SETTINGS["contextMaxChars"])
DEFAULT_IDLE_MINUTES = 30.0
DEFAULT_REFRESH_MINUTES = 1440.0  # the freshness pass of the warm server: daily
DEFAULT_TURN_MINUTES = 10.0  # a session is captured at a turn's end at most this often
MIN_CONTEXT_MAX_CHARS = 200


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _group(registry: Registry, name: str) -> dict[str, Any]:
    value = registry.setting(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInputError(f"memory.json settings.{name} must be an object of settings")
    return value


def consolidate_settings(registry: Registry) -> dict[str, int]:
    """settings.consolidate: each a whole number >= 1; a missing or unusable one keeps its
    default (a pass never stops on a setting; `config set` refuses what this would ignore)."""
    raw = registry.setting("consolidate")
    merged = dict(CONSOLIDATE_DEFAULTS)
    if isinstance(raw, dict):
        merged.update({k: v for k, v in raw.items() if k in CONSOLIDATE_DEFAULTS and _whole(v) and v > 0})
    return merged


REVIEW_OFF, REVIEW_EVERYTHING = "off", "everything"
REVIEW_ALLOWED = 'off, everything, or a confidence from 0 to 1 (facts below it wait for review)'


def consolidate_review(registry: Registry) -> str | float:
    """settings.consolidate.review: "off" (every fact is written), "everything" (every fact waits
    for review), or a confidence threshold 0..1 (facts the model is less sure of wait)."""
    raw = registry.setting("consolidate")
    value = raw.get("review", REVIEW_OFF) if isinstance(raw, dict) else REVIEW_OFF
    if value in (REVIEW_OFF, REVIEW_EVERYTHING):
        return str(value)
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
        return value
    raise InvalidInputError(f"memory.json settings.consolidate.review must be {REVIEW_ALLOWED}")


def context_max_chars(registry: Registry) -> int:
    """settings.contextMaxChars: the context card's budget in characters."""
    value = registry.setting("contextMaxChars")
    if value is None:
        return DEFAULT_CONTEXT_MAX_CHARS
    if not _whole(value) or value < MIN_CONTEXT_MAX_CHARS:
        raise InvalidInputError(
            f"memory.json settings.contextMaxChars must be a whole number of characters >= {MIN_CONTEXT_MAX_CHARS}")
    return int(value)


def working_limits(registry: Registry) -> dict[str, int]:
    """settings.working: the Recent activity log's bounds (items, characters), each >= 1."""
    defaults = DEFAULT_SETTINGS["working"]
    values = _group(registry, "working")
    limits: dict[str, int] = {}
    for name, default in defaults.items():
        value = values.get(name, default)
        if not _whole(value) or value < 1:
            raise InvalidInputError(f"memory.json settings.working.{name} must be a whole number >= 1")
        limits[name] = int(value)
    return limits


def serve_idle_minutes(registry: Registry) -> float:
    """settings.serve.idleMinutes: how long a self-started server waits idle before it exits (0 = never)."""
    value = _group(registry, "serve").get("idleMinutes", DEFAULT_IDLE_MINUTES)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise InvalidInputError("memory.json settings.serve.idleMinutes must be a number of minutes >= 0")
    return float(value)


def serve_auto_start(registry: Registry) -> bool:
    """settings.serve.autoStart: whether the first call that finds no server starts one; only
    `false` turns it off (as the thin client reads it, without the store: serve/autostart.py)."""
    raw = registry.setting("serve")
    return not isinstance(raw, dict) or raw.get("autoStart", True) is not False


def search_rerank(registry: Registry) -> bool:
    """settings.search.rerank: whether search asks the model to reorder its top hits; only
    `true` turns it on."""
    raw = registry.setting("search")
    return isinstance(raw, dict) and raw.get("rerank") is True


def serve_refresh_minutes(registry: Registry) -> float:
    """settings.serve.refreshMinutes: how often the warm server runs the freshness pass (stale
    and expired entries to the model ladder); 0 = never. `gitmem serve --refresh-every` overrides."""
    return _minutes(registry, "serve", "refreshMinutes", DEFAULT_REFRESH_MINUTES)


def _minutes(registry: Registry, group: str, name: str, default: float) -> float:
    """settings.GROUP.NAME as a number of minutes >= 0."""
    value = _group(registry, group).get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise InvalidInputError(f"memory.json settings.{group}.{name} must be a number of minutes >= 0")
    return float(value)


def capture_turn_minutes(registry: Registry) -> float:
    """settings.capture.turnMinutes: the least time between two captures of one session at its
    turns' ends (the Stop hook); 0 = every turn."""
    return _minutes(registry, "capture", "turnMinutes", DEFAULT_TURN_MINUTES)


def context_refresh_minutes(registry: Registry) -> float:
    """settings.context.refreshMinutes: how often the prompt hook hands a session what changed in
    its context card since its last one; 0 (the default) = never."""
    return _minutes(registry, "context", "refreshMinutes", 0.0)


def default_space(registry: Registry) -> str | None:
    """settings.spaces.default: where a new entry goes when spaces are mounted and no routing
    rule chooses (a space name, or "home"); None (the default): the writer must choose."""
    value = _group(registry, "spaces").get("default")
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError("memory.json settings.spaces.default must be a space name (or home)")
    return value.strip()


DEFAULT_COMPACT_PERCENT = 90  # MEMORY.md past this share of its budget is proposed for compaction
COMPACT_ALLOWED = "a whole number from 1 to 100 (percent of MEMORY.md's budget)"


def runtime_compact_percent(registry: Registry | None) -> int:
    """settings.runtime.compactAtPercent: the maintenance pass proposes a compaction of a MEMORY.md
    whose items use more than this percent of its budget (None: the default)."""
    raw = registry.setting("runtime") if registry is not None else None
    value = raw.get("compactAtPercent", DEFAULT_COMPACT_PERCENT) if isinstance(raw, dict) else DEFAULT_COMPACT_PERCENT
    if not _whole(value) or not 1 <= value <= 100:
        raise InvalidInputError(f"memory.json settings.runtime.compactAtPercent must be {COMPACT_ALLOWED}")
    return int(value)
