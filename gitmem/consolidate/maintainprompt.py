"""The runtime maintenance pass's prompts and the defensive reading of a model's answers (pure).

A reply that cannot be used is a reason (shown as a note), never an exception: the pass then
proposes nothing for that group. What a usable reply must hold:

- merge: one line `MERGED: <text>`, the one item that says what the near-duplicates say; it must
  follow the item rules and be no longer than the items it replaces together. `DISTINCT` (or no
  MERGED line) is no proposal.
- compaction: the new items, one per line starting with `- `; fewer or as many items as before,
  each following the item rules, and fewer bytes in all than the items they replace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gitmem.runtime.model import Item, content_problem, normalize_content

MERGE_HEADING = "### runtime merge"
COMPACT_HEADING = "### runtime compaction"
_MERGED_RE = re.compile(r"^\s*(?:\*\*)?MERGED:?(?:\*\*)?:?\s*(.+?)\s*$", re.I)
_DISTINCT_RE = re.compile(r"^\s*(?:\*\*)?DISTINCT\b", re.I)
_BULLET_RE = re.compile(r"^\s*[-*]\s+(.+?)\s*$")
_PLACEHOLDER = "<"


@dataclass
class Answer:
    """The texts a reply proposes (empty when it proposes nothing) and why not, if so."""

    texts: list[str] = field(default_factory=list)
    reason: str = ""


def _listed(items: list[Item]) -> str:
    return "\n".join(f"[{item.id}] {item.content}" for item in items)


def merge_prompt(items: list[Item]) -> str:
    """Ask whether near-duplicate USER.md items say one thing, and for that one item."""
    return (
        "You keep a user's profile (USER.md) short: every item is read into every prompt.\n"
        "The items below look like the same fact said more than once.\n"
        "If they say the same thing, answer with exactly one line:\n"
        "MERGED: <one item that keeps everything each of them says>\n"
        "If they say different things, answer with exactly one line: DISTINCT\n"
        "Answer nothing else.\n\n"
        f"{MERGE_HEADING}\n{_listed(items)}\n"
    )


def compact_prompt(items: list[Item], size: int, limit: int) -> str:
    """Ask for MEMORY.md's items said in fewer, shorter items."""
    return (
        f"MEMORY.md holds {size} of its {limit} bytes; every item is read into every prompt.\n"
        "Rewrite the items below as fewer, shorter items that keep every fact, command, path and\n"
        "name they hold. Drop nothing that is not said twice. Answer only with the new items, one\n"
        "per line, each starting with \"- \". Nothing else.\n\n"
        f"{COMPACT_HEADING}\n{_listed(items)}\n"
    )


def read_merge(reply: str, items: list[Item], item_limit: int) -> Answer:
    """The merged item a reply proposes, or why there is none."""
    merged = [m.group(1) for m in map(_MERGED_RE.match, reply.splitlines()) if m]
    merged = [text for text in merged if not text.startswith(_PLACEHOLDER)]
    if not merged:
        if any(_DISTINCT_RE.match(line) for line in reply.splitlines()):
            return Answer(reason="the model judged them distinct")
        return Answer(reason="the model's reply held no MERGED line")
    text = normalize_content(merged[-1])
    problem = content_problem(text, item_limit)
    if problem is not None:
        return Answer(reason=f"the merged text {problem}")
    together = sum(len(item.content.encode("utf-8")) for item in items)
    if len(text.encode("utf-8")) > together:
        return Answer(reason="the merged text is longer than the items it would replace")
    return Answer([text])


def read_compaction(reply: str, items: list[Item], item_limit: int) -> Answer:
    """The new items a reply proposes, or why there are none."""
    texts = [normalize_content(m.group(1)) for m in map(_BULLET_RE.match, reply.splitlines()) if m]
    texts = list(dict.fromkeys(t for t in texts if t and not t.startswith(_PLACEHOLDER)))
    if not texts:
        return Answer(reason="the model's reply held no `- ` item lines")
    for text in texts:
        problem = content_problem(text, item_limit)
        if problem is not None:
            return Answer(reason=f"a proposed item {problem}")
    if len(texts) > len(items):
        return Answer(reason=f"the reply has {len(texts)} items for {len(items)}: not a compaction")
    before = sum(len(item.content.encode("utf-8")) for item in items)
    after = sum(len(text.encode("utf-8")) for text in texts)
    if after >= before:
        return Answer(reason=f"the proposed items hold {after} bytes, not fewer than {before}")
    return Answer(texts)
