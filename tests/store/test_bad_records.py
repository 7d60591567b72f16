"""A record file that is valid JSON but holds a record its reader refuses (a runtime item with no
text, a document whose file name leaves its folder) is judged as its reader judges it: `check`
lists it (exit 2), and writes leave it uncommitted instead of committing what no reader takes."""

from __future__ import annotations

import json
from pathlib import Path

from support import Cli, git


def _edit(path: Path, change: dict[str, object]) -> None:
    data = json.loads(path.read_text())
    key = "items" if "items" in data else "documents"
    data[key][0].update(change)
    path.write_text(json.dumps(data, indent=2) + "\n")


def test_a_record_its_reader_refuses_is_listed_and_left_uncommitted(gm: Cli, tmp_path: Path) -> None:
    assert gm("runtime", "add", "Deploys go out at noon").exit_code == 0
    source = tmp_path / "runbook.md"
    source.write_text("# Runbook\n\nDrain the queue.\n")
    assert gm("doc", "add", str(source), "--title", "Runbook", "--scope", "global").exit_code == 0
    records, index = gm.root / "global/runtime/memories.json", gm.root / "global/documents/index.json"
    _edit(records, {"content": None})
    _edit(index, {"filename": "../../evil.md"})
    checked = gm("check")
    assert checked.exit_code == 2
    assert "global/runtime/memories.json:" in checked.output and "has no text `content`" in checked.output
    assert "global/documents/index.json:" in checked.output and "'../../evil.md'" in checked.output
    done = gm("remember", "An unrelated fact", "-l", "semantic")
    assert done.exit_code == 0 and "left uncommitted" in done.output
    dirty = git(gm.root, "status", "--porcelain")
    assert "global/runtime/memories.json" in dirty and "global/documents/index.json" in dirty
    assert "evil" not in git(gm.root, "log", "-p", "--all")
