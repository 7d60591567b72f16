"""Near-duplicate runtime items by cheap lexical similarity (pure).

The maintenance pass (consolidate/maintain.py) asks a model about a group of items only when
this finds them alike: two items are near-duplicates when they share most of their words
(Jaccard of their word sets) or read alike character by character (difflib's ratio). Groups
are joined pairwise (a chain of alike items is one group), kept in memories.json order, and
capped so one prompt stays small.
"""

from __future__ import annotations

import difflib
import hashlib
import re

from gitmem.runtime.model import Item, normalize_content

WORDS_ALIKE = 0.5  # share at least half their distinct words
CHARS_ALIKE = 0.8  # or read alike character by character
GROUP_MAX = 4  # items one merge proposal may replace
_WORD_RE = re.compile(r"\w+")
_STOP = frozenset(["a", "an", "the", "is", "are", "be", "to", "of", "in", "on", "for", "and", "or", "with", "as", "at", "by", "it", "its", "that", "this", "user", "prefers", "likes", "wants", "uses", "always"])


def words(text: str) -> frozenset[str]:
    """The item's distinct content words, casefolded (a few filler words left out)."""
    found = {w for w in _WORD_RE.findall(text.casefold())}
    return frozenset(found - _STOP) or frozenset(found)


def alike(first: str, second: str) -> bool:
    """True when two item texts look like the same fact said twice."""
    a, b = words(first), words(second)
    if a and b and len(a & b) / len(a | b) >= WORDS_ALIKE:
        return True
    ratio = difflib.SequenceMatcher(None, first.casefold(), second.casefold(), autojunk=False).ratio()
    return ratio >= CHARS_ALIKE


def near_duplicate_groups(items: list[Item]) -> list[list[Item]]:
    """Groups of two or more alike items (memories.json order; at most GROUP_MAX each)."""
    parent = list(range(len(items)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, first in enumerate(items):
        for j in range(i + 1, len(items)):
            if root(i) != root(j) and alike(first.content, items[j].content):
                parent[root(j)] = root(i)
    groups: dict[int, list[Item]] = {}
    for i, item in enumerate(items):
        groups.setdefault(root(i), []).append(item)
    return [group[:GROUP_MAX] for group in groups.values() if len(group) > 1]


def sources_print(contents: list[str]) -> str:
    """The same set of source items however they are ordered: what a rejection remembers."""
    joined = "\n".join(sorted(normalize_content(c).casefold() for c in contents))
    return hashlib.sha1(joined.encode("utf-8")).hexdigest()[:16]
