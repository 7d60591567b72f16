"""A likely secret reaches no commit through a field a verb forgot to check, a JSON escape, or a
refusal that had already changed git's config: names (branches, source paths, sessions, a remote's
URL and branch) are refused always, and every write takes one last look at the lines it adds."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import Result
from importfixtures import stage

from fixtures.tokens import SHAPES
from gitmem.errors import InvalidInputError
from gitmem.store.store import Store
from gitmem.verbs.entries import codebase as record_codebase
from support import Cli, commit_count, git, run_gitmem

TOKEN = next(s for s in SHAPES if s.name == "GitHub classic token").secret
SLACK = next(s for s in SHAPES if s.name.startswith("Slack bot")).secret


def _unchanged(root: Path, commits: int) -> None:
    assert commit_count(root) == commits and git(root, "status", "--porcelain") == ""
    assert TOKEN not in git(root, "log", "-p", "--all") and SLACK not in git(root, "log", "-p", "--all")


def _refused(result: Result, root: Path, commits: int, *, way_out: str = "Remove it and try again") -> None:
    output = result.output
    assert result.exit_code == 2, output
    assert "holds a likely secret" in output and way_out in output, output
    assert TOKEN not in output and SLACK not in output
    _unchanged(root, commits)


def test_names_holding_a_token_are_refused_even_with_allow_secret(gm: Cli, tmp_path: Path) -> None:
    before = commit_count(gm.root)
    for args in (("runtime", "add", "A harmless item", "--branch", TOKEN),
                 ("runtime", "add", "A harmless item", "--branch", TOKEN, "--allow-secret")):
        _refused(gm(*args), gm.root, before)
    source = tmp_path / "runbook.md"
    source.write_text("# Runbook\n\nDrain the queue first.\n")
    for extra in (("--source-path", TOKEN), ("--session", TOKEN), ("--session", TOKEN, "--allow-secret")):
        _refused(gm("doc", "add", str(source), "--title", "Runbook", "--scope", "global", *extra),
                 gm.root, before)


def test_a_refused_remote_or_branch_changes_nothing_in_git(gm: Cli, bare_remote: Path) -> None:
    assert gm("remote", "set", str(bare_remote)).exit_code == 0
    before, url = commit_count(gm.root), git(gm.root, "config", "remote.origin.url")
    branches = git(gm.root, "branch", "--list")
    for args in (("config", "set", "git.branch", TOKEN), ("remote", "set", str(bare_remote), "--branch", TOKEN),
                 ("remote", "set", f"https://git.example.com/{TOKEN}/memory.git")):
        _refused(gm(*args), gm.root, before)
        assert git(gm.root, "config", "remote.origin.url") == url
        assert git(gm.root, "branch", "--list") == branches
        assert TOKEN not in (gm.root / ".git" / "config").read_text()


def test_the_last_look_refuses_a_field_no_verb_checked(store: Store) -> None:
    """A library caller's field that its verb passes through unchecked (the codebase entry's
    source): the write is refused before it commits, its files put back."""
    before = commit_count(store.root)
    with pytest.raises(InvalidInputError) as refused:
        record_codebase(store, "api", "The API layer.", workspace="proj", source=TOKEN)
    assert "holds a likely secret" in str(refused.value) and TOKEN not in str(refused.value)
    _unchanged(store.root, before)
    assert not (store.root / "workspaces" / "proj").exists()
    assert record_codebase(store, "api", "The API layer.", workspace="proj", source=TOKEN,
                           allow_secret=True).id


def test_a_hand_edit_of_a_json_file_cannot_hide_a_token_in_an_escape(gm: Cli) -> None:
    assert gm("runtime", "add", "Deploys go out at noon").exit_code == 0
    records = gm.root / "global/runtime/memories.json"
    data = json.loads(records.read_text())
    item = dict(data["items"][0], id="rt-0badc0de", content="bot: \\u" + f"{ord(SLACK[0]):04x}" + SLACK[1:])
    text = records.read_text().rstrip().rstrip("}").rstrip().rstrip("]").rstrip()
    records.write_text(text + ",\n" + json.dumps(item).replace("\\\\u", "\\u") + "\n]}\n")
    assert SLACK in json.loads(records.read_text())["items"][-1]["content"]  # as JSON reads it
    before = commit_count(gm.root)
    refused = gm("remember", "An unrelated fact", "--layer", "semantic")
    assert refused.exit_code == 2 and "memories.json" in refused.output and SLACK not in refused.output
    assert commit_count(gm.root) == before and SLACK not in git(gm.root, "log", "-p", "--all")


def test_an_import_of_json_cannot_hide_a_token_in_an_escape(gm: Cli, tmp_path: Path) -> None:
    export = stage("mem0", tmp_path) / "export.json"
    escaped = "\\u" + f"{ord(TOKEN[0]):04x}" + TOKEN[1:]
    export.write_text(export.read_text(encoding="utf-8").replace(
        "avoids mushrooms", f"avoids mushrooms; CI token {escaped}").replace(
        "lives in Zürich", "db at postgres:\\/\\/admin:Pw3xq9zzK@db.internal:5432\\/app"), encoding="utf-8")
    before = commit_count(gm.root)
    result = gm("import", "mem0", str(export))
    assert result.exit_code == 2 and "holds a likely secret" in result.output, result.output
    assert "(and 1 more)" in result.output and TOKEN not in result.output
    _unchanged(gm.root, before)


def test_check_lists_a_hand_edited_secret_and_fix_leaves_that_file_uncommitted(gm: Cli) -> None:
    """`check` names the line (exit 2); `check --fix` normalizes the other files and leaves the
    one holding the secret as it is, uncommitted, as every other write does."""
    assert gm("remember", "Some fact", "--layer", "semantic", "--topic", "creds").exit_code == 0
    assert gm("remember", "Other fact", "--layer", "semantic", "--topic", "notes").exit_code == 0
    creds, notes = gm.root / "global/semantic/creds.md", gm.root / "global/semantic/notes.md"
    with creds.open("a") as handle:
        handle.write(f"\n## Deploy token\nCI pushes with {TOKEN}\n")
    with notes.open("a") as handle:
        handle.write("\n## Appended by hand\nNo Id yet.\n")
    checked = gm("check")
    assert checked.exit_code == 2 and "global/semantic/creds.md:" in checked.output
    assert "holds a likely secret (GitHub Token)" in checked.output and TOKEN not in checked.output
    fixed = gm("check", "--fix")
    assert fixed.exit_code == 2 and TOKEN not in fixed.output
    assert "global/semantic/creds.md" in git(gm.root, "status", "--porcelain")
    assert TOKEN not in git(gm.root, "log", "-p", "--all")
    assert "No Id yet.\n\n**Id:** global-sem-" in git(gm.root, "show", "HEAD:global/semantic/notes.md")


def test_a_file_named_by_hand_after_a_token_is_not_committed(gm: Cli) -> None:
    """`--topic TOKEN` is refused; a file so named by hand is refused by the next write and by a
    plain commit through the hooks, and its name never reaches a commit."""
    assert gm("hooks", "install").exit_code == 0
    named = gm.root / "global/semantic" / f"{TOKEN}.md"
    named.parent.mkdir(parents=True, exist_ok=True)
    named.write_text("# notes\n\n## Harmless\nNothing secret in here.\n")
    before = commit_count(gm.root)
    refused = gm("remember", "An unrelated fact", "--layer", "semantic", "--topic", "other")
    assert refused.exit_code == 2 and "holds a likely secret" in refused.output and TOKEN not in refused.output
    git(gm.root, "add", "-A")
    plain = subprocess.run(["git", "commit", "-qm", "notes"], cwd=gm.root, capture_output=True, text=True)
    assert plain.returncode != 0 and "its name holds a likely secret" in plain.stderr and TOKEN not in plain.stderr
    assert commit_count(gm.root) == before and TOKEN not in git(gm.root, "log", "--all", "--name-only")


def test_the_store_s_saved_git_token_is_refused_in_a_later_process(gm: Cli, bare_remote: Path) -> None:
    """A 40-digit hex token reads as a commit hash to every rule: the token `remote set` saved in
    state/git-token is looked for verbatim by every later write, not only in the process that
    saved it."""
    token = "9f2c41d0e8b7a6c5d4e3f2a1b0c9d8e7f6a5b4c3"
    assert gm("remote", "set", f"https://dana:{token}@git.example.com/dana/memory.git").exit_code == 0
    assert token in (gm.root / "state/git-token").read_text()
    before = commit_count(gm.root)
    done = run_gitmem("--root", str(gm.root), "remember", f"Backups push with GITEA_TOKEN={token}",
                      "--layer", "semantic", env={"GITMEM_SERVE": "off"})
    assert done.returncode == 2 and "the git token of this store" in done.stderr and token not in done.stderr
    assert commit_count(gm.root) == before and token not in git(gm.root, "log", "-p", "--all")
