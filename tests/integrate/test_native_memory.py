"""`gitmem integrate claude-code --native-memory`: Claude Code's auto-memory folder and the store
kept in step both ways, against real stores, real git, the real CLI and a temporary HOME."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitmem.imports import nativeblock as nb
from gitmem.imports.claude_code import memory_folder
from gitmem.serve.jobs import native_job
from gitmem.store.store import Store
from gitmem.sync.remote import init_store
from support import Cli, commit_count, git

ORIGIN = "https://example.com/acme/api.git"
CLAUDES_INDEX = "# Project memory\n\n- [Debugging the scheduler](debugging.md) — restart it after cron edits\n"
TOPIC = ("---\nname: Debugging the scheduler\ndescription: how to restart it\ntype: feedback\n---\n\n"
         "Restart the scheduler with `make restart` after changing any cron file.\n")


def make_project(where: Path) -> Path:
    """A code repository whose origin names the workspace (the same on every machine)."""
    where.mkdir(parents=True)
    git(where, "init", "-q", "-b", "main")
    git(where, "remote", "add", "origin", ORIGIN)
    return where.resolve()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "work" / "acme-api")


def home() -> Path:
    return Path(os.environ["HOME"])


def folder_of(project: Path, at: Path | None = None) -> Path:
    return memory_folder(at or home(), project)


def claude_writes(project: Path, at: Path | None = None) -> Path:
    """What Claude Code leaves in the folder: its index and one topic file."""
    folder = folder_of(project, at)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "MEMORY.md").write_text(CLAUDES_INDEX, encoding="utf-8")
    (folder / "debugging.md").write_text(TOPIC, encoding="utf-8")
    return folder


def ok(gm: Cli, *args: str, env: dict[str, str] | None = None) -> str:
    done = gm(*args, env=env)
    assert done.exit_code == 0, done.output
    return done.stdout


def block_of(text: str) -> list[str]:
    cut = nb.split(text)
    assert cut.block is not None, text
    return cut.block


def test_setup_imports_the_folder_and_renders_the_block(gm: Cli, project: Path) -> None:
    folder = claude_writes(project)
    entry = ok(gm, "remember", "The API answers on port 8080", "-l", "semantic", "--scope",
               "workspace", "-w", "acme-api").strip()
    ok(gm, "integrate", "claude-code", "--project", str(project), "--native-memory")
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    starts = [h["command"] for g in settings["hooks"]["SessionStart"] for h in g["hooks"]]
    assert any(c.endswith("context --hook --native-memory") for c in starts)
    text = (folder / "MEMORY.md").read_text(encoding="utf-8")
    # Claude Code's own lines stay as written, below gitmem's block.
    assert text.endswith(CLAUDES_INDEX) and text.startswith(nb.BEGIN + "\n")
    block = block_of(text)
    assert f"- The API answers on port 8080 ({entry})" in block
    assert block[-1] == "- all 1 entries are listed; `gitmem show ID` reads one in full"
    # Claude Code's topic file became an entry (a lesson: type feedback) of the project's workspace;
    # Claude Code lists it itself, so the block does not list it twice.
    listed = ok(gm, "list", "--layer", "learnings", "-w", "acme-api")
    assert "Debugging the scheduler" in listed and "Debugging" not in "\n".join(block)
    before = commit_count(gm.root)
    ok(gm, "integrate", "claude-code", "--project", str(project), "--native-memory")
    assert commit_count(gm.root) == before
    assert (folder / "MEMORY.md").read_text(encoding="utf-8") == text


def test_a_hand_edit_inside_the_block_is_imported_not_overwritten(gm: Cli, project: Path) -> None:
    folder = claude_writes(project)
    ok(gm, "remember", "The API answers on port 8080", "-l", "semantic", "--scope", "workspace",
       "-w", "acme-api")
    ok(gm, "integrate", "claude-code", "--project", str(project), "--native-memory")
    index = folder / "MEMORY.md"
    text = index.read_text(encoding="utf-8")
    edited = text.replace("port 8080", "port 9090").replace(
        nb.END, "- Staging lives at staging.acme.test\n" + nb.END)
    index.write_text(edited, encoding="utf-8")
    ok(gm, "integrate", "claude-code", "--project", str(project), "--native-memory")
    block = "\n".join(block_of(index.read_text(encoding="utf-8")))
    # Both hand lines are entries now (each listed with its Id); the original fact is kept too.
    assert "- The API answers on port 8080 (" in block
    assert "- The API answers on port 9090 (acme-api-sem-" in block
    assert "- Staging lives at staging.acme.test (acme-api-sem-" in block
    assert index.read_text(encoding="utf-8").endswith(CLAUDES_INDEX)
    found = ok(gm, "search", "staging", "-w", "acme-api")
    assert "staging.acme.test" in found
    # The edited line's entry points at the one it was rendered from.
    edited_id = block.split("port 9090 (")[1].split(")")[0]
    original_id = block.split("port 8080 (")[1].split(")")[0]
    shown = json.loads(ok(gm, "show", edited_id, "--json"))
    assert f"temporal:{original_id}" in json.dumps(shown)


def test_500_entries_still_render_a_memory_md_within_200_lines(gm: Cli, project: Path,
                                                             tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "facts.md").write_text("# Facts\n\n" + "".join(
        f"## Fact {n}\nService {n} listens on port {10000 + n} and logs to /var/log/s{n}.log.\n\n"
        for n in range(500)), encoding="utf-8")
    ok(gm, "import", "markdown", str(notes), "--scope", "workspace", "--layer", "semantic",
       "-w", "acme-api")
    folder = folder_of(project)
    folder.mkdir(parents=True)
    own = "".join(f"- note {n} Claude Code kept about this project\n" for n in range(60))
    (folder / "MEMORY.md").write_text(own, encoding="utf-8")
    ok(gm, "integrate", "claude-code", "--project", str(project), "--native-memory")
    text = (folder / "MEMORY.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= nb.WINDOW_LINES and len(text.encode("utf-8")) <= nb.WINDOW_BYTES
    assert text.endswith(own)  # Claude Code's lines fit the window beside the block
    block = block_of(text)
    listed = [line for line in block if line.startswith("- Fact ") or line.startswith("- Service ")]
    assert len(listed) > 100
    # Nothing silently cut: the last line counts the rest and says how to find them.
    # (Claude Code's own lines are an entry too, one Claude Code shows itself: not counted.)
    assert block[-1] == (f"- … and {500 - len(listed)} more entries of acme-api not "
                         "listed here: `gitmem search WORDS` finds them, `gitmem show ID` reads one")


def test_a_topic_file_with_a_secret_is_left_out_and_the_rest_comes_in(gm: Cli, project: Path) -> None:
    folder = claude_writes(project)
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    (folder / "deploy.md").write_text(f"# Deploy\n\nUse the token {token} to push.\n", encoding="utf-8")
    done = gm("integrate", "claude-code", "--project", str(project), "--native-memory")
    assert done.exit_code == 0, done.output
    assert "deploy.md:3: holds a likely secret" in done.stderr and token not in done.output
    assert "Debugging the scheduler" in ok(gm, "list", "--layer", "learnings", "-w", "acme-api")
    assert token not in (folder / "MEMORY.md").read_text(encoding="utf-8")
    assert token not in git(gm.root, "log", "-p", "--all")


def test_remove_leaves_the_folder_as_claude_code_would_have_it(gm: Cli, project: Path,
                                                              tmp_path: Path) -> None:
    folder = claude_writes(project)
    ok(gm, "integrate", "claude-code", "--project", str(project), "--native-memory")
    assert (folder / "MEMORY.md").read_text(encoding="utf-8") != CLAUDES_INDEX
    ok(gm, "integrate", "claude-code", "--project", str(project), "--remove")
    assert (folder / "MEMORY.md").read_text(encoding="utf-8") == CLAUDES_INDEX
    assert (folder / "debugging.md").read_text(encoding="utf-8") == TOPIC
    assert not (project / ".claude" / "settings.json").exists()  # it held gitmem's hooks only
    assert not json.loads((gm.root / "state" / "native-memory.json").read_text())["projects"]
    # A MEMORY.md that only gitmem wrote goes altogether.
    other = make_project(tmp_path / "work" / "other")
    ok(gm, "integrate", "claude-code", "--project", str(other), "--native-memory")
    assert (folder_of(other) / "MEMORY.md").is_file()
    ok(gm, "integrate", "claude-code", "--project", str(other), "--remove")
    assert not (folder_of(other) / "MEMORY.md").exists()


def _machine(tmp_path: Path, name: str, remote: Path) -> tuple[Cli, Path, dict[str, str]]:
    """A machine: its own HOME, its own clone of the store, the project at its own path."""
    root, machine_home = tmp_path / name / "store", tmp_path / name / "home"
    machine_home.mkdir(parents=True)
    store = Store(root, cwd=tmp_path)
    init_store(store, remote=str(remote), branch="main")
    store.close()
    return Cli(root, CliRunner()), make_project(tmp_path / name / "src" / "acme-api"), {"HOME": str(machine_home)}


def test_machine_b_after_both_sync(tmp_path: Path, bare_remote: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    a, project_a, env_a = _machine(tmp_path, "a", bare_remote)
    ok(a, "sync", env=env_a)
    b, project_b, env_b = _machine(tmp_path, "b", bare_remote)
    home_a, home_b = Path(env_a["HOME"]), Path(env_b["HOME"])
    claude_writes(project_a, home_a)
    ok(a, "integrate", "claude-code", "--project", str(project_a), "--native-memory", env=env_a)
    ok(a, "sync", env=env_a)
    ok(b, "sync", env=env_b)
    ok(b, "integrate", "claude-code", "--project", str(project_b), "--native-memory", env=env_b)
    on_b = folder_of(project_b, home_b) / "MEMORY.md"
    block = "\n".join(block_of(on_b.read_text(encoding="utf-8")))
    # What Claude Code wrote on machine A is in machine B's MEMORY.md, with its Id.
    assert "- Debugging the scheduler (acme-api-lrn-0001)" in block
    # And back: a line written on B reaches A's MEMORY.md at A's next pass after both sync.
    on_b.write_text(on_b.read_text(encoding="utf-8").replace(
        nb.END, "- The nightly build runs at 02:00 UTC\n" + nb.END), encoding="utf-8")
    ok(b, "integrate", "claude-code", "--project", str(project_b), "--native-memory", env=env_b)
    ok(b, "sync", env=env_b)
    ok(a, "sync", env=env_a)
    monkeypatch.setenv("HOME", str(home_a))
    assert native_job(a.root) == "1 project(s) in step"  # as the warm server's schedule runs it
    on_a = (folder_of(project_a, home_a) / "MEMORY.md").read_text(encoding="utf-8")
    assert "- The nightly build runs at 02:00 UTC (acme-api-" in on_a
    assert on_a.endswith(CLAUDES_INDEX)


def test_the_written_session_start_hook_turns_it_on_for_a_clone(gm: Cli, project: Path) -> None:
    """The flag travels in the project's settings: a machine whose list does not name the project
    yet gets its MEMORY.md at the first session, as Claude Code runs the hook."""
    ok(gm, "integrate", "claude-code", "--project", str(project), "--native-memory")
    (gm.root / "state" / "native-memory.json").unlink()
    index = folder_of(project) / "MEMORY.md"
    index.unlink()
    claude_writes(project)
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    command = next(h["command"] for g in settings["hooks"]["SessionStart"] for h in g["hooks"]
                   if "--native-memory" in h["command"])
    payload = json.dumps({"hook_event_name": "SessionStart", "cwd": str(project), "session_id": "s",
                          "source": "startup"})
    done = subprocess.run(command, shell=True, input=payload, capture_output=True, text=True, cwd=project)
    assert done.returncode == 0, done.stderr
    assert "## gitmem memory" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert index.read_text(encoding="utf-8").endswith(CLAUDES_INDEX)
    assert nb.BEGIN in index.read_text(encoding="utf-8")
    assert str(project) in json.loads((gm.root / "state" / "native-memory.json").read_text())["projects"]


def test_block_text_rules() -> None:
    text = f"# Mine\n{nb.BEGIN}\n## gitmem memory (w: x)\n- A fact (w-sem-0001)\n- by hand\n{nb.END}\n\nafter\n"
    assert nb.outside(text) == "# Mine\n\nafter\n"
    assert nb.outside(nb.placed("mine\n", [nb.BEGIN, "x", nb.END])) == "mine\n"
    assert nb.hand_lines(block_of(text), ["## gitmem memory (w: x)", "- A fact (w-sem-0001)"]) == [(2, "- by hand")]
    assert nb.hand_lines(block_of(text), None) == [(2, "- by hand")]  # without a record: gitmem's shapes
    assert nb.without_id("- A fact, edited (w-sem-0001)") == "A fact, edited"
    assert nb.outside("no block here\n") == "no block here\n"
    unclosed = f"{nb.BEGIN}\n- kept\n"
    assert nb.outside(unclosed) == unclosed  # an unclosed begin line is nobody's block: kept


def test_a_dry_run_writes_nothing(gm: Cli, project: Path) -> None:
    folder = claude_writes(project)
    done = gm("integrate", "claude-code", "--project", str(project), "--native-memory", "--dry-run")
    assert done.exit_code == 0, done.output
    assert "--native-memory" in done.stdout and "would also import" in done.stderr
    assert (folder / "MEMORY.md").read_text(encoding="utf-8") == CLAUDES_INDEX
    assert not (gm.root / "state" / "native-memory.json").exists()


def test_the_capture_job_brings_in_what_claude_code_wrote_during_the_session(
        gm: Cli, project: Path, tmp_path: Path) -> None:
    from gitmem.integrate.capturejob import run

    transcript = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts" / "claude-code.jsonl"
    folder = claude_writes(project)
    ok(gm, "integrate", "claude-code", "--project", str(project), "--native-memory")
    (folder / "queue.md").write_text("---\nname: Queue backend\ntype: project\n---\n\n"
                                     "The job queue moved to SQLite in March.\n", encoding="utf-8")
    assert run(gm.root, transcript, project, None) == 0
    assert "Queue backend" in ok(gm, "list", "-w", "acme-api")
    assert '"hook": "agent-capture"' in (gm.root / "logs" / "memory.log").read_text()


def test_import_claude_code_does_not_take_gitmem_s_block_for_claude_code_s_notes(
        gm: Cli, project: Path) -> None:
    claude_writes(project)
    ok(gm, "remember", "The API answers on port 8080", "-l", "semantic", "--scope", "workspace",
       "-w", "acme-api")
    ok(gm, "integrate", "claude-code", "--project", str(project), "--native-memory")
    report = json.loads(ok(gm, "import", "claude-code", str(project), "--json"))
    assert set(report["counts"]) <= {"unchanged"}, report["counts"]


def test_user_remove_takes_the_block_out_of_every_project_kept_in_step(gm: Cli, tmp_path: Path) -> None:
    projects = [make_project(tmp_path / "work" / name) for name in ("one", "two")]
    for project in projects:
        claude_writes(project)
        ok(gm, "integrate", "claude-code", "--project", str(project), "--native-memory")
    ok(gm, "integrate", "claude-code", "--user", "--native-memory")
    ok(gm, "integrate", "claude-code", "--user", "--remove")
    for project in projects:
        assert (folder_of(project) / "MEMORY.md").read_text(encoding="utf-8") == CLAUDES_INDEX
    assert not json.loads((gm.root / "state" / "native-memory.json").read_text())["projects"]


def test_a_pass_over_an_unchanged_folder_imports_nothing_and_changes_nothing(gm: Cli, project: Path) -> None:
    folder = claude_writes(project)
    ok(gm, "integrate", "claude-code", "--project", str(project), "--native-memory")
    text, before = (folder / "MEMORY.md").read_text(encoding="utf-8"), commit_count(gm.root)
    done = gm("integrate", "claude-code", "--project", str(project), "--native-memory")
    assert "imported nothing" in done.stderr and "lists 0 of 0 entries" in done.stderr
    assert commit_count(gm.root) == before
    assert (folder / "MEMORY.md").read_text(encoding="utf-8") == text


def test_a_secret_written_inside_the_block_is_kept_below_it_and_never_imported(gm: Cli, project: Path) -> None:
    folder = claude_writes(project)
    ok(gm, "integrate", "claude-code", "--project", str(project), "--native-memory")
    index = folder / "MEMORY.md"
    token = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    line = f"- push with {token}"
    index.write_text(index.read_text(encoding="utf-8").replace(nb.END, f"{line}\n{nb.END}"), encoding="utf-8")
    done = gm("integrate", "claude-code", "--project", str(project), "--native-memory")
    assert done.exit_code == 0 and "MEMORY.md:" in done.stderr and token not in done.output
    text = index.read_text(encoding="utf-8")
    assert line not in "\n".join(block_of(text)) and f"{nb.END}\n{line}\n" in text  # the person's line kept
    assert token not in git(gm.root, "log", "-p", "--all")


def test_a_worktree_of_the_project_shares_its_folder(gm: Cli, project: Path, tmp_path: Path) -> None:
    (project / "README").write_text("x\n")
    git(project, "add", "README")
    git(project, "commit", "-qm", "first")
    linked = tmp_path / "work" / "acme-api-feature"
    git(project, "worktree", "add", "-q", str(linked), "-b", "feature")
    folder = claude_writes(project)
    ok(gm, "integrate", "claude-code", "--project", str(linked), "--native-memory")
    assert nb.BEGIN in (folder / "MEMORY.md").read_text(encoding="utf-8")
    assert folder_of(linked) == folder  # what `gitmem import claude-code` reads there too


def _fields(gm: Cli, entry_id: str, env: dict[str, str] | None = None) -> dict[str, str]:
    done = gm("show", entry_id, "--json", env=env)
    assert done.exit_code == 0, done.output
    shown = json.loads(done.stdout)
    return shown.get("fields") or shown["entry"]["fields"]


def _said(gm: Cli, *args: str, env: dict[str, str] | None = None) -> str:
    """What a command printed, stderr too (the native pass reports there)."""
    done = gm(*args, env=env)
    assert done.exit_code == 0, done.output
    return done.output


def _line_with(index: Path, words: str) -> str:
    return next(line for line in block_of(index.read_text(encoding="utf-8")) if words in line)


def test_a_line_deleted_on_one_machine_forgets_its_entry_on_both(tmp_path: Path, bare_remote: Path) -> None:
    a, project_a, env_a = _machine(tmp_path, "a", bare_remote)
    for text in ("The API answers on port 8080", "Deploys go out on Tuesdays"):
        ok(a, "remember", text, "-l", "semantic", "--scope", "workspace", "-w", "acme-api", env=env_a)
    ok(a, "sync", env=env_a)
    b, project_b, env_b = _machine(tmp_path, "b", bare_remote)
    ok(b, "sync", env=env_b)
    native = ("integrate", "claude-code", "--native-memory")
    ok(a, *native, "--project", str(project_a), env=env_a)
    ok(b, *native, "--project", str(project_b), env=env_b)
    on_a = folder_of(project_a, Path(env_a["HOME"])) / "MEMORY.md"
    on_b = folder_of(project_b, Path(env_b["HOME"])) / "MEMORY.md"
    line = _line_with(on_a, "Tuesdays")
    entry_id = nb.rendered_id(line)
    assert entry_id and line in block_of(on_b.read_text(encoding="utf-8"))
    # Deleted by hand (or by Claude Code) on A: the next pass forgets the entry, and says so.
    on_a.write_text(on_a.read_text(encoding="utf-8").replace(line + "\n", ""), encoding="utf-8")
    said = _said(a, *native, "--project", str(project_a), env=env_a)
    assert f"forgot {entry_id}" in said
    assert _fields(a, entry_id, env_a).get("Forgotten")
    assert "port 8080" in _line_with(on_a, "port 8080")  # the other line stays, and its entry
    ok(a, "sync", env=env_a)
    ok(b, "sync", env=env_b)
    ok(b, *native, "--project", str(project_b), env=env_b)
    assert _fields(b, entry_id, env_b).get("Forgotten")
    block_b = "\n".join(block_of(on_b.read_text(encoding="utf-8")))
    assert "Tuesdays" not in block_b and "port 8080" in block_b
    # The same forget as `gitmem forget`: undone the same way, and listed again.
    ok(b, "forget", entry_id, "--undo", env=env_b)
    ok(b, *native, "--project", str(project_b), env=env_b)
    assert "Tuesdays" in _line_with(on_b, "Tuesdays")


def test_a_block_removed_or_emptied_is_rendered_again_and_forgets_nothing(gm: Cli, project: Path) -> None:
    folder = claude_writes(project)
    for text in ("The API answers on port 8080", "Deploys go out on Tuesdays"):
        ok(gm, "remember", text, "-l", "semantic", "--scope", "workspace", "-w", "acme-api")
    ok(gm, "integrate", "claude-code", "--project", str(project), "--native-memory")
    index = folder / "MEMORY.md"
    ids = [i for line in block_of(index.read_text(encoding="utf-8")) if (i := nb.rendered_id(line))]
    assert len(ids) >= 2
    # The whole block deleted: read as "render again".
    index.write_text(nb.outside(index.read_text(encoding="utf-8")), encoding="utf-8")
    said = _said(gm, "integrate", "claude-code", "--project", str(project), "--native-memory")
    assert "rendered again, nothing forgotten" in said
    # Every entry line deleted at once, the markers left: the same.
    text = index.read_text(encoding="utf-8")
    index.write_text("\n".join(line for line in text.split("\n") if not nb.rendered_id(line)), encoding="utf-8")
    said = _said(gm, "integrate", "claude-code", "--project", str(project), "--native-memory")
    assert "rendered again, nothing forgotten" in said
    assert all(not _fields(gm, entry_id).get("Forgotten") for entry_id in ids)
    assert all(entry_id in index.read_text(encoding="utf-8") for entry_id in ids)


def test_a_deleted_line_whose_entry_changed_since_forgets_nothing(gm: Cli, project: Path) -> None:
    folder = claude_writes(project)
    for text in ("The API answers on port 8080", "Deploys go out on Tuesdays"):
        ok(gm, "remember", text, "-l", "semantic", "--scope", "workspace", "-w", "acme-api")
    ok(gm, "integrate", "claude-code", "--project", str(project), "--native-memory")
    index = folder / "MEMORY.md"
    line = _line_with(index, "Tuesdays")
    entry_id = nb.rendered_id(line)
    assert entry_id
    for topic in gm.root.rglob("*.md"):  # a person edits the entry in its topic file
        text = topic.read_text(encoding="utf-8")
        if "Tuesdays" in text and ".git" not in topic.parts:
            topic.write_text(text.replace("Tuesdays", "Wednesdays"), encoding="utf-8")
    index.write_text(index.read_text(encoding="utf-8").replace(line + "\n", ""), encoding="utf-8")
    said = _said(gm, "integrate", "claude-code", "--project", str(project), "--native-memory")
    assert "forgot" not in said
    assert not _fields(gm, entry_id).get("Forgotten")
    assert "Wednesdays" in _line_with(index, "Wednesdays")
