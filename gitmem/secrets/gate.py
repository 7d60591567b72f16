"""A gate in front of the detector, made of the detector's own patterns.

Importing detect-secrets costs more than pygit2 (it loads `requests` for its verifiers), and most
notes hold nothing that any of its plugins could match. Every plugin gitmem runs is a set of
regular expressions (the shape plugins' `denylist`, the keyword plugin's quotes-required
patterns): a line none of them matches cannot produce a finding. So the first scan, which imports
the detector anyway, writes those patterns to a cache file keyed by the installed detect-secrets
version; later processes clear such lines with the cached patterns and import the detector only
for a line one of them matches, and the detector (with its filters) has the last word.

No cache, an unreadable one or one written for another version: no gate, the detector runs.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
from pathlib import Path
from typing import Any

from gitmem.fsio import read_regular_file, read_text, write_text_atomic

CACHE_NAME = "secret-patterns.json"
_VERSION_RE = re.compile(r"""VERSION\s*=\s*['"]([^'"]+)['"]""")


def cache_file() -> Path:
    """$XDG_CACHE_HOME/gitmem/secret-patterns.json (~/.cache/gitmem/... by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gitmem" / CACHE_NAME


@functools.lru_cache(maxsize=1)
def installed_version() -> str | None:
    """detect-secrets' version, read from its package without importing it."""
    try:
        spec = importlib.util.find_spec("detect_secrets")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    try:
        match = _VERSION_RE.search(read_text(Path(spec.origin).parent / "__version__.py"))
    except OSError:
        return None
    return match.group(1) if match else None


_LOADED: dict[tuple[str, frozenset[str]], list[re.Pattern[str]]] = {}


def load_gate(skipped: frozenset[str]) -> list[re.Pattern[str]] | None:
    """The cached patterns, compiled; None when there is no cache written for this version of
    detect-secrets and this choice of plugins (`skipped`: the ones gitmem leaves out). Read once
    per process and cache file."""
    path = cache_file()
    if (str(path), skipped) in _LOADED:
        return _LOADED[(str(path), skipped)]
    gate = _read_gate(path, skipped)
    if gate is not None:
        _LOADED[(str(path), skipped)] = gate
    return gate


def _read_gate(path: Path, skipped: frozenset[str]) -> list[re.Pattern[str]] | None:
    version = installed_version()
    try:
        data = json.loads(read_regular_file(path))  # index/ is machine-local: never wait on a FIFO
        if not version or data.get("version") != version or not data.get("patterns"):
            return None
        if sorted(data.get("skipped") or ()) != sorted(skipped):
            return None
        return [re.compile(source, flags) for source, flags in data["patterns"]]
    except (OSError, ValueError, TypeError, KeyError, re.error):
        return None


def save_gate(skipped: frozenset[str], plugins: tuple[str, ...],
              patterns: list[tuple[str, int]]) -> None:
    """Cache the detector's patterns for this version (silently skipped where it cannot write)."""
    version = installed_version()
    if not version or not patterns:
        return
    data = {"version": version, "skipped": sorted(skipped), "plugins": list(plugins),
            "patterns": patterns}
    try:
        cache_file().parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(cache_file(), json.dumps(data), durable=False)
    except OSError:
        pass


def detector_patterns(plugins: tuple[str, ...]) -> list[tuple[str, int]] | None:
    """(source, flags) of every pattern the named plugins search a line with, as detect-secrets'
    adhoc line scan uses them; None when a plugin is not made of patterns gitmem can read."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins import keyword

    out: list[tuple[str, int]] = []
    for plugin in plugin_classes(get_mapping_from_secret_type_to_class()):
        name = str(getattr(plugin, "__name__", ""))
        if name not in plugins:
            continue
        if name == "KeywordDetector":
            found = list(keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)
        else:
            denylist = plugin.__dict__.get("denylist")
            if not isinstance(denylist, (list, tuple)):
                return None
            found = list(denylist)
        if not found or not all(isinstance(p, re.Pattern) for p in found):
            return None
        out += [(p.pattern, p.flags) for p in found]
    return out


def plugin_classes(mapping: Any) -> list[Any]:
    """The plugin classes of detect-secrets' secret-type mapping (its package has no types)."""
    return list(mapping.values())
