"""Front matter as most notes write it, read without YAML: `key: value` lines whose values are
plain words, and `key: [a, b]` lists of them. YAML's constructor costs about a millisecond a
note, most of an import's reading; these lines cost a few microseconds. Anything else (quotes,
nesting, comments, other characters), or a word YAML would read as other than a string (a
number, a date, `yes`, `null`), is left to YAML: `simple_front_matter` answers None."""

from __future__ import annotations

import re
from typing import Any

from yaml import ScalarNode
from yaml.resolver import Resolver

_STR_TAG = "tag:yaml.org,2002:str"
_LINE_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*?))? *")
# A plain scalar YAML reads as written: no indicator first, no `:` or `#` anywhere, no quote
# first; in a list (flow context) no comma either.
_WORDS_RE = re.compile(r"[A-Za-z0-9_(][A-Za-z0-9_ ./()'+,-]*")
_ITEM_RE = re.compile(r"[A-Za-z0-9_(][A-Za-z0-9_ ./()'+-]*")
_RESOLVER = Resolver()  # the one the safe loaders use: which plain words are not strings


def _is_text(word: str) -> bool:
    return _RESOLVER.resolve(ScalarNode, word, (True, False)) == _STR_TAG


def _value(raw: str | None) -> tuple[bool, Any]:
    """(read, value) of what follows `key:`; read is False when it takes YAML to read it."""
    if raw is None:
        return True, None
    if raw.startswith("[") and raw.endswith("]"):
        inner = raw[1:-1].strip()
        items = [item.strip() for item in inner.split(",")] if inner else []
        if all(_ITEM_RE.fullmatch(item) and _is_text(item) for item in items):
            return True, items
        return False, None
    if _WORDS_RE.fullmatch(raw) and _is_text(raw):
        return True, raw
    return False, None


def simple_front_matter(raw: str) -> dict[str, Any] | None:
    """The front matter's keys and values, as YAML reads them, when every line is of the simple
    kind (see the module text); None otherwise."""
    meta: dict[str, Any] = {}
    for line in raw.split("\n"):
        if not line.strip(" "):
            continue
        found = _LINE_RE.fullmatch(line)
        if found is None or not _is_text(found.group(1)):
            return None
        read, value = _value(found.group(2))
        if not read:
            return None
        meta[found.group(1)] = value  # a key given twice: the last wins, as in YAML
    return meta
