"""A true conflict is never hidden: two machines (two stores cloned from one bare remote) edit one
entry by hand, sync with the real `gitmem sync`, and the conflict is kept, labelled with each
machine and commit, refused to writes, and settled with `gitmem resolve`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmem.errors import ConflictError
from gitmem.store.store import Store
from gitmem.sync.remote import init_store
from gitmem.sync.run import sync
from gitmem.verbs.entries import remember
from gitmem.verbs.workfiles import record_state
from support import GIT_ENV, git, run_gitmem

BLOCK_RE = re.compile(r"^<<<<<<< (?P<ours>[^\n]*)\n(?P<a>.*?)^=======\n(?P<b>.*?)^>>>>>>> (?P<theirs>[^\n]*)\n",
                      re.DOTALL | re.MULTILINE)
HOST = "Staging DB host is 10.0.0.7"
TOPIC = "global/semantic/staging.md"


def gm(root: Path, machine: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The real `gitmem` in a subprocess, on the named machine."""
    return run_gitmem("--root", str(root), *args, env={"GITMEM_MACHINE": machine})


def short(root: Path, rev: str) -> str:
    return git(root, "rev-parse", "--short=12", rev).strip()


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


def read(root: Path, relpath: str = TOPIC) -> str:
    return (root / relpath).read_text(encoding="utf-8")


def edit(root: Path, old: str, new: str, relpath: str = TOPIC) -> None:
    """A hand edit, as in an editor (left uncommitted)."""
    path = root / relpath
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


@pytest.fixture
def machines(tmp_path: Path, bare_remote: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Store, Store]]:
    """laptop-a wrote two facts and pushed; laptop-b cloned them."""
    monkeypatch.setenv("GITMEM_MACHINE", "laptop-a")
    a = Store(tmp_path / "a", cwd=tmp_path)
    init_store(a, remote=str(bare_remote), branch="main")
    remember(a, HOST, "semantic", topic="staging")
    remember(a, "Staging DB user is app", "semantic", topic="staging")
    assert sync(a).result == "pushed"
    monkeypatch.setenv("GITMEM_MACHINE", "laptop-b")
    b = Store(tmp_path / "b", cwd=tmp_path)
    init_store(b, remote=str(bare_remote), branch="main")
    monkeypatch.delenv("GITMEM_MACHINE")
    yield a, b
    a.close()
    b.close()


@pytest.fixture
def conflicted(machines: tuple[Store, Store]) -> tuple[Path, Path]:
    """The reproducer: 10.0.0.7 -> .8 on a, -> .9 on b; a syncs, b syncs (real CLI)."""
    a, b = machines
    edit(a.root, "10.0.0.7", "10.0.0.8")
    edit(b.root, "10.0.0.7", "10.0.0.9")
    assert gm(a.root, "laptop-a", "sync").returncode == 0
    done = gm(b.root, "laptop-b", "sync")
    assert done.returncode == 3, done.stdout + done.stderr
    return a.root, b.root


# -- the conflict is kept, never renumbered ------------------------------------------------------
def test_two_edits_of_one_entry_are_a_conflict_not_a_renumbering(conflicted: tuple[Path, Path]) -> None:
    a, b = conflicted
    text = read(b)
    ids = re.findall(r"\*\*Id:\*\* (\S+)", text)
    assert sorted(set(ids)) == ["global-sem-0001", "global-sem-0002"]  # no new entry appeared
    assert ids.count("global-sem-0001") == 2  # both versions of the one entry, nothing else
    [block] = BLOCK_RE.finditer(text)
    assert "10.0.0.9" in block["a"] and "10.0.0.8" in block["b"]
    assert "global-sem-0002" not in block.group(0)  # markers around that entry only
    # Each marker line names the machine and the commit of its side.
    assert block["ours"] == f"laptop-b {short(b, 'HEAD^1')}"
    assert block["theirs"] == f"laptop-a {short(b, 'HEAD^2')}"
    assert git(b, "rev-parse", "origin/main").strip() == head(b)  # pushed with both versions
    listing = read(b, "state/CONFLICT.md")
    assert "global-sem-0001" in listing and f"laptop-b (this machine), commit {short(b, 'HEAD^1')}" in listing
    assert f"laptop-a, commit {short(b, 'HEAD^2')}" in listing


def test_the_sync_summary_says_what_happened_on_each_machine(machines: tuple[Store, Store]) -> None:
    a, b = (m.root for m in machines)
    edit(a, "10.0.0.7", "10.0.0.8")
    edit(b, "10.0.0.7", "10.0.0.9")
    first = gm(a, "laptop-a", "sync")
    assert first.returncode == 0
    assert first.stdout.splitlines()[:2] == ["committed 1 pending file(s)",
                                             f"pushed 1 commit to {machines[0].git.remote_url()} (main)"]
    merged = gm(b, "laptop-b", "sync")
    assert merged.stdout.splitlines()[1].startswith("merged ") and "and pushed the merge" in merged.stdout
    assert "edited differently here and on laptop-a" in merged.stdout
    assert "1 conflict(s) to resolve (1 from this merge)" in merged.stdout

    arrived = gm(a, "laptop-a", "sync")  # a only fast-forwards: it merged nothing, pushed nothing
    assert arrived.returncode == 3
    first_line = arrived.stdout.splitlines()[0]
    assert first_line.startswith("fast-forwarded to ") and "nothing to push" in first_line
    assert "merged" not in arrived.stdout and "pushed with markers" not in arrived.stdout
    assert "(1 arrived from" in arrived.stdout
    # The file on a names the machines, never "ours" for b's version.
    [block] = BLOCK_RE.finditer(read(a))
    assert block["ours"].startswith("laptop-b ") and block["theirs"].startswith("laptop-a ")
    listed = json.loads(gm(a, "laptop-a", "conflicts", "--json").stdout)
    assert [(c["entry_id"], c["ref"]) for c in listed] == [("global-sem-0001", "global-sem-0001")]
    assert listed[0]["ours"].startswith("laptop-b, commit ")
    assert listed[0]["theirs"].startswith("laptop-a (this machine), commit ")

    again = gm(a, "laptop-a", "sync")
    assert again.stdout.startswith("up to date with ") and "(1 left from before)" in again.stdout


def test_new_entries_given_one_id_on_two_machines_are_still_renumbered(machines: tuple[Store, Store],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = machines
    new_a = remember(a, "Queue depth alarm at 500", "semantic", topic="queue").id
    new_b = remember(b, "Cache warmup takes 40 s", "semantic", topic="cache").id
    assert new_a == new_b == "global-sem-0003"
    sync(a)
    report = sync(b)
    assert report.renumbered == {"global-sem-0003": "global-sem-0004"} and not report.conflicts


# -- the merge driver, with plain git pull -----------------------------------------------------
def pull(root: Path, machine: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "pull", "-q", "--no-rebase", "--no-edit", "origin", "main"], cwd=root,
                          capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV, "GITMEM_MACHINE": machine})


def test_plain_git_pull_keeps_the_conflict_and_names_both_machines(machines: tuple[Store, Store]) -> None:
    a, b = (m.root for m in machines)
    assert gm(b, "laptop-b", "hooks", "install").returncode == 0
    edit(a, "10.0.0.7", "10.0.0.8")
    assert gm(a, "laptop-a", "sync").returncode == 0
    edit(b, "10.0.0.7", "10.0.0.9")
    subprocess.run(["git", "commit", "-qam", "b edits the host"], cwd=b, check=True,
                   env={**os.environ, **GIT_ENV, "GITMEM_MACHINE": "laptop-b"})
    local = short(b, "HEAD")
    pulled = pull(b, "laptop-b")
    assert pulled.returncode != 0  # git stops at the conflict
    text = read(b)
    assert text.count("**Id:** global-sem-0001") == 2 and "global-sem-0003" not in text
    [block] = BLOCK_RE.finditer(text)
    remote = short(b, "origin/main")
    assert (block["ours"], block["theirs"]) == (f"laptop-b {local}", f"laptop-a {remote}")
    [listed] = json.loads(gm(b, "laptop-b", "conflicts", "--json").stdout)
    assert listed["ours"] == f"laptop-b (this machine), commit {local}"
    assert listed["theirs"] == f"laptop-a, commit {remote}" and listed["ours"] != listed["theirs"]

    settled = gm(b, "laptop-b", "resolve", "global-sem-0001", "--theirs")
    assert settled.returncode == 0 and "staged for the git operation in progress" in settled.stdout
    assert "10.0.0.8" in read(b) and "10.0.0.9" not in read(b) and "<<<<<<<" not in read(b)
    done = subprocess.run(["git", "commit", "-q", "--no-edit"], cwd=b, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV})
    assert done.returncode == 0, done.stderr
    assert len(git(b, "rev-list", "--parents", "-1", "HEAD").split()) == 3  # the merge commit


def stopped_rebase(machines: tuple[Store, Store]) -> Path:
    """laptop-b (hooks installed) and laptop-a changed the host differently; laptop-a synced;
    laptop-b's `git pull --rebase` stands stopped on the conflict. Returns laptop-b's root."""
    a, b = (m.root for m in machines)
    assert gm(b, "laptop-b", "hooks", "install").returncode == 0
    edit(a, "10.0.0.7", "10.0.0.8")
    assert gm(a, "laptop-a", "sync").returncode == 0
    edit(b, "10.0.0.7", "10.0.0.9")
    subprocess.run(["git", "commit", "-qam", "b edits the host"], cwd=b, check=True,
                   env={**os.environ, **GIT_ENV, "GITMEM_MACHINE": "laptop-b"})
    rebased = subprocess.run(["git", "pull", "-q", "--rebase", "origin", "main"], cwd=b,
                             capture_output=True, text=True,
                             env={**os.environ, **GIT_ENV, "GITMEM_MACHINE": "laptop-b"})
    assert rebased.returncode != 0
    return b


def test_in_a_rebase_the_labels_and_ours_still_mean_this_machine(machines: tuple[Store, Store]) -> None:
    """git swaps ours and theirs in a rebase; labels by machine do not."""
    b = stopped_rebase(machines)
    [block] = BLOCK_RE.finditer(read(b))
    assert block["ours"].startswith("laptop-a ") and block["theirs"].startswith("laptop-b ")
    done = gm(b, "laptop-b", "resolve", "global-sem-0001", "--ours")
    assert done.returncode == 0 and "kept laptop-b's version" in done.stdout, done.stderr
    assert "10.0.0.9" in read(b) and "10.0.0.8" not in read(b)
    finished = subprocess.run(["git", "rebase", "--continue"], cwd=b, capture_output=True, text=True,
                              env={**os.environ, **GIT_ENV, "GIT_EDITOR": "true"})
    assert finished.returncode == 0, finished.stderr
    assert git(b, "status", "--porcelain") == "" and "<<<<<<<" not in read(b)


def test_markers_without_machine_names_are_described_from_the_merge_in_progress(
        machines: tuple[Store, Store]) -> None:
    """Markers git itself wrote (no gitmem driver): both sides told apart from HEAD and MERGE_HEAD."""
    a, b = (m.root for m in machines)
    edit(a, "10.0.0.7", "10.0.0.8")
    assert gm(a, "laptop-a", "sync").returncode == 0
    edit(b, "10.0.0.7", "10.0.0.9")
    git(b, "commit", "-qam", "b edits the host")
    (b / ".git/info").mkdir(exist_ok=True)
    (b / ".git/info/attributes").write_text("*.md merge=text\n")  # git's own line merge
    pulled = pull(b, "laptop-b")
    assert pulled.returncode != 0 and "<<<<<<<" in read(b)
    listed = json.loads(gm(b, "laptop-b", "conflicts", "--json").stdout)
    assert listed and all(c["ours"] != c["theirs"] for c in listed)
    assert short(b, "HEAD") in listed[0]["ours"] and short(b, "MERGE_HEAD") in listed[0]["theirs"]
    assert "laptop-a" in listed[0]["theirs"]  # gitmem's commit on a carries its machine


# -- writes never break a conflict block -------------------------------------------------------
def test_writes_into_a_conflicted_entry_are_refused_and_change_nothing(conflicted: tuple[Path, Path]) -> None:
    _a, b = conflicted
    before, commit = read(b), head(b)
    for args in (("forget", "global-sem-0001"), ("verify", "global-sem-0001"), ("revert", "global-sem-0001"),
                 ("remember", "The host moved", "--layer", "semantic", "--topic", "staging",
                  "--supersedes", "global-sem-0001")):
        refused = gm(b, "laptop-b", *args)
        assert refused.returncode == 3, (args, refused.stderr)
        assert "gitmem resolve global-sem-0001 --ours|--theirs|--both" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
        assert read(b) == before and head(b) == commit and git(b, "status", "--porcelain") == ""


def test_writes_elsewhere_in_a_conflicted_file_keep_the_block_byte_for_byte(
        conflicted: tuple[Path, Path]) -> None:
    a, b = conflicted
    [block] = BLOCK_RE.finditer(read(b))
    assert gm(b, "laptop-b", "forget", "global-sem-0002").returncode == 0
    assert gm(b, "laptop-b", "remember", "Staging runs Postgres 16", "--layer", "semantic",
              "--topic", "staging").returncode == 0
    text = read(b)
    assert block.group(0) in text and "**Forgotten:**" in text.split(block.group(0))[1]
    assert "Postgres 16" in text and text.count("<<<<<<<") == 1
    assert gm(b, "laptop-b", "sync").returncode == 3  # still a conflict, still one block
    assert gm(a, "laptop-a", "sync").returncode == 3
    assert block.group(0) in read(a)


def test_state_sections_in_conflict_refuse_writes_and_resolve_by_path_and_line(
        machines: tuple[Store, Store], monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = machines
    monkeypatch.setenv("GITMEM_MACHINE", "laptop-a")
    record_state(a, "Deploy", "Deploys go out on Tuesdays", workspace="proj")
    record_state(a, "Health", "All green", workspace="proj")
    sync(a)
    monkeypatch.setenv("GITMEM_MACHINE", "laptop-b")
    sync(b)
    relpath = "workspaces/proj/state.md"
    monkeypatch.setenv("GITMEM_MACHINE", "laptop-a")
    record_state(a, "Deploy", "Deploys go out on Wednesdays", workspace="proj")
    sync(a)
    monkeypatch.setenv("GITMEM_MACHINE", "laptop-b")
    record_state(b, "Deploy", "Deploys go out on Thursdays", workspace="proj")
    [conflict] = sync(b).conflicts
    assert conflict.entry_id is None and conflict.title == "Deploy" and conflict.ref == f"{relpath}:{conflict.line}"
    before = read(b.root, relpath)
    [block] = BLOCK_RE.finditer(before)
    with pytest.raises(ConflictError, match=re.escape(f"gitmem resolve {conflict.ref} --ours")):
        record_state(b, "Deploy", "Fridays", workspace="proj")
    assert read(b.root, relpath) == before
    record_state(b, "Health", "Two services red", workspace="proj")
    assert block.group(0) in read(b.root, relpath) and "Two services red" in read(b.root, relpath)

    commits = int(git(b.root, "rev-list", "--count", "HEAD"))
    done = gm(b.root, "laptop-b", "resolve", conflict.ref, "--ours")
    assert done.returncode == 0, done.stderr
    text = read(b.root, relpath)
    assert "Thursdays" in text and "Wednesdays" not in text and "<<<<<<<" not in text
    assert int(git(b.root, "rev-list", "--count", "HEAD")) == commits + 1
    assert not (b.root / "state/CONFLICT.md").exists()


# -- gitmem resolve ------------------------------------------------------------------------------
def test_resolve_ours_on_the_machine_that_fast_forwarded_keeps_its_own_version(
        conflicted: tuple[Path, Path]) -> None:
    a, b = conflicted
    assert gm(a, "laptop-a", "sync").returncode == 3  # a fast-forwards to b's merge
    commits = int(git(a, "rev-list", "--count", "HEAD"))
    done = gm(a, "laptop-a", "resolve", "global-sem-0001", "--ours")
    assert done.returncode == 0, done.stderr
    assert "kept laptop-a's version" in done.stdout and "0 conflict(s) left" in done.stdout
    text = read(a)
    assert "10.0.0.8" in text and "10.0.0.9" not in text and "<<<<<<<" not in text
    assert text.count("**Id:** global-sem-0001") == 1
    assert int(git(a, "rev-list", "--count", "HEAD")) == commits + 1  # one commit
    assert git(a, "log", "-1", "--format=%s").startswith("resolve: global-sem-0001")
    assert not (a / "state/CONFLICT.md").exists()
    assert gm(a, "laptop-a", "conflicts").returncode == 1
    assert gm(a, "laptop-a", "sync").returncode == 0 and gm(b, "laptop-b", "sync").returncode == 0
    assert git(a, "rev-parse", "HEAD^{tree}") == git(b, "rev-parse", "HEAD^{tree}")


def test_resolve_theirs_and_both(conflicted: tuple[Path, Path], tmp_path: Path) -> None:
    _a, b = conflicted
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(b), str(copy)], check=True)
    theirs = gm(b, "laptop-b", "resolve", "global-sem-0001", "--theirs")
    assert theirs.returncode == 0 and "kept laptop-a's version" in theirs.stdout
    assert "10.0.0.8" in read(b) and "10.0.0.9" not in read(b)

    both = gm(copy, "laptop-b", "resolve", "global-sem-0001", "--both")
    assert both.returncode == 0, both.stderr
    assert "new entry: global-sem-0003" in both.stdout
    text = read(copy)
    assert "<<<<<<<" not in text and "10.0.0.8" in text and "10.0.0.9" in text
    assert sorted(re.findall(r"\*\*Id:\*\* (\S+)", text)) == [
        "global-sem-0001", "global-sem-0002", "global-sem-0003"]
    shown = json.loads(gm(copy, "laptop-b", "show", "global-sem-0003", "--json").stdout)
    assert "10.0.0.8" in shown["body"] and shown["status"] == "live"
    assert gm(copy, "laptop-b", "check").returncode == 0


def test_resolve_after_editing_the_file_by_hand(conflicted: tuple[Path, Path]) -> None:
    _a, b = conflicted
    early = gm(b, "laptop-b", "resolve", "global-sem-0001")  # nothing edited yet: markers are there
    assert early.returncode == 2 and "still in global/semantic/staging.md:" in early.stderr
    text = read(b)
    [block] = BLOCK_RE.finditer(text)
    (b / TOPIC).write_text(text.replace(block.group(0), block["a"].replace("10.0.0.9", "10.0.0.10")
                                        + "\n## Staging DB port is 5433\nWritten while resolving.\n"))
    commits = int(git(b, "rev-list", "--count", "HEAD"))
    done = gm(b, "laptop-b", "resolve", "global-sem-0001")
    assert done.returncode == 0, done.stderr
    assert int(git(b, "rev-list", "--count", "HEAD")) == commits + 1 and git(b, "status", "--porcelain") == ""
    settled = read(b)
    assert "10.0.0.10" in settled and "<<<<<<<" not in settled
    assert "**Id:** global-sem-0003" in settled  # the new entry got its Id
    assert gm(b, "laptop-b", "resolve", "global-sem-0001").returncode == 1  # nothing left to settle


def test_resolve_refuses_markers_left_or_invented(conflicted: tuple[Path, Path]) -> None:
    _a, b = conflicted
    text = read(b)
    half = re.sub(r"^>>>>>>> [^\n]*\n", "", text, count=1, flags=re.MULTILINE)
    (b / TOPIC).write_text(half)
    refused = gm(b, "laptop-b", "resolve", "global-sem-0001")
    assert refused.returncode == 2 and "conflict marker line is left" in refused.stderr
    assert git(b, "status", "--porcelain").strip() == f"M {TOPIC}"  # nothing committed


def test_resolve_of_an_entry_not_in_conflict(conflicted: tuple[Path, Path]) -> None:
    _a, b = conflicted
    missing = gm(b, "laptop-b", "resolve", "global-sem-0002", "--ours")
    assert missing.returncode == 1 and "not in conflict" in missing.stderr
    bad = gm(b, "laptop-b", "resolve", "no-such-thing", "--ours")
    assert bad.returncode == 2
    outside = b.parent / "outside.md"
    outside.write_text("<<<<<<< x 1111111\n## A\na\n=======\n## A\nb\n>>>>>>> y 2222222\n")
    for target in ("../outside.md:1", str(outside), "global/../../outside.md:1"):
        assert gm(b, "laptop-b", "resolve", target, "--ours").returncode == 2, target
    assert "<<<<<<<" in outside.read_text()  # never touched


def test_show_of_an_entry_in_conflict_shows_both_versions(conflicted: tuple[Path, Path]) -> None:
    _a, b = conflicted
    shown = gm(b, "laptop-b", "show", "global-sem-0001")
    assert shown.returncode == 0
    assert "is in conflict" in shown.stdout and "10.0.0.8" in shown.stdout and "10.0.0.9" in shown.stdout
    assert "live, fresh" not in shown.stdout and "version from laptop-a, commit" in shown.stdout
    record = json.loads(gm(b, "laptop-b", "show", "global-sem-0001", "--json").stdout)
    assert record["status"] == "conflicted" and len(record["conflict"]["versions"]) == 2


def test_the_cli_has_the_resolve_verb() -> None:
    done = subprocess.run([sys.executable, "-m", "gitmem", "resolve", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "--ours" in done.stdout and "--both" in done.stdout


def test_a_runtime_record_in_conflict_points_to_the_verb_that_settles_it(
        tmp_path: Path, bare_remote: Path) -> None:
    from click.testing import CliRunner

    from support import Cli

    laptop, desktop = Cli(tmp_path / "laptop", CliRunner()), Cli(tmp_path / "desktop", CliRunner())
    assert laptop("init", "--remote", str(bare_remote)).exit_code == 0
    assert laptop("runtime", "add", "Shared fact one").exit_code == 0
    assert laptop("sync").exit_code == 0
    assert desktop("init", "--remote", str(bare_remote)).exit_code == 0
    laptop("runtime", "replace", "one", "Fact one as the laptop says")
    desktop("runtime", "replace", "one", "Fact one as the desktop says")
    assert laptop("sync").exit_code == 0 and desktop("sync").exit_code == 3
    [listed] = desktop.json("conflicts")  # type: ignore[misc]
    assert listed["kind"] == "record" and listed["settle"].startswith("gitmem runtime resolve rt-")
    assert "settle: gitmem runtime resolve" in desktop("conflicts").stdout
    refused = desktop("resolve", listed["ref"])  # no text to edit: a record keeps one version
    assert refused.exit_code == 2 and f"`gitmem runtime resolve {listed['ref']}" in refused.stderr
    settled = desktop("resolve", listed["ref"], "--ours")  # the ref the listing prints is taken
    assert settled.exit_code == 0, settled.output
    assert desktop("conflicts").exit_code == 1


def test_writes_wait_for_a_stopped_rebase_and_a_detached_head(machines: tuple[Store, Store]) -> None:
    """A write committed on a rebase's detached HEAD is dropped by `git rebase --abort`, its text
    with it; one on a checked-out old commit is left behind by a checkout of the branch: both are
    refused (exit 3, nothing written), as sync refuses them. `resolve` still settles the stop."""
    b = stopped_rebase(machines)
    before = git(b, "rev-parse", "HEAD")
    refused = gm(b, "laptop-b", "remember", "A precious fact", "--layer", "semantic")
    assert refused.returncode == 3 and "git rebase is in progress" in refused.stderr
    assert git(b, "rev-parse", "HEAD") == before and "precious" not in git(b, "log", "-p", "--all")
    assert gm(b, "laptop-b", "resolve", "global-sem-0001", "--ours").returncode == 0
    finished = subprocess.run(["git", "rebase", "--continue"], cwd=b, capture_output=True, text=True,
                              env={**os.environ, **GIT_ENV, "GIT_EDITOR": "true"})
    assert finished.returncode == 0, finished.stderr
    git(b, "checkout", "-q", "HEAD~1")
    detached = gm(b, "laptop-b", "remember", "A precious fact", "--layer", "semantic")
    assert detached.returncode == 3 and "HEAD is detached" in detached.stderr
    git(b, "checkout", "-q", "-")
    assert gm(b, "laptop-b", "remember", "A precious fact", "--layer", "semantic").returncode == 0


def test_the_conflict_listing_masks_a_title_let_through_with_allow_secret(machines: tuple[Store, Store]) -> None:
    """state/CONFLICT.md and state/sync.json are what a person is sent to read: a title holding a
    token (recorded with --allow-secret) shows there as `gitmem conflicts` shows it."""
    a, b = (m.root for m in machines)
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    made = gm(a, "laptop-a", "remember", "The deploy bot pushes to main", "--title",
              f"Deploys push with {token}", "--layer", "semantic", "--topic", "deploy", "--allow-secret")
    assert made.returncode == 0, made.stderr
    assert gm(a, "laptop-a", "sync").returncode == 0 and gm(b, "laptop-b", "sync").returncode == 0
    path = "global/semantic/deploy.md"
    edit(a, "**Importance:** normal", "**Importance:** high", path)  # the token's line untouched
    edit(b, "**Importance:** normal", "**Importance:** low", path)
    assert gm(a, "laptop-a", "sync").returncode == 0
    assert gm(b, "laptop-b", "sync").returncode == 3
    for name in ("state/CONFLICT.md", "state/sync.json"):
        text = read(b, name)
        assert "Deploys" in text and token not in text, name
