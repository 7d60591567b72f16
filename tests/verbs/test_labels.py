"""Labels a person reads: one mark per fact about a hit, and a name for an entry with no Id yet."""

from __future__ import annotations

from gitmem.store.store import Store
from gitmem.verbs.entries import remember
from support import Cli


def test_an_expired_hit_is_labelled_once(store: Store, gm: Cli) -> None:
    remember(store, "Deploys run on Fridays", "semantic", topic="deploy", until="2020-01-01")
    result = gm("search", "fridays", "--all")
    assert result.exit_code == 0
    assert "Deploys run on Fridays [expired]" in result.output
    assert "expired, expired" not in result.output


def test_the_card_names_an_entry_without_an_id_by_where_it_is(store: Store, gm: Cli) -> None:
    remember(store, "Deploys use blue-green", "semantic", topic="deploy", importance="critical")
    path = store.root / "global" / "semantic" / "deploy.md"
    text = path.read_text(encoding="utf-8") + "\n## Deploys need a ticket\nBy hand.\n\n**Importance:** critical\n"
    path.write_text(text, encoding="utf-8")
    line = text.splitlines().index("## Deploys need a ticket") + 1
    card = gm("context").output
    assert f"- Deploys need a ticket [UNVERIFIED] (global/semantic/deploy.md:{line}, no Id yet)" in card
    assert "(None)" not in card


def test_list_and_search_name_an_entry_without_an_id_the_same_way(store: Store, gm: Cli) -> None:
    remember(store, "Deploys use blue-green", "semantic", topic="deploy")
    path = store.root / "global" / "semantic" / "deploy.md"
    text = path.read_text(encoding="utf-8") + "\n## Deploys need a ticket\nBy hand.\n"
    path.write_text(text, encoding="utf-8")
    line = text.splitlines().index("## Deploys need a ticket") + 1
    assert f"(global/semantic/deploy.md:{line}, no Id yet)  Deploys need a ticket" in gm("list").output
    assert "(no Id yet)  Deploys need a ticket" in gm("search", "ticket").output
