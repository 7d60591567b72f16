"""Entry integrity through the real CLI: no text a person, an agent or git writes can cost an entry
its Id, split it, or stop the store. Each test is one of the cases that once did."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.format.markdown import parse_topic_file
from gitmem.store.store import Store
from gitmem.sync.remote import init_store
from gitmem.sync.run import sync
from gitmem.verbs.entries import remember
from support import GIT_ENV, Cli, commit_count, git

DB = "global/semantic/db.md"


def ok(gm: Cli, *args: str) -> str:
    result = gm(*args)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def append(root: Path, relpath: str, text: str | bytes) -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as handle:
        handle.write(text.encode("utf-8") if isinstance(text, str) else text)


def plain_commit(root: Path, message: str = "by hand", date: str | None = None) -> None:
    """A commit made with plain git and no hooks, as a sync or another tool would bring it."""
    env = {**os.environ, **GIT_ENV, **({"GIT_AUTHOR_DATE": date} if date else {})}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "commit", "-qm", message], cwd=root,
                   check=True, env=env)


def ids_in(root: Path, relpath: str) -> list[str | None]:
    return [e.id for e in parse_topic_file((root / relpath).read_text(encoding="utf-8")).entries]


# -- the entry keeps its Id whatever is appended ------------------------------------------------

def test_a_line_appended_after_the_fields_keeps_the_id_and_the_supersedes_link(gm: Cli) -> None:
    old = ok(gm, "remember", "The DB lives on db1", "-l", "semantic", "-t", "db")
    new = ok(gm, "remember", "The DB moved to db2", "-l", "semantic", "-t", "db", "--supersedes", old)
    append(gm.root, DB, "See also ops/db.md\n")  # echo "See also ops/db.md" >> db.md
    third = ok(gm, "remember", "Backups run nightly", "-l", "semantic", "-t", "db")
    assert (old, new, third) == ("global-sem-0001", "global-sem-0002", "global-sem-0003")
    assert ids_in(gm.root, DB) == [old, new, third]
    shown = gm.json("show", new)
    assert shown["body"] == "The DB moved to db2\n\nSee also ops/db.md"  # type: ignore[index]
    assert shown["fields"]["Supersedes"] == old  # type: ignore[index]
    assert gm.json("show", old)["fields"]["Superseded-by"] == new  # type: ignore[index]
    assert ok(gm, "check") == "all memory files are well-formed"


def test_the_same_edit_arriving_through_sync_keeps_its_id(tmp_path: Path, bare_remote: Path) -> None:
    laptop = Store(tmp_path / "laptop", cwd=tmp_path)
    init_store(laptop, remote=str(bare_remote), branch="main")
    first = remember(laptop, "The DB lives on db1", "semantic", topic="db").id
    sync(laptop)
    desktop = Store(tmp_path / "desktop", cwd=tmp_path)
    init_store(desktop, remote=str(bare_remote), branch="main")
    append(desktop.root, DB, "See also ops/db.md\n")
    sync(desktop)  # commits the hand edit, normalized, and pushes it
    sync(laptop)
    assert ids_in(laptop.root, DB) == [first]
    assert remember(laptop, "Backups run nightly", "semantic", topic="db").id == "global-sem-0002"
    (entry, _) = parse_topic_file((laptop.root / DB).read_text()).entries
    assert entry.body == "The DB lives on db1\n\nSee also ops/db.md"


def test_an_unclosed_fence_is_closed_inside_its_entry(gm: Cli) -> None:
    first = ok(gm, "remember", "Build notes\n```sh\nmake all", "-l", "procedural", "-t", "build")
    second = ok(gm, "remember", "Run the tests", "-l", "procedural", "-t", "build")
    assert ids_in(gm.root, "global/procedural/build.md") == [first, second]
    assert gm.json("show", first)["body"] == "Build notes\n```sh\nmake all\n```"  # type: ignore[index]


def test_an_indented_heading_stays_in_its_entry(gm: Cli) -> None:
    entry_id = ok(gm, "remember", "alpha line\n ## beta\ngamma", "-l", "semantic", "-t", "t")
    assert ids_in(gm.root, "global/semantic/t.md") == [entry_id]
    assert gm.json("show", entry_id)["body"] == "alpha line\n \\## beta\ngamma"  # type: ignore[index]


def test_leading_indentation_and_a_lone_cr_are_kept(gm: Cli) -> None:
    indented = ok(gm, "remember", "    ```\nnot a fence: indented code", "-l", "semantic", "-t", "t")
    cr = ok(gm, "remember", "progress 10%\rprogress 100%", "-l", "semantic", "-t", "t")
    ok(gm, "remember", "a third entry after them", "-l", "semantic", "-t", "t")
    assert gm.json("show", indented)["body"] == "    ```\nnot a fence: indented code"  # type: ignore[index]
    assert gm.json("show", cr)["body"] == "progress 10%\rprogress 100%"  # type: ignore[index]
    assert len(ids_in(gm.root, "global/semantic/t.md")) == 3


def test_a_second_id_line_is_reported_and_never_dropped(gm: Cli) -> None:
    first = ok(gm, "remember", "One fact", "-l", "semantic", "-t", "db")
    text = (gm.root / DB).read_text()
    doubled = text.replace(f"**Id:** {first}\n", f"**Id:** {first}\n**Id:** global-sem-0007\n")
    (gm.root / DB).write_text(doubled)
    elsewhere = gm("remember", "Another fact", "-l", "semantic", "-t", "other")
    assert elsewhere.exit_code == 0 and "gitmem: note: left uncommitted" in elsewhere.stderr
    assert f"{DB}:" in elsewhere.stderr and DB in git(gm.root, "status", "--porcelain")
    refused = gm("remember", "Into that file", "-l", "semantic", "-t", "db")
    assert refused.exit_code == 2 and "second Id line" in refused.stderr
    assert (gm.root / DB).read_text() == doubled
    plain_commit(gm.root)
    check = gm("check", "--fix")
    assert check.exit_code == 2 and f"{DB}:" in check.stdout and "second Id line" in check.stdout
    assert (gm.root / DB).read_text() == doubled
    assert gm.json("show", "global-sem-0007")["id"] == first  # type: ignore[index]


def test_ten_thousand_id_less_entries_in_one_uncommitted_file(gm: Cli) -> None:
    body = "".join(f"## Entry {i}\nText of entry {i}.\n\n" for i in range(10_000))
    append(gm.root, "global/semantic/bulk.md", "# bulk\n\n" + body)
    assert ok(gm, "remember", "one more", "-l", "semantic", "-t", "other") == "global-sem-10001"
    ids = ids_in(gm.root, "global/semantic/bulk.md")
    assert len(ids) == 10_000 and len(set(ids)) == 10_000 and None not in ids


# -- one bad file never stops the store ---------------------------------------------------------

BAD_FILES: dict[str, bytes] = {
    "global/semantic/latin1.md": b"## Caf\xe9\nnot UTF-8\n\n**Id:** global-sem-0010\n",
    "global/semantic/blob.md": b"\x00\x01\x02binary",
    "global/semantic/absurd.md": b"## Absurd\nx\n\n**Id:** global-sem-99999999999999999999999\n",
    "global/semantic/yaml.md": b"---\ntopic: [unclosed\n---\n## Yaml\ntext\n\n**Id:** global-sem-0011\n",
}


def _bad_store(gm: Cli) -> str:
    good = ok(gm, "remember", "The staging host is stage1", "-l", "semantic", "-t", "hosts")
    for relpath, data in BAD_FILES.items():
        append(gm.root, relpath, data)
    os.symlink("loop-b.md", gm.root / "global/semantic/loop-a.md")
    os.symlink("loop-a.md", gm.root / "global/semantic/loop-b.md")
    plain_commit(gm.root, "arrived through sync")
    os.mkfifo(gm.root / "global/semantic/fifo.md")  # git cannot commit one; it sits in the tree
    return good


def test_bad_files_are_skipped_by_reads_and_listed_by_status_and_check(gm: Cli) -> None:
    good = _bad_store(gm)
    listed = gm("list")
    assert listed.exit_code == 0 and good in listed.stdout and "global-sem-99999999999999999999999" in listed.stdout
    assert "files skipped, see `gitmem check`" in listed.stderr
    assert gm.json("show", good)["id"] == good  # type: ignore[index]
    found = gm("search", "staging host")
    assert found.exit_code == 0 and good in found.stdout and "files skipped" in found.stderr
    card = gm.json("context")
    assert "files skipped" in card["text"] and "global/semantic/blob.md" in card["skipped"]  # type: ignore[index]
    status = gm.json("status")
    problems = "\n".join(status["problems"])  # type: ignore[index]
    for expected in ("latin1.md:1: not UTF-8 text (byte 0xe9)", "blob.md:1: binary file",
                     "absurd.md:1: malformed Id", "yaml.md:1: invalid YAML frontmatter",
                     "loop-a.md:1: not a regular file (a symbolic link)", "fifo.md:1: not a regular file (a FIFO)"):
        assert expected in problems, expected
    check = gm("check")
    assert check.exit_code == 2
    for expected in ("latin1.md:1:", "blob.md:1:", "absurd.md:1:", "yaml.md:1:", "loop-b.md:1:", "fifo.md:1:"):
        assert f"global/semantic/{expected}" in check.stdout, expected
    # Writes go on; numbers held by the unreadable files are not given again.
    assert ok(gm, "remember", "Backups run nightly", "-l", "semantic", "-t", "hosts") == "global-sem-0012"


def test_search_over_a_fifo_named_like_a_memory_file_does_not_hang(gm: Cli) -> None:
    ok(gm, "remember", "The staging host is stage1", "-l", "semantic", "-t", "hosts")
    ok(gm, "reindex")
    os.mkfifo(gm.root / "global/semantic/fifo.md")
    done = subprocess.run([sys.executable, "-m", "gitmem", "--root", str(gm.root), "search", "staging"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "global-sem-0001" in done.stdout
    assert "1 file skipped" in done.stderr


def test_a_bad_file_arriving_through_sync_stops_nothing(tmp_path: Path, bare_remote: Path) -> None:
    laptop = Store(tmp_path / "laptop", cwd=tmp_path)
    init_store(laptop, remote=str(bare_remote), branch="main")
    kept = remember(laptop, "The staging host is stage1", "semantic", topic="hosts").id
    sync(laptop)
    desktop = tmp_path / "desktop"
    git(tmp_path, "clone", "-q", str(bare_remote), str(desktop))
    append(desktop, "global/semantic/latin1.md", BAD_FILES["global/semantic/latin1.md"])
    plain_commit(desktop)
    git(desktop, "push", "-q", "origin", "main")
    sync(laptop)
    assert remember(laptop, "Backups run nightly", "semantic", topic="hosts").id == "global-sem-0011"
    gm = Cli(laptop.root, __import__("click.testing").testing.CliRunner())
    assert gm.json("show", kept)["id"] == kept  # type: ignore[index]
    listed = gm("list")
    assert listed.exit_code == 0 and "1 file skipped" in listed.stderr


def test_an_unreadable_uncommitted_hand_edit_is_left_out_and_blocks_no_other_write(gm: Cli) -> None:
    ok(gm, "remember", "One fact", "-l", "semantic", "-t", "db")
    append(gm.root, "global/semantic/pasted.md", b"## Pasted\n\xff\xfe\n")
    before = commit_count(gm.root)
    result = gm("remember", "Another fact", "-l", "semantic", "-t", "db")
    assert result.exit_code == 0 and "internal error" not in result.stderr
    note = [line for line in result.stderr.splitlines() if line.startswith("gitmem: note: left uncommitted")]
    assert len(note) == 1 and "global/semantic/pasted.md:2 (not UTF-8 text (byte 0xff))" in note[0]
    assert commit_count(gm.root) == before + 1
    assert "global/semantic/pasted.md" not in git(gm.root, "ls-files")
    assert (gm.root / "global/semantic/pasted.md").read_bytes() == b"## Pasted\n\xff\xfe\n"
    refused = gm("remember", "Into it", "-l", "semantic", "-t", "pasted")
    assert refused.exit_code == 2
    assert refused.stderr.startswith("gitmem: error: global/semantic/pasted.md:2: not UTF-8 text (byte 0xff)")
    assert commit_count(gm.root) == before + 1


def test_a_bom_is_kept_and_blocks_nothing(gm: Cli) -> None:
    append(gm.root, "global/semantic/bom.md", "\ufeff# Notes\n\n## Written in Notepad\nbody\r\n".encode())
    entry_id = ok(gm, "remember", "after the BOM file", "-l", "semantic", "-t", "bom")
    data = (gm.root / "global/semantic/bom.md").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf# Notes") and data.count(b"\r\n") >= 4
    assert ids_in(gm.root, "global/semantic/bom.md") == ["global-sem-0001", entry_id]


# -- check: errors and hints, dates from history -------------------------------------------------

def test_missing_dates_are_hints_and_check_fix_takes_created_from_history(gm: Cli) -> None:
    append(gm.root, DB, "## Hand written\nlong ago\n\n**Id:** global-sem-0001\n\n## No id\nalso old\n")
    plain_commit(gm.root, "old entries", date="2024-03-05T10:00:00")
    check = gm("check")
    assert check.exit_code == 0, check.output
    assert f"hint: {DB}:1: entry has no Created date" in check.stdout
    ok(gm, "check", "--fix")
    first, second = parse_topic_file((gm.root / DB).read_text()).entries
    assert first.fields == {"Id": "global-sem-0001", "Created": "2024-03-05"}
    assert second.fields == {"Id": "global-sem-0002", "Created": "2024-03-05"}
    assert ok(gm, "check") == "all memory files are well-formed"


def test_the_pre_commit_hook_still_dates_a_brand_new_entry_today(gm: Cli) -> None:
    ok(gm, "hooks", "install")
    append(gm.root, DB, "## Brand new\nwritten now\n")
    git(gm.root, "add", DB)
    git(gm.root, "commit", "-qm", "new entry")
    (entry,) = parse_topic_file((gm.root / DB).read_text()).entries
    today = Store(gm.root).today().isoformat()
    assert entry.fields == {"Id": "global-sem-0001", "Created": today, "Verified": today}


# -- workspace keys, topic names, the numbering -------------------------------------------------

def test_reserved_and_invalid_workspace_folders_are_reported_never_listed_twice(gm: Cli) -> None:
    ok(gm, "remember", "a global fact", "-l", "semantic", "-t", "facts")
    append(gm.root, "workspaces/global/semantic/facts.md", "## Copied by hand\nx\n\n**Id:** global-sem-0001\n")
    append(gm.root, "workspaces/Bad Name/semantic/t.md", "## In a bad folder\nx\n")
    plain_commit(gm.root)
    listed = gm.json("list")
    assert [r["id"] for r in listed] == ["global-sem-0001"]  # type: ignore[union-attr]
    check = gm("check")
    assert check.exit_code == 2
    assert "workspaces/global:1: not a valid workspace key: 'global' is reserved" in check.stdout
    assert "workspaces/Bad Name:1: not a valid workspace key" in check.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--workspace", "global", "list"], "'global' is reserved"),
    (["--workspace", "", "list"], "workspace key must not be empty"),
    (["list", "--workspace", ""], "workspace key must not be empty"),
    (["search", "x", "--workspace", ""], "workspace key must not be empty"),
    (["--workspace", "com1", "list"], "reserved file name on Windows"),
    (["associate", "nul"], "reserved file name on Windows"),
    (["remember", "x", "-l", "semantic", "--topic", "CON"], "reserved file name on Windows"),
    (["context", "--cwd", "/nonexistent/folder"], "does not exist"),
])
def test_bad_workspace_keys_topics_and_folders_are_refused(gm: Cli, args: list[str], message: str) -> None:
    result = gm(*args)
    assert result.exit_code == 2 and message in result.stderr, result.output


def test_an_id_naming_another_layer_does_not_move_the_numbering(gm: Cli) -> None:
    assert ok(gm, "remember", "first how-to", "-l", "procedural", "-t", "x") == "global-pro-0001"
    append(gm.root, "global/procedural/x.md", "\n## Misfiled\nx\n\n**Id:** global-sem-0042\n")
    plain_commit(gm.root)
    assert ok(gm, "remember", "second how-to", "-l", "procedural", "-t", "y") == "global-pro-0002"
    check = gm("check")
    assert check.exit_code == 0, check.output
    assert "global/procedural/x.md:17: Id global-sem-0042 was given in global/semantic" in check.stdout
    assert ok(gm, "remember", "a fact", "-l", "semantic", "-t", "x") == "global-sem-0043"


def test_an_unreadable_state_file_is_named_in_the_card_and_refuses_its_own_write(gm: Cli) -> None:
    ok(gm, "--workspace", "proj", "state", "Layout", "src/ and tests/")
    append(gm.root, "workspaces/proj/state.md", b"\xff\xfe broken\n")
    plain_commit(gm.root)
    card = gm.json("context", workspace="proj")
    assert "- workspaces/proj/state.md cannot be read" in card["text"]  # type: ignore[index]
    assert card["skipped"] == ["workspaces/proj/state.md"]  # type: ignore[index]
    refused = gm("--workspace", "proj", "state", "Layout", "changed")
    assert refused.exit_code == 2 and "workspaces/proj/state.md:" in refused.stderr
    assert "not UTF-8 text" in refused.stderr
    ok(gm, "--workspace", "proj", "working", "--activity", "the working file is another file")


def test_an_unreadable_layer_index_stops_no_write(gm: Cli) -> None:
    ok(gm, "remember", "first", "-l", "semantic", "-t", "a")
    (gm.root / "global/semantic.md").write_bytes(b"\xff\xfe\x00 not an index")
    plain_commit(gm.root)
    assert ok(gm, "remember", "second", "-l", "semantic", "-t", "a") == "global-sem-0002"
    assert (gm.root / "global/semantic.md").read_text().startswith("# Semantic")  # regenerated
