"""Working memory is graded in hours: `**Updated:**` is a field of each working section, the card
shows the age and grade, and never the raw field line."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from tests.support import Cli, git


def _age_stamps(gm: Cli, hours: int) -> None:
    path = gm.root / "workspaces" / "proj" / "working.md"
    stamp = (datetime.now() - timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M")
    path.write_text(re.sub(r"\*\*Updated:\*\* \S+", f"**Updated:** {stamp}", path.read_text()))


def test_updated_is_a_field_and_the_card_grades_it_in_hours(gm: Cli) -> None:
    assert gm("working", "--section", "Task", "--content", "Port the parser", workspace="proj").exit_code == 0
    assert gm("working", "--activity", "read the lexer", workspace="proj").exit_code == 0
    shown = gm.json("context", workspace="proj")
    assert isinstance(shown, dict)
    fresh = gm("context", workspace="proj").stdout
    assert "(updated 0h ago, fresh)" in fresh
    assert "**Updated:**" not in fresh and "Port the parser" in fresh and "read the lexer" in fresh
    _age_stamps(gm, 50)
    stale = gm("context", workspace="proj").stdout
    assert "(updated 50h ago, stale)" in stale
    assert "**Updated:**" not in stale and "Updated" not in stale.replace("updated 50h", "")
    _age_stamps(gm, 13)
    assert "(updated 13h ago, aging)" in gm("context", workspace="proj").stdout


def test_the_stamp_stays_a_field_through_a_rewrite_and_check(gm: Cli) -> None:
    gm("working", "--section", "Task", "--content", "First task", workspace="proj")
    gm("working", "--section", "Next steps", "--content", "- write tests", workspace="proj")
    gm("working", "--section", "Task", "--content", "Second task", workspace="proj")
    text = (gm.root / "workspaces" / "proj" / "working.md").read_text()
    assert text.count("**Updated:**") == 2  # one per section, replaced, never piled up
    assert gm("check").exit_code == 0
    assert git(gm.root, "status", "--porcelain") == ""
    card = gm("context", workspace="proj").stdout
    assert "Second task" in card and "First task" not in card and "**Updated:**" not in card
