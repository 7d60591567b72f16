"""Partial words with capitals and joiners, through the real CLI: a compound typed in part
(`abbitMQ`, `dead-let`) finds the identifier it is part of, as a plain partial word does."""

from __future__ import annotations

import pytest

from tests.support import Cli

FACTS = {
    "queue": "Jobs go through RabbitMQ with a dead-letter queue for failed messages.",
    "parser": "The parseEntries function lives in src/gitmem/store.py next to deploy_review.",
    "plain": "Nightly builds publish artifacts to the internal mirror.",
}


@pytest.fixture
def ids(gm: Cli) -> dict[str, str]:
    return {name: gm("remember", text, "--layer", "semantic").stdout.strip() for name, text in FACTS.items()}


@pytest.mark.parametrize(("query", "fact"), [
    ("abbitMQ", "queue"), ("RabbitM", "queue"), ("abbitM", "queue"),  # capitals
    ("dead-let", "queue"), ("ead-lette", "queue"),  # hyphens
    ("arseEntr", "parser"), ("parseEnt", "parser"),  # camel case
    ("deploy_rev", "parser"), ("src/gitm", "parser"),  # underscores, paths
])
def test_a_compound_typed_in_part_finds_its_entry(gm: Cli, ids: dict[str, str], query: str, fact: str) -> None:
    hits = gm.json("search", query)
    assert isinstance(hits, list) and hits, query
    assert hits[0]["id"] == ids[fact]  # type: ignore[index]
    assert ids["plain"] not in [h["id"] for h in hits]  # type: ignore[index]


def test_whole_compounds_still_match_whole_and_nonsense_matches_nothing(gm: Cli, ids: dict[str, str]) -> None:
    assert gm.json("search", "RabbitMQ")[0]["id"] == ids["queue"]  # type: ignore[index]
    assert gm.json("search", "dead-letter")[0]["id"] == ids["queue"]  # type: ignore[index]
    missing = gm("search", "zqx-vvk")
    assert missing.exit_code == 1
    assert gm("search", "qzMQX").exit_code == 1
