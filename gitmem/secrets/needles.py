"""The plain strings a regular expression cannot match without: a cheap test before the regex.

A pattern such as `AKIA[0-9A-Z]{16}` can only match a line that contains "akia" (compared
case-folded, so the test also holds for case-insensitive patterns). For a pattern like
`(api_?key|secret)\\s*=` any match contains one of "apikey", "api_key", "secret". Checking for
such needles with `in` costs microseconds where running the pattern over every line cost most of
a document write's secret scan.

The needles are read from the pattern's parse tree (the standard library's own parser) and are
conservative: when a part of the pattern is not understood, it is treated as "could be anything",
so the worst outcome is no needle (the pattern then runs on every line), never a missed line.
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any

try:  # the parser the re module compiles with (Python 3.11+); without it there are no needles
    sre_constants: Any = importlib.import_module("re._constants")
    sre_parser: Any = importlib.import_module("re._parser")
except ImportError:  # pragma: no cover - a Python without it runs every pattern on every line
    sre_constants = sre_parser = None

_MAX_ALTERNATIVES = 64  # beyond this many spellings a needle set is not worth checking
_SMALL_CLASS = 8  # a class like [_-] is spelled out; a bigger one ends the needle


def needles(source: str, flags: int = 0) -> list[str] | None:
    """Case-folded strings one of which every match of the pattern contains; None when the
    pattern has no such set (it must then be tried on every line)."""
    found = _needles(source, flags)
    return None if found is None else list(found)


@functools.lru_cache(maxsize=1024)
def _needles(source: str, flags: int) -> tuple[str, ...] | None:
    """needles(), kept per pattern: a process that reads the detector's patterns again (its
    cache file moved or was written anew) does not parse them all again (~0.2 s)."""
    if sre_parser is None:
        return None
    try:
        tree = sre_parser.parse(source, flags)
    except (re.error, RecursionError, TypeError, ValueError):
        return None
    try:
        found = _required(list(tree))
    except RecursionError:
        return None
    if not found:
        return None
    # Case-insensitive matching of other scripts has rules casefold() lacks: keep the ASCII part.
    ascii_only = {_longest_ascii(s) for s in found}
    return None if "" in ascii_only else tuple(sorted(ascii_only))


def _longest_ascii(needle: str) -> str:
    """The longest run of ASCII characters in a needle (all of it when it is ASCII)."""
    if needle.isascii():
        return needle
    return max(re.split(r"[^\x00-\x7f]+", needle), key=len)


def fold(line: str) -> str:
    """A line as needles are looked for in it: case-folded, and the dotless i (which a
    case-insensitive pattern's i matches) folded to i as well."""
    return line.casefold().replace("\u0131", "i")


def _required(items: list[tuple[Any, Any]]) -> set[str] | None:
    """A set of strings one of which each match of this sequence contains, the most selective
    one the sequence offers; None when none is known."""
    candidates: list[set[str]] = []
    run: set[str] = {""}
    for op, arg in items:
        spelled = _fixed(op, arg)
        if spelled is not None:
            grown = {a + b for a in run for b in spelled}
            if len(grown) > _MAX_ALTERNATIVES:  # too many spellings: end the run, start anew
                _close(run, candidates)
                grown = spelled
            run = grown
            continue
        _close(run, candidates)
        run = {""}
        inner = _required_item(op, arg)
        if inner:
            candidates.append(inner)
    _close(run, candidates)
    if not candidates:
        return None
    return max(candidates, key=lambda s: (min(len(x) for x in s), -len(s)))


def _close(run: set[str], candidates: list[set[str]]) -> None:
    if run and all(run):
        candidates.append(run)


def _required_item(op: Any, arg: Any) -> set[str] | None:
    """What one non-literal item of a sequence requires (groups, alternatives, repeats)."""
    c = sre_constants
    if op is c.SUBPATTERN:
        return _required(list(arg[-1]))
    if op is c.ATOMIC_GROUP:
        return _required(list(arg))
    if op is c.BRANCH:
        union: set[str] = set()
        for branch in arg[1]:
            found = _required(list(branch))
            if not found:
                return None  # one alternative needs nothing: the whole needs nothing
            union |= found
        return union if len(union) <= _MAX_ALTERNATIVES else None
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and arg[0] >= 1:
        return _required(list(arg[2]))
    return None  # anchors, lookarounds, classes, back-references: nothing known


def _fixed(op: Any, arg: Any) -> set[str] | None:
    """The complete, small set of strings this item matches (case-folded); None when it is not
    a plain spelling (a class of many characters, an open repeat, ...)."""
    c = sre_constants
    if op is c.LITERAL:
        return {chr(arg).casefold()}
    if op is c.IN:
        if len(arg) > _SMALL_CLASS or any(kind is not c.LITERAL for kind, _ in arg):
            return None
        return {chr(code).casefold() for _, code in arg}
    if op is c.SUBPATTERN:
        return _fixed_sequence(list(arg[-1]))
    if op is c.BRANCH:
        union: set[str] = set()
        for branch in arg[1]:
            spelled = _fixed_sequence(list(branch))
            if spelled is None:
                return None
            union |= spelled
        return union if len(union) <= _MAX_ALTERNATIVES else None
    if op is c.MAX_REPEAT or op is c.MIN_REPEAT or op is c.POSSESSIVE_REPEAT:
        low, high, body = arg
        if high is c.MAXREPEAT or high > 4:
            return None
        inner = _fixed_sequence(list(body))
        if inner is None:
            return None
        return _repeat(inner, low, high)
    return None


def _fixed_sequence(items: list[tuple[Any, Any]]) -> set[str] | None:
    out: set[str] = {""}
    for op, arg in items:
        spelled = _fixed(op, arg)
        if spelled is None:
            return None
        out = {a + b for a in out for b in spelled}
        if len(out) > _MAX_ALTERNATIVES:
            return None
    return out


def _repeat(inner: set[str], low: int, high: int) -> set[str] | None:
    """Every spelling of `inner` repeated low..high times."""
    out: set[str] = set()
    level: set[str] = {""}
    for count in range(high + 1):
        if count >= low:
            out |= level
        if count < high:
            level = {a + b for a in level for b in inner}
        if len(out) > _MAX_ALTERNATIVES or len(level) > _MAX_ALTERNATIVES:
            return None
    return out
