"""Writing through plain git and an editor: hooks installed into a real store, driven by the real
git binary in a subprocess whose PATH does not hold gitmem's virtualenv."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from gitmem.cli.hooks import hook, hooks, new
from gitmem.cli.main import cli, every_command
from gitmem.githooks import install as hooklib
from gitmem.githooks import run as hookrun
from gitmem.store.store import Store
from support import GIT_ENV, commit_count, git

TOPIC = "global/procedural/deploy.md"
FIRST = "Deploys go through staging first"


def _wired() -> click.Group:
    """The gitmem CLI with the hooks, new and hook commands (whether or not cli.py adds them yet)."""
    commands = {**every_command(), "hooks": hooks, "new": new, "hook": hook}
    return type(cli)(name=cli.name, params=cli.params, callback=cli.callback, commands=commands)


WIRED = _wired()


def gm(root: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(WIRED, ["--root", str(root), *args], env=env, catch_exceptions=False)


def bare_env(home: Path) -> dict[str, str]:
    """What an agent's shell might have: git on PATH, no virtualenv, no gitmem."""
    git_dir = str(Path(shutil.which("git") or "/usr/bin/git").parent)
    path = os.pathsep.join(dict.fromkeys([git_dir, "/usr/bin", "/bin"]))
    return {"PATH": path, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "LANG": "C.UTF-8", **GIT_ENV}


def sh_git(root: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The real git binary, run the way an agent runs it."""
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, input=stdin,
                          env=bare_env(Path(os.environ["HOME"])))


def append(root: Path, relpath: str, text: str) -> None:
    target = root / relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "a", encoding="utf-8", newline="") as handle:
        handle.write(text)


@pytest.fixture
def root(store: Store) -> Path:
    """A store with one entry and the hooks installed."""
    assert gm(store.root, "remember", FIRST, "-l", "procedural", "-t", "deploy").exit_code == 0
    result = gm(store.root, "hooks", "install")
    assert result.exit_code == 0, result.output
    return store.root


# -- install / status / uninstall ---------------------------------------------------------------
def test_install_writes_every_hook_with_this_interpreter_and_the_merge_driver(root: Path) -> None:
    folder = root / ".git" / "hooks"
    for name in hooklib.HOOK_NAMES:
        script = (folder / name).read_text()
        assert hooklib.MARKER in script and sys.executable in script
        assert os.access(folder / name, os.X_OK)
        assert not (folder / (name + hooklib.CHAINED_SUFFIX)).exists()
    driver = git(root, "config", "--get", "merge.gitmem.driver").strip()
    assert driver == f"{sys.executable} -m gitmem --root {root} merge-driver %O %A %B %P"
    assert git(root, "config", "--get", "merge.gitmem.name").strip()
    assert "merge=gitmem" in (root / ".gitattributes").read_text()
    status = json.loads(gm(root, "hooks", "status", "--json").stdout)
    assert {h["state"] for h in status["hooks"]} == {"installed"} and status["driver_ok"]


def test_install_is_idempotent(root: Path) -> None:
    folder = root / ".git" / "hooks"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert gm(root, "hooks", "install").exit_code == 0
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert git(root, "status", "--porcelain") == ""


def test_existing_user_hook_still_runs_and_uninstall_restores_it(store: Store) -> None:
    root = store.root
    folder = root / ".git" / "hooks"
    folder.mkdir(parents=True, exist_ok=True)
    user_hook = "#!/bin/sh\necho ran >> \"$(git rev-parse --git-dir)/user-hook-ran\"\nexit ${USER_HOOK_EXIT:-0}\n"
    (folder / "pre-commit").write_text(user_hook)
    (folder / "pre-commit").chmod(0o755)
    assert gm(root, "hooks", "install").exit_code == 0
    assert (folder / "pre-commit.gitmem-chained").read_text() == user_hook
    assert gm(root, "hooks", "install").exit_code == 0  # still one chained copy, not ours
    assert (folder / "pre-commit.gitmem-chained").read_text() == user_hook

    append(root, "global/semantic/tools.md", "## Use uv\nInstalls go through uv.\n")
    sh_git(root, "add", "global/semantic/tools.md")
    done = sh_git(root, "commit", "-q", "-m", "by hand")
    assert done.returncode == 0, done.stderr
    assert (root / ".git" / "user-hook-ran").read_text() == "ran\n"
    assert "**Id:** global-sem-0001" in git(root, "show", "HEAD:global/semantic/tools.md")

    append(root, "global/semantic/tools.md", "\n## Pin ruff\nRuff is pinned.\n")
    env = {**bare_env(Path(os.environ["HOME"])), "USER_HOOK_EXIT": "3"}
    refused = subprocess.run(["git", "commit", "-qam", "refused"], cwd=root, env=env,
                             capture_output=True, text=True)
    assert refused.returncode != 0
    assert git(root, "log", "-1", "--format=%s").strip() == "by hand"

    assert gm(root, "hooks", "uninstall").exit_code == 0
    assert (folder / "pre-commit").read_text() == user_hook
    assert not (folder / "pre-commit.gitmem-chained").exists()
    assert not (folder / "post-commit").exists()
    assert git(root, "config", "--get", "merge.gitmem.driver", check=False) == ""
    status = json.loads(gm(root, "hooks", "status", "--json").stdout)
    assert {h["name"]: h["state"] for h in status["hooks"]}["pre-commit"] == "foreign"


def test_install_never_overwrites_silently(root: Path) -> None:
    folder = root / ".git" / "hooks"
    (folder / "post-merge").write_text("#!/bin/sh\necho mine\n")
    (folder / "post-merge.gitmem-chained").write_text("#!/bin/sh\necho older\n")
    result = gm(root, "hooks", "install")
    assert result.exit_code == 2 and "post-merge" in result.stderr
    assert (folder / "post-merge").read_text() == "#!/bin/sh\necho mine\n"


def test_uninstall_restores_a_merge_driver_config_that_was_there(store: Store) -> None:
    git(store.root, "config", "merge.gitmem.driver", "my-own-driver %O %A %B")
    assert gm(store.root, "hooks", "install").exit_code == 0
    assert gm(store.root, "hooks", "install").exit_code == 0
    assert gm(store.root, "hooks", "uninstall").exit_code == 0
    assert git(store.root, "config", "--get", "merge.gitmem.driver").strip() == "my-own-driver %O %A %B"
    assert git(store.root, "config", "--get", "merge.gitmem.name", check=False) == ""


# -- pre-commit ---------------------------------------------------------------------------------
def test_commit_am_assigns_the_id_and_regenerates_the_layer_index(root: Path) -> None:
    before = (root / TOPIC).read_text()
    append(root, TOPIC, "\n## Roll back with the previous tag\nRedeploy the tag before the broken one.\n")
    done = sh_git(root, "commit", "-q", "-am", "rollback how-to")
    assert done.returncode == 0, done.stderr
    assert "assigned global-pro-0002" in done.stderr
    committed = git(root, "show", f"HEAD:{TOPIC}")
    assert committed.startswith(before)  # the untouched entry keeps its bytes
    new_part = committed[len(before):]
    assert "**Id:** global-pro-0002" in new_part and "**Created:** " in new_part
    assert "[deploy](procedural/deploy.md) — 2 entries" in git(root, "show", "HEAD:global/procedural.md")
    assert set(git(root, "show", "--name-only", "--format=", "HEAD").split()) == {
        TOPIC, "global/procedural.md", "SYSTEM.md"}  # SYSTEM.md's counts follow the commit
    assert "| global | procedural | 1 | 2 |" in git(root, "show", "HEAD:SYSTEM.md")
    assert git(root, "status", "--porcelain") == ""
    assert (root / TOPIC).read_text() == committed


def test_search_finds_a_committed_entry_without_reindex(root: Path) -> None:
    first = gm(root, "search", "staging", "--json")
    assert first.exit_code == 0, first.output
    append(root, TOPIC, "\n## Roll back with the previous tag\nRedeploy the tag before the broken one.\n")
    done = sh_git(root, "commit", "-q", "-am", "rollback how-to")
    assert done.returncode == 0, done.stderr
    from gitmem.search.index import SearchIndex

    assert SearchIndex(root).refresh() == []  # post-commit already indexed the change
    found = gm(root, "search", "redeploy", "--json")
    assert found.exit_code == 0, found.output
    assert "global-pro-0002" in found.stdout


def test_a_new_topic_file_written_by_hand(root: Path) -> None:
    append(root, "global/learnings/pytest.md", "# pytest\n\n## Run with -q\nQuieter output.\n")
    assert sh_git(root, "add", "global/learnings/pytest.md").returncode == 0
    done = sh_git(root, "commit", "-q", "-m", "lesson")
    assert done.returncode == 0, done.stderr
    assert "**Id:** global-lrn-0001" in git(root, "show", "HEAD:global/learnings/pytest.md")
    assert "(learnings/pytest.md) — 1 entry" in git(root, "show", "HEAD:global/learnings.md")
    assert git(root, "status", "--porcelain") == ""


def test_two_new_files_in_one_commit_get_distinct_ids(root: Path) -> None:
    append(root, "global/semantic/a.md", "## A fact\nalpha\n")
    append(root, "global/semantic/b.md", "## B fact\nbeta\n\n## C fact\ngamma\n")
    sh_git(root, "add", "global")
    assert sh_git(root, "commit", "-q", "-m", "two").returncode == 0
    ids = [line for name in ("a", "b") for line in git(root, "show", f"HEAD:global/semantic/{name}.md").splitlines()
           if line.startswith("**Id:**")]
    assert sorted(ids) == [f"**Id:** global-sem-000{n}" for n in (1, 2, 3)]


@pytest.mark.parametrize(("text", "reason"), [
    ("\n## Copy\nText.\n\n**Id:** global-pro-0001\n", "duplicate Id global-pro-0001"),
    ("\n## Typo\nText.\n\n**Id:** global-pro-00x1\n", "malformed Id 'global-pro-00x1'"),
    ("\n## Twice\nText.\n\n**Id:** global-pro-0007\n**Id:** global-pro-0008\n", "second Id line"),
    ("\n<<<<<<< ours\n## Left\nl\n=======\n## Right\nr\n>>>>>>> theirs\n", "conflict marker"),
])
def test_a_malformed_entry_refuses_the_commit_with_file_and_line(root: Path, text: str, reason: str) -> None:
    head = git(root, "rev-parse", "HEAD")
    lines_before = (root / TOPIC).read_text().count("\n")
    append(root, TOPIC, text)
    done = sh_git(root, "commit", "-q", "-am", "bad")
    assert done.returncode != 0
    first = done.stderr.splitlines()[0]
    path, line, message = first.split(":", 2)
    assert path == TOPIC and int(line) > lines_before and reason in message
    assert git(root, "rev-parse", "HEAD") == head
    assert (root / TOPIC).read_text().endswith(text)  # nothing the person wrote was touched


@pytest.mark.parametrize(("text", "reason"), [
    ("\n## Urgent thing\nText.\n\n**Importance:** urgent\n", "bad Importance 'urgent'"),
    ("\n## Shaky thing\nText.\n\n**Volatility:** sometimes\n", "bad Volatility 'sometimes'"),
])
def test_a_value_gitmem_does_not_know_is_a_hint_not_a_refusal(root: Path, text: str, reason: str) -> None:
    append(root, TOPIC, text)
    done = sh_git(root, "commit", "-q", "-am", "odd value")
    assert done.returncode == 0, done.stderr
    assert f"gitmem: hint: {TOPIC}:" in done.stderr and reason in done.stderr
    assert git(root, "status", "--porcelain") == ""


def test_a_symlink_or_a_binary_file_refuses_the_commit(root: Path) -> None:
    os.symlink("deploy.md", root / "global/procedural/link.md")
    append(root, "global/procedural/blob.md", "## A\nok\n\x00binary\n")
    sh_git(root, "add", "global/procedural/link.md", "global/procedural/blob.md")
    done = sh_git(root, "commit", "-q", "-m", "bad")
    assert done.returncode != 0
    assert "global/procedural/blob.md:3: binary file" in done.stderr
    assert "global/procedural/link.md:1: not a regular file (a symbolic link)" in done.stderr


def test_text_outside_any_entry_is_kept_with_a_hint(root: Path) -> None:
    append(root, "global/semantic/notes.md", "just a line without a heading\n")
    sh_git(root, "add", "global/semantic/notes.md")
    done = sh_git(root, "commit", "-q", "-m", "note")
    assert done.returncode == 0, done.stderr
    assert "gitmem: hint: global/semantic/notes.md:1: text outside any entry" in done.stderr
    assert (root / "global/semantic/notes.md").read_text() == "just a line without a heading\n"


def test_entries_in_a_generated_layer_index_refuse_the_commit(root: Path) -> None:
    append(root, "global/procedural.md", "\n## Written into the index\nThis would be lost.\n")
    done = sh_git(root, "commit", "-q", "-am", "bad")
    assert done.returncode != 0 and done.stderr.startswith("global/procedural.md:")
    assert "generated layer index" in done.stderr


def test_partially_staged_file_commits_the_staged_part_and_keeps_the_rest(root: Path) -> None:
    append(root, TOPIC, "\n## Staged entry\nStaged text.\n")
    sh_git(root, "add", TOPIC)
    append(root, TOPIC, "\n## Unstaged entry\nStill being written.\n")
    done = sh_git(root, "commit", "-q", "-m", "partial")
    assert done.returncode == 0, done.stderr
    committed = git(root, "show", f"HEAD:{TOPIC}")
    assert "## Staged entry" in committed and "**Id:** global-pro-0002" in committed
    assert "Unstaged entry" not in committed
    work = (root / TOPIC).read_text()
    assert work.startswith(committed) and work.endswith("## Unstaged entry\nStill being written.\n")
    assert git(root, "diff", "--cached") == ""


@pytest.mark.parametrize("replacement", ["folder", "fifo"])
def test_a_staged_file_whose_working_copy_became_a_folder_or_fifo_commits_the_staged_copy(
        root: Path, replacement: str) -> None:
    append(root, TOPIC, "\n## Staged before the swap\nStaged text.\n")
    sh_git(root, "add", TOPIC)
    (root / TOPIC).unlink()
    if replacement == "folder":
        (root / TOPIC).mkdir()
    else:
        os.mkfifo(root / TOPIC)
    done = subprocess.run(["git", "commit", "-q", "-m", "swapped"], cwd=root, capture_output=True,
                          text=True, timeout=60, env=bare_env(Path(os.environ["HOME"])))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "not a regular file" in done.stderr
    committed = git(root, "show", f"HEAD:{TOPIC}")
    assert "## Staged before the swap" in committed and "**Id:** global-pro-0002" in committed


def test_commit_of_named_paths_leaves_a_clean_tree(root: Path) -> None:
    append(root, TOPIC, "\n## Named path commit\nCommitted with git commit -- path.\n")
    done = sh_git(root, "commit", "-q", "-m", "only this", "--", TOPIC)
    assert done.returncode == 0, done.stderr
    assert "**Id:** global-pro-0002" in git(root, "show", f"HEAD:{TOPIC}")
    assert git(root, "status", "--porcelain") == ""


def test_commits_without_memory_files_are_left_alone(root: Path) -> None:
    (root / "notes.txt").write_text("not memory\n")
    sh_git(root, "add", "notes.txt")
    done = sh_git(root, "commit", "-q", "-m", "plain")
    assert done.returncode == 0 and done.stderr == ""


def test_hook_runs_without_the_virtualenv_on_path(root: Path) -> None:
    env = bare_env(Path(os.environ["HOME"]))
    assert str(Path(sys.executable).parent) not in env["PATH"].split(os.pathsep)
    append(root, TOPIC, "\n## No venv\nThe hook finds its interpreter.\n")
    done = subprocess.run(["git", "commit", "-q", "-am", "no venv"], cwd=root, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "**Id:** global-pro-0002" in git(root, "show", f"HEAD:{TOPIC}")


# -- post-* hooks -------------------------------------------------------------------------------
def test_changed_files_for_each_post_hook(root: Path) -> None:
    env = {"GITMEM_HOOKS": "0"}
    head0 = git(root, "rev-parse", "HEAD").strip()
    append(root, "global/semantic/a.md", "## A\nalpha\n")
    git(root, "add", "global/semantic/a.md")
    subprocess.run(["git", "commit", "-qm", "a"], cwd=root, env={**os.environ, **env, **GIT_ENV}, check=True)
    head1 = git(root, "rev-parse", "HEAD").strip()
    assert hookrun.changed_files(root, "post-commit", []) == ["global/semantic/a.md"]
    assert hookrun.changed_files(root, "post-checkout", [head0, head1, "1"]) == ["global/semantic/a.md"]
    assert hookrun.changed_files(root, "post-checkout", [head1, head1, "0"]) == []
    git(root, "update-ref", "ORIG_HEAD", head0)
    assert hookrun.changed_files(root, "post-merge", ["0"]) == ["global/semantic/a.md"]
    assert hookrun.changed_files(root, "post-rewrite", ["amend"], f"{head0} {head1}\n") == [
        "global/semantic/a.md"]


def test_post_hook_updates_an_existing_index_with_the_changed_files(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []
    monkeypatch.setattr(Store, "update_search_index", lambda self, paths: seen.append(list(paths)))
    append(root, TOPIC, "\n## X\nx\n")
    subprocess.run(["git", "commit", "-qam", "x"], cwd=root, check=True,
                   env={**os.environ, "GITMEM_HOOKS": "0", **GIT_ENV})
    assert hookrun.post_hook(root, "post-commit", []) == 0
    assert seen == []  # no index: nothing to keep current
    (root / "index").mkdir()
    assert hookrun.post_hook(root, "post-commit", []) == 0
    assert seen == [[TOPIC]]


def test_post_hook_failure_never_fails_git_and_is_logged(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(self: Store, paths: list[str]) -> None:
        raise RuntimeError("index broken")

    monkeypatch.setattr(Store, "update_search_index", boom)
    (root / "index").mkdir()
    assert hookrun.post_hook(root, "post-commit", []) == 0
    record = json.loads((root / "logs" / "memory.log").read_text().splitlines()[-1])
    assert record["hook"] == "post-commit" and "index broken" in record["error"]


def test_post_checkout_keeps_the_chained_hooks_exit_status(root: Path) -> None:
    folder = root / ".git" / "hooks"
    (folder / "post-checkout.gitmem-chained").write_text("#!/bin/sh\nexit ${CHAINED_EXIT:-0}\n")
    (folder / "post-checkout.gitmem-chained").chmod(0o755)
    (root / "index").mkdir()
    assert sh_git(root, "checkout", "-q", "-b", "other").returncode == 0
    env = {**bare_env(Path(os.environ["HOME"])), "CHAINED_EXIT": "3"}
    done = subprocess.run(["git", "checkout", "-q", "main"], cwd=root, env=env, capture_output=True)
    assert done.returncode != 0  # git reports the failing chained hook, as it would without gitmem


def test_amend_is_normalized_and_reindexed_without_failures(root: Path) -> None:
    from gitmem.search.index import SearchIndex

    SearchIndex(root).rebuild()
    append(root, TOPIC, "\n## First draft\nWritten in a hurry.\n")
    assert sh_git(root, "commit", "-q", "-am", "draft").returncode == 0
    append(root, TOPIC, "\n## Second thought\nAdded on amend.\n")
    done = sh_git(root, "commit", "-q", "--amend", "-am", "draft, amended")
    assert done.returncode == 0, done.stderr
    committed = git(root, "show", f"HEAD:{TOPIC}")
    assert "**Id:** global-pro-0002" in committed and "**Id:** global-pro-0003" in committed
    assert SearchIndex(root).refresh() == []
    events = [json.loads(line) for line in (root / "logs" / "memory.log").read_text().splitlines()]
    hook_runs = [e for e in events if e["event"] == "hook"]
    assert not [e for e in events if e["event"] == "hook-failed"]
    assert hook_runs and all(e["exit"] == 0 for e in hook_runs)
    assert {"pre-commit", "post-commit", "post-rewrite"} <= {e["hook"] for e in hook_runs}


# -- plain git pull with the merge driver -------------------------------------------------------
def test_plain_git_pull_merges_concurrent_entries_entry_by_entry(
        tmp_path: Path, root: Path, bare_remote: Path) -> None:
    git(root, "remote", "add", "origin", str(bare_remote))
    assert sh_git(root, "push", "-q", "origin", "main").returncode == 0
    other = tmp_path / "clone"
    assert sh_git(tmp_path, "clone", "-q", str(bare_remote), str(other)).returncode == 0
    assert gm(other, "hooks", "install").exit_code == 0

    append(root, TOPIC, "\n## Alpha from machine one\nWritten on machine one.\n")
    assert sh_git(root, "commit", "-qam", "alpha").returncode == 0
    assert sh_git(root, "push", "-q", "origin", "main").returncode == 0

    append(other, TOPIC, "\n## Beta from machine two\nWritten on machine two.\n")
    assert sh_git(other, "commit", "-qam", "beta").returncode == 0
    pulled = sh_git(other, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    merged = (other / TOPIC).read_text()
    assert "<<<<<<<" not in merged and ">>>>>>>" not in merged
    assert FIRST in merged and "Alpha from machine one" in merged and "Beta from machine two" in merged
    ids = [line for line in merged.splitlines() if line.startswith("**Id:**")]
    assert len(ids) == 3 and len(set(ids)) == 3  # the id both machines allocated is renumbered once
    assert len(git(other, "rev-list", "--parents", "-1", "HEAD").split()) == 3  # a merge commit


# -- hand edits and gitmem new ------------------------------------------------------------------
def test_hand_edit_then_remember_makes_two_commits_the_first_exactly_the_edit(root: Path) -> None:
    before = commit_count(root)
    edited = (root / TOPIC).read_text().replace("Deploys go through staging first\n\n",
                                               "Deploys go through staging first, always.\n\n", 1)
    assert edited != (root / TOPIC).read_text()
    (root / TOPIC).write_text(edited)
    result = gm(root, "remember", "Tags are signed", "-l", "procedural", "-t", "release")
    assert result.exit_code == 0, result.output
    assert commit_count(root) == before + 2
    assert git(root, "log", "-1", "--format=%s", "HEAD~1").startswith("hand edit")
    assert git(root, "show", "--name-only", "--format=", "HEAD~1").split() == [TOPIC]
    assert git(root, "show", f"HEAD~1:{TOPIC}") == edited
    assert git(root, "log", "-1", "--format=%s").startswith("remember: ")
    assert TOPIC not in git(root, "show", "--name-only", "--format=", "HEAD").split()


def _editor(tmp_path: Path, heading: str, body: str) -> str:
    script = tmp_path / "editor.py"
    script.write_text(
        "import sys\n"
        "path = sys.argv[1]\n"
        "text = open(path, encoding='utf-8').read()\n"
        f"text = text.replace('## \\n', '## ' + {heading!r} + '\\n' + {body!r} + '\\n', 1)\n"
        "open(path, 'w', encoding='utf-8').write(text)\n"
    )
    return f"{sys.executable} {script}"


def test_new_opens_the_template_and_records_the_entry(root: Path, tmp_path: Path) -> None:
    editor = _editor(tmp_path, "Cache keys include the locale", "Otherwise users see other languages.")
    result = gm(root, "new", "--layer", "semantic", "--topic", "cache", env={"EDITOR": editor, "VISUAL": ""})
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "global-sem-0001"
    text = (root / "global/semantic/cache.md").read_text()
    assert "## Cache keys include the locale\nOtherwise users see other languages." in text
    assert "**Importance:** normal" in text and "<!--" not in text
    assert git(root, "status", "--porcelain") == ""


def test_new_with_an_unchanged_template_records_nothing(root: Path) -> None:
    before = commit_count(root)
    result = gm(root, "new", "--layer", "semantic", env={"EDITOR": "true", "VISUAL": ""})
    assert result.exit_code == 2
    assert commit_count(root) == before
