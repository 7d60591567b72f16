"""Which long-term layer a piece of text reads as, from its wording alone (pure).

One guesser for every path that has text but no layer: a runtime item leaving the hot file
(runtime/archive.py) and an imported note (gitmem/imports/). The rules are deliberately plain
and ordered: a recorded choice reads as a decision, a lesson as a learning, a dated happening as
episodic, an instruction or a list of steps as procedural; everything else is semantic.
"""

from __future__ import annotations

import re

LESSON_RE = re.compile(
    r"\b(lessons?|learn(?:ed|t)|mistakes?|next time|should(?:n't| not)? have|gotchas?|pitfalls?"
    r"|the hard way|turned out|never again|post-?mortem)\b",
    re.IGNORECASE,
)
_DECISION_RE = re.compile(
    r"\b(we decided|decided (?:to|on|against)|decision|we chose|chose .{1,40} over|rationale"
    r"|alternatives? considered|trade-?offs?)\b",
    re.IGNORECASE,
)
_EPISODE_RE = re.compile(
    r"\b(yesterday|last (?:week|month|night)|incident|outage|happened|on (?:\d{4}-\d{2}-\d{2}"
    r"|mon|tue|wed|thu|fri|sat|sun)\w*)\b",
    re.IGNORECASE,
)
_STEP_RE = re.compile(
    r"(^\s*(?:\d+[.)]|[-*+])\s+(?:run|use|install|add|call|set|start|open|create|never|always"
    r"|don't|do not|make sure|prefer|avoid)\b)"
    r"|(^\s*(?:run|use|install|always|never|don't|do not|make sure|prefer|avoid|before|after)\b)"
    r"|\b(how to|steps?|to (?:build|test|deploy|release|run|install)\b)",
    re.IGNORECASE | re.MULTILINE,
)


def reads_as_lesson(text: str) -> bool:
    return bool(LESSON_RE.search(text))


def guess_layer(text: str) -> str:
    """decisions | learnings | episodic | procedural | semantic, from the wording of `text`."""
    if _DECISION_RE.search(text):
        return "decisions"
    if reads_as_lesson(text):
        return "learnings"
    if _EPISODE_RE.search(text):
        return "episodic"
    if _STEP_RE.search(text):
        return "procedural"
    return "semantic"
