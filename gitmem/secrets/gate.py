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

The same patterns mask what output prints (mask.py): each with the group that holds the secret
(the keyword plugin's value group), so what the gate passes on to the detector is what a reader
never sees.

No cache, an unreadable one or one written for another version: no gate, the detector runs.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any

from gitmem import caller
from gitmem.fsio import read_regular_file, read_text, write_text_atomic
from gitmem.secrets.needles import fold, needles

CACHE_NAME = "secret-patterns.json"
CACHE_FORMAT = 3  # 2: patterns come with their needles; 3: and with their secret's group
_VERSION_RE = re.compile(r"""VERSION\s*=\s*['"]([^'"]+)['"]""")


def cache_file() -> Path:
    """$XDG_CACHE_HOME/gitmem/secret-patterns.json (~/.cache/gitmem/... by default)."""
    return Path(_cache_name())


def _cache_name() -> str:
    base = caller.env("XDG_CACHE_HOME") or os.path.join(caller.home(), ".cache")
    return os.path.join(base, "gitmem", CACHE_NAME)


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


def candidate_lines(folded: list[str], whole: str, pins: tuple[str, ...] | None,
                    held: set[str] | None = None) -> list[int] | range:
    """Indexes of the (folded) lines a pattern with these needles can match: those holding one
    of its needles, every line when it has none. `held`: every needle the text holds, when the
    caller looked for them already (present_needles): a set look-up, not a search of the text."""
    if pins is None:
        return range(len(folded))
    present = [pin for pin in pins if pin in (whole if held is None else held)]
    if not present:
        return []
    # Find the needles in the whole text and map each place to its line: every line holding a
    # needle is found (a needle spanning lines would add a line, never lose one).
    starts = _line_starts(whole)
    found: set[int] = set()
    for pin in present:
        at = whole.find(pin)
        while at != -1:
            found.add(bisect_right(starts, at) - 1)
            at = whole.find(pin, at + 1)
    return sorted(found)


@functools.lru_cache(maxsize=8)
def _line_starts(whole: str) -> list[int]:
    """Where each line of the joined text starts (one list for every pattern's look-up)."""
    return [0, *accumulate(len(line) + 1 for line in whole.split("\n"))][:-1] or [0]


@dataclass(frozen=True)
class Gate:
    """The detector's patterns (source, flags), each with its needles (None: run it on every
    line) and the group that holds the secret (None: the longest group of 8+ characters, else
    the match). A pattern is compiled when a text first holds one of its needles (the re module
    keeps it): most processes compile few of them."""

    sources: tuple[tuple[str, int], ...]
    pins: tuple[tuple[str, ...] | None, ...]
    groups: tuple[int | None, ...]

    @property
    def patterns(self) -> list[tuple[re.Pattern[str], tuple[str, ...] | None]]:
        """Every pattern, compiled, with its needles."""
        return [(re.compile(source, flags), pins)
                for (source, flags), pins in zip(self.sources, self.pins, strict=True)]

    def suspects(self, numbered: list[tuple[int, str]], folded: list[str] | None = None,
                 present: set[str] | None = None) -> list[tuple[int, str]]:
        """The numbered lines at least one pattern matches, in order. `folded`: the lines folded
        (fold), and `present`: the needles their text holds (present_needles), when the caller
        has them already: one look for each needle instead of one per pattern holding it."""
        folded = [fold(line) for _, line in numbered] if folded is None else folded
        whole = "\n".join(folded)
        hit: set[int] = set()
        for (source, flags), pins in zip(self.sources, self.pins, strict=True):
            if present is not None and pins is not None and present.isdisjoint(pins):
                continue  # none of its needles in the text: it cannot match
            candidates = [i for i in candidate_lines(folded, whole, pins, present) if i not in hit]
            if candidates:
                pattern = compiled(source, flags)
                hit.update(i for i in candidates if pattern is None or pattern.search(numbered[i][1]))
        return [numbered[i] for i in sorted(hit)]

    def spans(self, lines: list[str], folded: list[str], whole: str,
              present: set[str] | None = None) -> dict[int, list[tuple[int, int]]]:
        """Line index -> (start, end) of each stretch any pattern would flag. `present`: the
        needles the text holds (present_needles), when the caller found them already."""
        out: dict[int, list[tuple[int, int]]] = {}
        for (source, flags), pins, group in zip(self.sources, self.pins, self.groups, strict=True):
            if present is not None and pins is not None and present.isdisjoint(pins):
                continue  # none of its needles in the text: it cannot match
            candidates = candidate_lines(folded, whole, pins, present)
            if not candidates:
                continue
            pattern = compiled(source, flags)
            if pattern is None:
                continue
            for i in candidates:
                for match in pattern.finditer(lines[i]):
                    out.setdefault(i, []).append(secret_span(match, group))
        return out


def present_needles(whole: str, needles: frozenset[str]) -> set[str]:
    """Those of the needles that occur in the (folded) text: one look for every needle, rather
    than one per pattern holding it."""
    return {needle for needle in needles if needle in whole}


def compiled(source: str, flags: int) -> re.Pattern[str] | None:
    """The pattern, compiled (and kept by the re module); None when a damaged cache holds one
    that does not compile: the gate then passes its lines on to the detector."""
    try:
        return re.compile(source, flags)
    except (re.error, TypeError, ValueError, OverflowError):
        return None


_CONTEXT = " \t\"'=:`"  # what a detector pattern matches around a secret (quotes, separators)


def secret_span(match: re.Match[str], group: int | None) -> tuple[int, int]:
    """Where the secret of a detector pattern's match is: its named group, else its longest
    group of 8+ characters, else the whole match without the quotes and separators around it."""
    if group is not None and match.group(group):
        return match.span(group)
    groups = [g for g in range(1, (match.re.groups or 0) + 1) if match.group(g)]
    longest = max(groups, key=lambda g: len(match.group(g)), default=None)
    if longest is not None and len(match.group(longest)) >= 8:
        return match.span(longest)
    start, end = match.span()
    text = match.string
    while start < end and text[start] in _CONTEXT:
        start += 1
    while end > start and text[end - 1] in _CONTEXT:
        end -= 1
    return start, end


_LOADED: dict[tuple[str, frozenset[str]], Gate] = {}


def load_gate(skipped: frozenset[str]) -> Gate | None:
    """The cached patterns, compiled; None when there is no cache written for this version of
    detect-secrets and this choice of plugins (`skipped`: the ones gitmem leaves out). Read once
    per process and cache file."""
    name = _cache_name()  # a mask asks for every string it masks: no Path made for a known one
    known = _LOADED.get((name, skipped))
    if known is not None:
        return known
    gate = _read_gate(Path(name), skipped)
    if gate is not None:
        _LOADED[(name, skipped)] = gate
    return gate


def _read_gate(path: Path, skipped: frozenset[str]) -> Gate | None:
    version = installed_version()
    try:
        data = json.loads(read_regular_file(path))  # a cache file: never wait on a FIFO
        if not version or data.get("version") != version or not data.get("patterns"):
            return None
        if data.get("format") != CACHE_FORMAT or sorted(data.get("skipped") or ()) != sorted(skipped):
            return None
        pins, groups = data["needles"], data["groups"]
        if not len(pins) == len(groups) == len(data["patterns"]):
            return None
        if not all(g is None or isinstance(g, int) for g in groups):
            return None
        sources = tuple((str(source), int(flags)) for source, flags in data["patterns"])
        return Gate(sources, tuple(_pins(found) for found in pins), tuple(groups))
    except (OSError, ValueError, TypeError, KeyError, re.error):
        return None


def _pins(found: Any) -> tuple[str, ...] | None:
    """Needles as cached: a list of non-empty strings, or null."""
    if found is None:
        return None
    if not isinstance(found, list) or not found or not all(isinstance(x, str) and x for x in found):
        raise ValueError("malformed needles")
    return tuple(found)


Pattern = tuple[str, int, int | None]  # source, flags, the group holding the secret


def build_gate(patterns: list[Pattern]) -> Gate:
    """The gate of these patterns, compiled, with their needles."""
    return Gate(tuple((source, flags) for source, flags, _ in patterns),
                tuple(_pins(needles(source, flags)) for source, flags, _ in patterns),
                tuple(g for _, _, g in patterns))


def save_gate(skipped: frozenset[str], plugins: tuple[str, ...], patterns: list[Pattern]) -> None:
    """Cache the detector's patterns for this version (silently skipped where it cannot write)."""
    version = installed_version()
    if not version or not patterns:
        return
    data = {"format": CACHE_FORMAT, "version": version, "skipped": sorted(skipped),
            "plugins": list(plugins), "patterns": [[source, flags] for source, flags, _ in patterns],
            "needles": [needles(source, flags) for source, flags, _ in patterns],
            "groups": [group for _, _, group in patterns]}
    try:
        cache_file().parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(cache_file(), json.dumps(data), durable=False)
    except OSError:
        pass


def detector_patterns(plugins: tuple[str, ...]) -> list[Pattern] | None:
    """(source, flags, secret group) of every pattern the named plugins search a line with, as
    detect-secrets' adhoc line scan uses them; None when a plugin is not made of patterns gitmem
    can read."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins import keyword

    out: list[Pattern] = []
    for plugin in plugin_classes(get_mapping_from_secret_type_to_class()):
        name = str(getattr(plugin, "__name__", ""))
        if name not in plugins:
            continue
        groups: dict[Any, int | None]
        if name == "KeywordDetector":
            groups = dict(keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)
        else:
            denylist = plugin.__dict__.get("denylist")
            if not isinstance(denylist, (list, tuple)):
                return None
            groups = dict.fromkeys(denylist)
        if not groups or not all(isinstance(p, re.Pattern) for p in groups):
            return None
        out += [(p.pattern, p.flags, g if isinstance(g, int) else None) for p, g in groups.items()]
    return out


def plugin_classes(mapping: Any) -> list[Any]:
    """The plugin classes of detect-secrets' secret-type mapping (its package has no types)."""
    return list(mapping.values())
