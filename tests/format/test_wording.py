"""The one layer guesser (gitmem/format/wording.py): each rule, and their order."""

from __future__ import annotations

import pytest

from gitmem.format.wording import guess_layer, reads_as_lesson


@pytest.mark.parametrize(("text", "layer"), [
    ("We decided to use Postgres over MongoDB", "decisions"),
    ("Rationale: the queue keeps ordering", "decisions"),
    ("Lesson: never deploy on Fridays", "learnings"),
    ("It turned out the cache was stale", "learnings"),
    ("The outage happened on 2026-11-14", "episodic"),
    ("Yesterday the build broke twice", "episodic"),
    ("1. Run `make release`\n2. Tag the commit", "procedural"),
    ("- Always use pnpm in JavaScript projects", "procedural"),
    ("How to rotate the signing key", "procedural"),
    ("The API listens on port 8080", "semantic"),
    ("Die Station Kiruna liegt nördlich des Polarkreises", "semantic"),
])
def test_guess_layer(text: str, layer: str) -> None:
    assert guess_layer(text) == layer


def test_a_decision_wins_over_a_lesson_and_a_lesson_over_steps() -> None:
    assert guess_layer("We decided, after a mistake, to pin versions") == "decisions"
    assert guess_layer("- Always pin versions: we learned it the hard way") == "learnings"
    assert reads_as_lesson("gotcha: the clock drifts") and not reads_as_lesson("the clock")
