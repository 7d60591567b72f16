"""`gitmem decision`: a settled choice in the fixed decision shape, and reading it back."""

from __future__ import annotations

import re

from gitmem.store.store import Store
from gitmem.verbs.base import WriteResult, check_text, safe_body
from gitmem.verbs.entries import remember

DECISION_SECTIONS = ("Context", "Rationale", "Alternatives considered", "Consequences")


def render_decision_body(
    context: str | None, rationale: str, alternatives: list[str], consequences: str | None
) -> str:
    """The body in the fixed shape (its secrets are looked for once, in the whole body)."""
    parts = []
    if context:
        parts.append(f"**Context:**\n{safe_body(_checked(context, 'context'))}")
    parts.append(f"**Rationale:**\n{safe_body(_checked(rationale, 'rationale'))}")
    if alternatives:
        items = "\n".join(f"- {' '.join(a.split())}" for a in alternatives if a.strip())
        parts.append(f"**Alternatives considered:**\n{items}")
    if consequences:
        parts.append(f"**Consequences:**\n{safe_body(_checked(consequences, 'consequences'))}")
    return "\n\n".join(parts)


def _checked(text: str, what: str) -> str:
    # Size and emptiness here; the secret scan runs once over the whole body in remember().
    return check_text(text, what, allow_secret=True)


def parse_decision_body(body: str) -> dict[str, str | list[str]]:
    """Read the fixed sections of a decision back into fields."""
    result: dict[str, str | list[str]] = {}
    pattern = re.compile(r"^\*\*(" + "|".join(DECISION_SECTIONS) + r"):\*\*[ \t]*$", re.MULTILINE)
    matches = list(pattern.finditer(body))
    for position, match in enumerate(matches):
        end = matches[position + 1].start() if position + 1 < len(matches) else len(body)
        content = body[match.end() : end].strip()
        name = match.group(1).lower().replace(" considered", "")
        if name == "alternatives":
            result[name] = [line[2:].strip() for line in content.splitlines() if line.startswith("- ")]
        else:
            result[name] = content
    return result


def decision(
    store: Store,
    statement: str,
    *,
    rationale: str,
    context: str | None = None,
    alternatives: list[str] | None = None,
    consequences: str | None = None,
    topic: str | None = None,
    importance: str | None = None,
    scope: str = "global",
    workspace: str | None = None,
    allow_secret: bool = False,
) -> WriteResult:
    """Record a settled choice with why it won, in the fixed decision shape."""
    heading = " ".join(check_text(statement, "decision", allow_secret=allow_secret).split())
    body = render_decision_body(context, rationale, alternatives or [], consequences)
    return remember(
        store, body, "decisions", topic=topic, title=heading, importance=importance,
        volatility="stable", scope=scope, workspace=workspace, verb="decision",
        allow_secret=allow_secret,
    )
