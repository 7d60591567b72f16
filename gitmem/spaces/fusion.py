"""Merging the ranked hits of several spaces into one list (pure: rankings in, one ranking out).

Each space has its own index, so raw scores are not on one scale: a term's weight depends on how
many of *that* space's entries hold it (a space full of deploy notes weighs "deploy" low), and a
retry by word prefix scores on another scale than an exact match. The default is therefore
reciprocal rank fusion ("rrf"): a hit scores 1/(k + rank) within its space, k = 60. An entry lives
in one space only, so this interleaves the spaces rank by rank; hits of equal rank are ordered by
their score relative to their space's best ("max" normalization), then by raw score.

"max" (score / the space's best score) and "raw" (no normalization) are kept for measurement:
on the retrieval fixture split across two and three spaces all three stay within 0.015 of one
store's recall@5 and MRR (tests/spaces/test_fusion.py, docs/decisions/0012-spaces.md); rank
fusion is chosen because it assumes nothing about score scales.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

RRF_K = 60
METHODS = ("rrf", "max", "raw")
DEFAULT_METHOD = "rrf"

Ranking = tuple[str, bool, Sequence[dict[str, Any]]]  # (space name, is the store itself, hits)


def _labelled(space: str, home: bool, hit: dict[str, Any]) -> dict[str, Any]:
    out = dict(hit)
    out["space"] = space
    entry_id = hit.get("id")
    out["ref"] = entry_id if home or entry_id is None else f"{space}/{entry_id}"
    return out


def _score(method: str, rank: int, raw: float, relative: float) -> float:
    if method == "rrf":
        return 1.0 / (RRF_K + rank)
    return relative if method == "max" else raw


def fuse(rankings: Sequence[Ranking], limit: int, method: str = DEFAULT_METHOD) -> list[dict[str, Any]]:
    """One ranking of at most `limit` hits, each labelled with its space and qualified `ref`."""
    if method not in METHODS:
        raise ValueError(f"unknown fusion method {method!r}")
    scored: list[tuple[float, float, float, int, int, dict[str, Any]]] = []
    for order, (space, home, hits) in enumerate(rankings):
        best = max((float(h.get("score") or 0.0) for h in hits), default=0.0)
        for rank, hit in enumerate(hits, 1):
            raw = float(hit.get("score") or 0.0)
            relative = raw / best if best > 0 else 0.0
            fused = _score(method, rank, raw, relative)
            scored.append((-fused, -relative, -raw, order, rank, _labelled(space, home, hit)))
    scored.sort(key=lambda item: item[:5])
    out = []
    for item in scored[:limit]:
        hit = item[5]
        if len(rankings) > 1:
            hit["fused_score"] = round(-item[0], 6)
        out.append(hit)
    return out
