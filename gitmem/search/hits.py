"""A search hit as printed: its fields, freshness, and the texts it shows (through the caller's
mask, before a snippet is cut from the body)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gitmem.format.freshness import Freshness
from gitmem.search.rank import SNIPPET_CHARS, snippet


@dataclass
class SearchHit:
    """One ranked search result, citing `path:line` of the entry heading."""

    id: str | None
    title: str
    snippet: str
    path: str
    line: int
    scope: str
    layer: str
    topic: str
    importance: str
    freshness: str
    age_days: int | None
    source: str
    status: str
    score: float
    conflicted: bool
    explain: dict[str, Any] | None = None  # why it ranked here (explain.py), when asked


SHOWN_FIELDS = ("title", "body", "source")  # the stored texts a hit prints
MASK_MARGIN = 120  # characters of the body masked on each side of a snippet before it is cut


def shown_texts(found: list[dict[str, Any]], words: list[str],
                 shown: Callable[[list[str]], list[str]] | None) -> list[dict[str, str]]:
    """Each hit's title, snippet and source as printed. With `shown` (the secret mask) the
    snippet is cut from a masked excerpt MASK_MARGIN wider on each side: a secret the cut would
    split, or whose key word it would leave out, is masked first. All texts go in one call."""
    if shown is None:
        return [{"title": str(fields.get("title") or ""), "source": str(fields.get("source") or ""),
                 "snippet": snippet(str(fields.get("body") or fields.get("title") or ""), words)}
                for fields in found]
    raw = []
    for fields in found:
        body = str(fields.get("body") or fields.get("title") or "")
        raw += [str(fields.get("title") or ""), snippet(body, words, SNIPPET_CHARS + 2 * MASK_MARGIN),
                str(fields.get("source") or "")]
    out = shown(raw)
    return [{"title": out[i], "snippet": snippet(out[i + 1], words), "source": out[i + 2]}
            for i in range(0, len(out), len(SHOWN_FIELDS))]


def make_hit(fields: dict[str, Any], score: float, fresh: Freshness, text: dict[str, str]) -> SearchHit:
    status = fields.get("status", "live")
    if status == "live" and fresh.grade == "expired":
        status = "expired"
    return SearchHit(
        id=fields.get("id") or None,
        title=text["title"],
        snippet=text["snippet"],
        path=fields["path"],
        line=int(fields["line"]),
        scope=fields.get("scope", ""),
        layer=fields.get("layer", ""),
        topic=fields.get("topic", ""),
        importance=fields.get("importance", "normal"),
        freshness=fresh.grade,
        age_days=fresh.age_days,
        source=text["source"],
        status=status,
        score=round(score, 6),
        conflicted=bool(fields.get("conflicted", False)),
    )
