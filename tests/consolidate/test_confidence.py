"""The model's confidence per fact in the consolidation protocol: asked for in the prompt, read
from a line's brackets in any position after the importance or from JSON, absent = confident."""

from __future__ import annotations

import pytest

from gitmem.consolidate.prompt import INSTRUCTIONS
from gitmem.consolidate.protocol import confidence_of, parse_reply
from gitmem.consolidate.review import needs_review

DIGESTS = {"d1": "acme"}


def one(line: str):
    parsed = parse_reply(line + "\nDONE d1\n", "", DIGESTS)
    assert len(parsed.proposals) == 1, parsed.rejected
    return parsed.proposals[0]


def test_the_prompt_asks_for_a_confidence() -> None:
    assert "| <importance> | <confidence>]" in INSTRUCTIONS and "0.0" in INSTRUCTIONS


@pytest.mark.parametrize(("fields", "confidence", "volatility"), [
    ("high", None, None),  # an old reply: confident
    ("high | stable", None, "stable"),  # the old fifth field is still the volatility
    ("high | 0.4", 0.4, None),
    ("high | .4", 0.4, None),
    ("high | 40%", 0.4, None),
    ("high | confidence: 0.85 | volatile", 0.85, "volatile"),
    ("high | stable | 1", 1.0, "stable"),
    ("high | sure", None, None),  # unreadable: counts as confident
])
def test_a_line_may_carry_a_confidence(fields: str, confidence: float | None, volatility: str | None) -> None:
    proposal = one(f"- [d1 | global | semantic | {fields}] queue :: The worker acks after the commit.")
    assert proposal.confidence == confidence and proposal.volatility == volatility


def test_json_replies_carry_it_too() -> None:
    reply = ('{"entries": [{"digest": "d1", "layer": "semantic", "topic": "q", "text": "A fact.", '
             '"confidence": 0.3}], "done": ["d1"]}')
    assert parse_reply(reply, "", DIGESTS).proposals[0].confidence == 0.3


def test_out_of_range_values_are_no_confidence() -> None:
    assert confidence_of(-0.1) is None and confidence_of(150) is None and confidence_of(True) is None
    assert confidence_of("70") == 0.7 and confidence_of(0.7) == 0.7


@pytest.mark.parametrize(("rule", "confidence", "waits"), [
    ("off", 0.0, False), ("everything", 1.0, True), ("everything", None, True),
    (0.7, 0.69, True), (0.7, 0.7, False), (0.7, None, False), (0, 0.0, False), (1, 0.99, True),
])
def test_which_facts_wait(rule: str | float, confidence: float | None, waits: bool) -> None:
    assert needs_review(rule, confidence) is waits
