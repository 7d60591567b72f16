"""A global working.md left by an older gitmem: holding only the template it is retired by
`check --fix` (one commit, still in history); holding someone's text it is a hint and stays."""

from __future__ import annotations

import pytest

from gitmem.verbs.workfiles import WORKING_PREAMBLE
from tests.support import Cli, commit_count, git

TEMPLATES = {
    "preamble-and-empty-sections": WORKING_PREAMBLE.format(key="global")
    + "## Task\n\n**Updated:** 2025-01-01T10:00\n\n## Recent activity\n",
    "entry-template": "## {{title}}\nWhat you are in the middle of.\n\n**Updated:** {{now}}\n",
    "crlf-heading-only": "# Working memory — global\r\n\r\n## Task\r\n\r\n## Next steps\r\n- \r\n",
}


def _commit_by_hand(gm: Cli, text: str) -> None:
    (gm.root / "global" / "working.md").write_bytes(text.encode("utf-8"))
    git(gm.root, "add", "-A")
    git(gm.root, "commit", "-q", "-m", "an older gitmem")


@pytest.mark.parametrize("shape", sorted(TEMPLATES))
def test_a_template_only_global_working_file_is_retired(gm: Cli, shape: str) -> None:
    _commit_by_hand(gm, TEMPLATES[shape])
    found = gm("check")
    assert found.exit_code == 2 and "global/working.md:1: a global working.md holding only the template" in found.stdout
    before = commit_count(gm.root)
    fixed = gm("check", "--fix")
    assert fixed.exit_code == 0, fixed.output
    assert not (gm.root / "global" / "working.md").exists()
    assert commit_count(gm.root) == before + 1
    assert "global/working.md" in git(gm.root, "show", "--stat", "HEAD")
    assert git(gm.root, "status", "--porcelain") == ""
    assert TEMPLATES[shape].splitlines()[0] in git(gm.root, "show", "HEAD~1:global/working.md")  # nothing lost
    assert gm("check").exit_code == 0


def test_a_global_working_file_with_text_is_a_hint_and_stays(gm: Cli) -> None:
    text = WORKING_PREAMBLE.format(key="global") + "## Task\nMigrate the billing service to Postgres 16.\n"
    _commit_by_hand(gm, text)
    found = gm("check")
    assert found.exit_code == 0 and "working memory is per workspace" in found.stdout
    gm("check", "--fix")
    assert (gm.root / "global" / "working.md").read_text(encoding="utf-8") == text


def test_a_workspace_working_file_holding_only_the_template_stays(gm: Cli) -> None:
    assert gm("working", "--section", "Task", "--content", "Port the parser", workspace="proj").exit_code == 0
    path = gm.root / "workspaces" / "proj" / "working.md"
    path.write_text(WORKING_PREAMBLE.format(key="proj") + "## Task\n", encoding="utf-8")
    git(gm.root, "commit", "-q", "-am", "emptied by hand")
    assert gm("check", "--fix").exit_code == 0
    assert path.exists()
