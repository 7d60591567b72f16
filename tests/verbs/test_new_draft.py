"""`gitmem new` with an editor that saves bytes that are not UTF-8: one line, exit 2, nothing
recorded, and the draft kept where the line says, so nothing typed is lost."""

from __future__ import annotations

import sys
from pathlib import Path

from support import Cli, commit_count, git


def _editor(tmp_path: Path, data: bytes) -> str:
    script = tmp_path / "editor.py"
    script.write_text(f"import sys\nopen(sys.argv[1], 'ab').write({data!r})\n")
    return f"{sys.executable} {script}"


def test_a_draft_saved_as_latin1_is_refused_and_kept(gm: Cli, tmp_path: Path) -> None:
    before = commit_count(gm.root)
    editor = _editor(tmp_path, b"\n## Caf\xe9 opens at 8\nThe caf\xe9 downstairs.\n")
    result = gm("new", "--layer", "semantic", "--topic", "cafe", env={"EDITOR": editor, "VISUAL": ""})
    assert result.exit_code == 2 and "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "not UTF-8 text" in lines[0] and "internal error" not in lines[0]
    kept = Path(lines[0].rsplit("kept in ", 1)[1])
    assert kept.is_file() and b"Caf\xe9 opens at 8" in kept.read_bytes()
    assert commit_count(gm.root) == before
    assert not (gm.root / "global/semantic/cafe.md").exists()
    assert git(gm.root, "status", "--porcelain") == ""


def test_a_recorded_draft_leaves_no_draft_file(gm: Cli, tmp_path: Path) -> None:
    script = tmp_path / "good.py"
    script.write_text("import sys\np = sys.argv[1]\nt = open(p, encoding='utf-8').read()\n"
                      "open(p, 'w', encoding='utf-8').write(t.replace('## \\n', '## Opens at 8\\nThe cafe.\\n', 1))\n")
    result = gm("new", "--layer", "semantic", "--topic", "cafe",
                env={"EDITOR": f"{sys.executable} {script}", "VISUAL": ""})
    assert result.exit_code == 0, result.output
    assert list((gm.root / "state" / "drafts").glob("*.md")) == []
