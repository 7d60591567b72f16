"""A gate in front of the detector, made of the detector's own patterns.

Importing detect-secrets costs more than pygit2 (it loads `requests` for its verifiers), and most
notes hold nothing that any of its plugins could match. Every plugin gitmem runs is a set of
regular expressions (the shape plugins' `denylist`, the keyword plugin's quotes-required
patterns): a line none of them matches cannot produce a finding. So the first scan, which imports
the detector anyway, writes those patterns to a cache file keyed by the installed detect-secrets
version; later processes clear such lines with the cached patterns and import the detector only
for a line one of them matches, and the detector (with its filters) has the last word.

Each pattern is cached with its needles (needles.py): strings one of which any match contains.
A pattern none of whose needles occurs in the text is not run at all, and otherwise only on the
lines holding one; this takes a 16 KiB document's gate from ~20 ms to about a millisecond.

No cache, an unreadable one or one written for another version: no gate, the detector runs.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmem.fsio import read_regular_file, read_text, write_text_atomic
from gitmem.secrets.needles import fold, needles

CACHE_NAME = "secret-patterns.json"
CACHE_FORMAT = 2  # 2: patterns come with their needles
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


@dataclass(frozen=True)
class Gate:
    """The detector's patterns, each with its needles (None: run it on every line)."""

    patterns: tuple[tuple[re.Pattern[str], tuple[str, ...] | None], ...]

    def suspects(self, numbered: list[tuple[int, str]]) -> list[tuple[int, str]]:
        """The numbered lines at least one pattern matches, in order."""
        folded = [fold(line) for _, line in numbered]
        whole = "\n".join(folded)
        hit: set[int] = set()
        for pattern, pins in self.patterns:
            if pins is None:
                candidates: list[int] | range = range(len(numbered))
            else:
                present = [pin for pin in pins if pin in whole]
                if not present:
                    continue
                candidates = [i for i, line in enumerate(folded)
                              if any(pin in line for pin in present)]
            hit.update(i for i in candidates if i not in hit and pattern.search(numbered[i][1]))
        return [numbered[i] for i in sorted(hit)]


_LOADED: dict[tuple[str, frozenset[str]], Gate] = {}


def load_gate(skipped: frozenset[str]) -> Gate | None:
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


def _read_gate(path: Path, skipped: frozenset[str]) -> Gate | None:
    version = installed_version()
    try:
        data = json.loads(read_regular_file(path))  # a cache file: never wait on a FIFO
        if not version or data.get("version") != version or not data.get("patterns"):
            return None
        if data.get("format") != CACHE_FORMAT or sorted(data.get("skipped") or ()) != sorted(skipped):
            return None
        pins = data["needles"]
        if len(pins) != len(data["patterns"]):
            return None
        return Gate(tuple((re.compile(source, flags), _pins(found))
                          for (source, flags), found in zip(data["patterns"], pins, strict=True)))
    except (OSError, ValueError, TypeError, KeyError, re.error):
        return None


def _pins(found: Any) -> tuple[str, ...] | None:
    """Needles as cached: a list of non-empty strings, or null."""
    if found is None:
        return None
    if not isinstance(found, list) or not found or not all(isinstance(x, str) and x for x in found):
        raise ValueError("malformed needles")
    return tuple(found)


def save_gate(skipped: frozenset[str], plugins: tuple[str, ...],
              patterns: list[tuple[str, int]]) -> None:
    """Cache the detector's patterns for this version (silently skipped where it cannot write)."""
    version = installed_version()
    if not version or not patterns:
        return
    data = {"format": CACHE_FORMAT, "version": version, "skipped": sorted(skipped),
            "plugins": list(plugins), "patterns": patterns,
            "needles": [needles(source, flags) for source, flags in patterns]}
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
