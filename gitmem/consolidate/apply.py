"""Writing what a model proposed through the normal write path (the verbs: dedup, ids, the
freshness guess), each fact attributed to where it came from."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gitmem.errors import GitmemError
from gitmem.secrets.mask import hide_secrets
from gitmem.verbs.base import WriteResult
from gitmem.verbs.decisions import render_decision_body
from gitmem.verbs.entries import codebase, remember

if TYPE_CHECKING:
    from gitmem.consolidate.protocol import Proposal
    from gitmem.store.store import Store

_BECAUSE = re.compile(r"\s+because\s+", re.IGNORECASE)


@dataclass
class Fact:
    """A fact to write, wherever it came from."""

    layer: str
    scope: str  # "global" or a workspace key
    topic: str
    text: str
    importance: str = "normal"
    volatility: str | None = None
    source: str | None = None
    supersedes: str | None = None


def split_decision(text: str) -> tuple[str, str]:
    """(the decision, its rationale) from one line: "X because Y", or "X. Y", else X twice."""
    parts = _BECAUSE.split(text.strip(), maxsplit=1)
    if len(parts) == 2 and parts[0] and parts[1]:
        return parts[0].rstrip(" .,;"), parts[1][0].upper() + parts[1][1:]
    first, sep, rest = text.strip().partition(". ")
    if sep and rest.strip():
        return first, rest.strip()
    return text.strip().rstrip("."), text.strip()


def write_fact(store: Store, fact: Fact) -> WriteResult:
    """Write one fact with the verb its layer uses. Raises GitmemError when the write is refused."""
    scope = "global" if fact.scope == "global" else "workspace"
    workspace = None if fact.scope == "global" else fact.scope
    if fact.layer == "codebase" and not fact.supersedes:
        return codebase(store, fact.topic, fact.text, importance=fact.importance,
                        workspace=workspace, source=fact.source)
    if fact.layer == "decisions":
        statement, rationale = split_decision(fact.text)
        return remember(store, render_decision_body(None, rationale, [], None), "decisions",
                        topic=fact.topic, title=statement, importance=fact.importance,
                        volatility="stable", source=fact.source, supersedes=fact.supersedes,
                        scope=scope, workspace=workspace, verb="decision")
    return remember(store, fact.text, fact.layer, topic=fact.topic, importance=fact.importance,
                    volatility=fact.volatility, source=fact.source, supersedes=fact.supersedes,
                    scope=scope, workspace=workspace)


def write_proposals(store: Store, proposals: list[Proposal]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Write every proposal (the caller holds a batch); (written, failed) — one refusal never
    stops the others."""
    written: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for proposal in proposals:
        fact = Fact(proposal.layer, proposal.scope, proposal.topic, proposal.text,
                    proposal.importance, proposal.volatility, f"digest:{proposal.digest}")
        try:
            result = write_fact(store, fact)
        except GitmemError as exc:
            # A refused fact is reported masked: the reason names what the gate found.
            failed.append({"digest": proposal.digest, "text": hide_secrets(proposal.text)[:200],
                           "reason": hide_secrets(str(exc))})
            continue
        written.append({"id": result.id, "digest": proposal.digest, "layer": proposal.layer,
                        "scope": proposal.scope, "topic": proposal.topic, "changed": result.changed,
                        "note": result.note})
    return written, failed
