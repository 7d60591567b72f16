"""Why a hit ranked where it did (`search --explain`): the score taken apart.

Recomputed for the shown hits only, from their stored fields and the same plans, weights and
factors the ranking used: each query word's matching term, the fields it occurs in and its share
of the score; the coverage bonus; importance and freshness; the question's date and the entry's
day that matched it (for a date relative to an event: the entry and day it was anchored on); the
lift a neighbour gave.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gitmem.format.freshness import GRADE_PENALTY, Freshness
from gitmem.search.analysis import index_terms
from gitmem.search.dates import DAY_PREFIX, MONTH_PREFIX, Anchor, When, date_terms, entry_days
from gitmem.search.rank import IMPORTANCE_BOOST, WordPlan, coverage_factor, term_weights


def _fields_of(term: str, texts: dict[str, str]) -> list[str]:
    """The fields (title, topic, body, id, date) an index term comes from."""
    if term.startswith((DAY_PREFIX, MONTH_PREFIX)):
        return ["date"]
    found = [name for name, text in texts.items() if term in index_terms(text)]
    return found or ["id"]


def _word(plan: WordPlan, weights: dict[str, float], idf_of: Callable[[str], float],
          texts: dict[str, str]) -> dict[str, Any] | None:
    """The best-matching alternative of one query word for this entry, or its parts."""
    best: tuple[float, str, float] | None = None
    for term, multiplier in plan.alternatives:
        score = idf_of(term) * multiplier * weights.get(term, 0.0)
        if score > 0 and (best is None or score > best[0]):
            best = (score, term, multiplier)
    parts = [p for p in plan.parts if weights.get(p)]
    if plan.parts and len(parts) == len(plan.parts):
        total = sum(idf_of(p) * weights[p] for p in parts)
        if best is None or total > best[0]:
            return {"term": " + ".join(parts), "fields": sorted({f for p in parts
                                                                 for f in _fields_of(p, texts)}),
                    "score": round(total, 4), "match": "parts"}
    if best is None:
        return None
    score, term, multiplier = best
    match = "whole" if multiplier >= 1.0 else "partial"
    return {"term": term, "fields": _fields_of(term, texts), "score": round(score, 4),
            "match": match, **({"weight": multiplier} if multiplier != 1.0 else {})}


def _anchor(anchor: Anchor) -> dict[str, Any]:
    """The entry an event-relative date was anchored on, and the day taken from it."""
    return {"event": anchor.event, "id": anchor.entry_id or None, "at": anchor.at,
            "title": anchor.title, "day": anchor.day.isoformat(), "from": anchor.source}


def explain_hit(fields: dict[str, Any], plans: Sequence[WordPlan], words: Sequence[str],
                when: When | None, idf_of: Callable[[str], float], fresh: Freshness,
                final: float, lift: tuple[float, dict[str, Any]] | None) -> dict[str, Any]:
    """The parts of one hit's score, JSON-ready."""
    topic = str(fields.get("topic", "")).replace("-", " ").replace("_", " ")
    body = str(fields.get("body", ""))
    title = str(fields.get("title", ""))
    days = entry_days(str(fields.get("created", "")), str(fields.get("topic", "")), (title, body))
    weights = term_weights(title, body, topic, str(fields.get("id", "")), date_terms(days))
    texts = {"title": title, "topic": topic, "body": body}
    terms: list[dict[str, Any]] = []
    date_match: dict[str, Any] | None = None
    for index, plan in enumerate(plans):
        found = _word(plan, weights, idf_of, texts)
        if when is not None and index == len(plans) - 1:
            date_match = {"asked": when.phrase, "span": str(when.span),
                          "matched": found["term"].split(":", 1)[1] if found else None,
                          "score": found["score"] if found else 0.0}
            if when.anchor is not None:
                date_match["anchor"] = _anchor(when.anchor)
        elif found is not None:
            terms.append({"word": words[index], **found})
    matched = len(terms) + (1 if date_match and date_match["matched"] else 0)
    importance = str(fields.get("importance", "normal"))
    out: dict[str, Any] = {
        "score": round(final, 6), "terms": terms,
        "coverage": {"matched": matched, "words": len(plans),
                     "factor": round(coverage_factor(matched, len(plans)), 3)},
        "importance": {"value": importance,
                       "factor": IMPORTANCE_BOOST.get(importance, 1.0)},
        "freshness": {"grade": fresh.grade, "age_days": fresh.age_days,
                      "factor": GRADE_PENALTY.get(fresh.grade, 1.0)},
    }
    if date_match is not None:
        out["date"] = date_match
    if lift is not None:
        amount, source = lift
        out["neighbour"] = {"lift": round(amount, 6), "from": source.get("id") or None,
                            "at": f"{source.get('path')}:{source.get('line')}"}
    out["summary"] = summary(out)
    return out


def summary(explain: dict[str, Any]) -> str:
    """The explanation in one line (its `summary`, which `search --explain` prints)."""
    terms = ", ".join(f"{t['word']}→{t['term']} ({'/'.join(t['fields'])}, {t['score']:.2f})"
                      for t in explain["terms"]) or "no word"
    cov = explain["coverage"]
    parts = [f"score {explain['score']:.3f}", f"terms {terms}",
             f"coverage {cov['matched']}/{cov['words']} x{cov['factor']:.2f}",
             f"importance {explain['importance']['value']} x{explain['importance']['factor']:.2f}",
             f"freshness {explain['freshness']['grade']} x{explain['freshness']['factor']:.2f}"]
    if "date" in explain:
        date = explain["date"]
        hit = f"matched {date['matched']} (+{date['score']:.2f})" if date["matched"] else "no match"
        anchor = date.get("anchor")
        via = (f" (anchor {anchor['event']!r}: {anchor['id'] or anchor['at']} on {anchor['day']}"
               f" from its {anchor['from']})" if anchor else "")
        parts.append(f"date {date['asked']!r}{via} {date['span']} {hit}")
    if "neighbour" in explain:
        near = explain["neighbour"]
        parts.append(f"neighbour lift +{near['lift']:.3f} from {near['from'] or near['at']}")
    return "; ".join(parts)
