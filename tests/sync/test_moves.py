"""One Id lives in one place whatever two machines did with it: the same topic renamed on both,
an entry moved by hand to two different files, a rename on one machine and an edit or a new
entry in the old file on the other. Each case through `gitmem sync` and through plain
`git pull` with the hooks installed, between two real clones of one bare remote."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from sync.machines import commit_by_hand, duplicated, id_places, ok, sh_git, tree_of, two_machines

from gitmem.format.markdown import parse_topic_file
from gitmem.githooks.install import install as install_hooks
from support import Cli, git

SEM = "global/semantic"
Change = Callable[[Cli], None]


def exchange(a: Cli, b: Cli, through: str, change_a: Change, change_b: Change) -> None:
    """a changes and publishes; b changes and merges a's work; a takes b's merge."""
    if through == "pull":
        install_hooks(a.root)
        install_hooks(b.root)
    change_a(a)
    if through == "sync":
        ok(a, "sync")
    else:
        pushed = sh_git(a.root, "push", "-q", "origin", "main")
        assert pushed.returncode == 0, pushed.stderr
    change_b(b)
    if through == "sync":
        ok(b, "sync")
        ok(a, "sync")
    else:
        pulled = sh_git(b.root, "pull", "-q", "--no-rebase", "origin", "main")
        assert pulled.returncode == 0, pulled.stdout + pulled.stderr
        assert sh_git(b.root, "push", "-q", "origin", "main").returncode == 0
        pulled = sh_git(a.root, "pull", "-q", "--no-rebase", "origin", "main")
        assert pulled.returncode == 0, pulled.stdout + pulled.stderr


def assert_one_place(a: Cli, b: Cli) -> dict[str, list[str]]:
    """Every Id in exactly one file, the same tree on both machines, check clean, nothing pending."""
    for machine in (a, b):
        assert duplicated(machine.root) == {}, (machine.root.name, id_places(machine.root))
        check = machine("check")
        assert check.exit_code == 0, check.output
        assert git(machine.root, "status", "--porcelain") == ""
    assert tree_of(a.root) == tree_of(b.root)
    return id_places(a.root)


def read(machine: Cli, relpath: str) -> str:
    return (machine.root / relpath).read_text(encoding="utf-8")


def edit(machine: Cli, relpath: str, old: str, new: str, *, commit: bool = True) -> None:
    path = machine.root / relpath
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    if commit:
        commit_by_hand(machine.root, f"edit {relpath} by hand")


def cut(machine: Cli, ident: str, source: str, target: str, change: tuple[str, str] | None = None) -> None:
    """Cut one entry out of `source` and paste it into a new topic file `target`, by hand."""
    text = read(machine, source)
    entry = parse_topic_file(text, source).entries
    raw = next(e.raw for e in entry if e.id == ident)
    assert raw
    (machine.root / source).write_text(text.replace(raw, ""), encoding="utf-8")
    topic = Path(target).stem
    pasted = raw.replace(*change) if change else raw
    (machine.root / target).write_text(
        f"---\ntopic: {topic}\nlayer: semantic\nscope: global\n---\n# {topic}\n\n{pasted}",
        encoding="utf-8")
    commit_by_hand(machine.root, f"move {ident} to {target} by hand")


THROUGH = pytest.mark.parametrize("through", ["sync", "pull"])


@pytest.fixture
def pair(tmp_path: Path, bare_remote: Path) -> tuple[Cli, Cli]:
    return two_machines(tmp_path, bare_remote, ("Backups run at 02:00", "x"),
                        ("Disks are checked weekly", "x"), ("Lunch is at noon", "other"))


def test_the_same_topic_renamed_to_two_names_lives_in_one_file(pair: tuple[Cli, Cli]) -> None:
    a, b = pair
    exchange(a, b, "sync",
             lambda m: ok(m, "mv-topic", "semantic/x", "semantic/x-by-a") and None,
             lambda m: ok(m, "mv-topic", "semantic/x", "semantic/x-by-b") and None)
    places = assert_one_place(a, b)
    assert places["global-sem-0001"] == places["global-sem-0002"] == [f"{SEM}/x-by-a.md"]
    assert not (a.root / f"{SEM}/x-by-b.md").exists() and not (a.root / f"{SEM}/x.md").exists()
    assert "Backups run at 02:00" in ok(b, "show", "global-sem-0001")
    forgotten = b("forget", "global-sem-0001")
    assert forgotten.exit_code == 0, forgotten.output
    assert id_places(b.root)["global-sem-0001"] == [f"{SEM}/x-by-a.md"]
    assert "**Forgotten:**" in read(b, f"{SEM}/x-by-a.md")


def test_a_plain_pull_stops_at_a_topic_renamed_to_two_names_and_sync_settles_it(
        pair: tuple[Cli, Cli]) -> None:
    """git itself refuses to merge one file renamed to two names (a rename/rename conflict, no
    merge commit, nothing for the hooks to settle); aborting the merge and syncing settles it."""
    a, b = pair
    install_hooks(b.root)
    ok(a, "mv-topic", "semantic/x", "semantic/x-by-a")
    assert sh_git(a.root, "push", "-q", "origin", "main").returncode == 0
    ok(b, "mv-topic", "semantic/x", "semantic/x-by-b")
    pulled = sh_git(b.root, "pull", "-q", "--no-rebase", "origin", "main")
    assert pulled.returncode != 0 and "rename/rename" in pulled.stdout
    assert sh_git(b.root, "merge", "--abort").returncode == 0
    ok(b, "sync")
    ok(a, "sync")
    places = assert_one_place(a, b)
    assert places["global-sem-0001"] == places["global-sem-0002"] == [f"{SEM}/x-by-a.md"]


@THROUGH
def test_the_same_topic_renamed_to_one_name_and_edited_on_both_keeps_both_edits(
        pair: tuple[Cli, Cli], through: str) -> None:
    a, b = pair

    def change(machine: Cli, old: str, new: str) -> None:
        ok(machine, "mv-topic", "semantic/x", "semantic/y")
        edit(machine, f"{SEM}/y.md", old, new)

    exchange(a, b, through, lambda m: change(m, "Backups run at 02:00\n", "Backups run at 04:00\n"),
             lambda m: change(m, "Disks are checked weekly\n", "Disks are checked daily\n"))
    places = assert_one_place(a, b)
    assert places["global-sem-0001"] == places["global-sem-0002"] == [f"{SEM}/y.md"]
    text = read(a, f"{SEM}/y.md")
    assert "Backups run at 04:00" in text and "Disks are checked daily" in text
    assert text.count("**Id:**") == 2


@THROUGH
@pytest.mark.parametrize("renamer", ["a", "b"])
def test_a_rename_on_one_machine_takes_an_edit_made_in_the_old_file_on_the_other(
        pair: tuple[Cli, Cli], through: str, renamer: str) -> None:
    a, b = pair
    rename: Change = lambda m: ok(m, "mv-topic", "semantic/x", "semantic/renamed") and None  # noqa: E731
    change: Change = lambda m: edit(m, f"{SEM}/x.md", "Backups run at 02:00\n",  # noqa: E731
                                    "Backups run at 05:15\n")
    exchange(a, b, through, *((rename, change) if renamer == "a" else (change, rename)))
    places = assert_one_place(a, b)
    assert places["global-sem-0001"] == places["global-sem-0002"] == [f"{SEM}/renamed.md"]
    assert "05:15" in read(a, f"{SEM}/renamed.md")
    assert not (a.root / f"{SEM}/x.md").exists()


@THROUGH
@pytest.mark.parametrize("renamer", ["a", "b"])
def test_a_rename_on_one_machine_takes_an_entry_added_to_the_old_file_on_the_other(
        pair: tuple[Cli, Cli], through: str, renamer: str) -> None:
    a, b = pair
    rename: Change = lambda m: ok(m, "mv-topic", "semantic/x", "semantic/renamed") and None  # noqa: E731
    add: Change = lambda m: ok(m, "remember", "Restores are tested monthly", "-l", "semantic",  # noqa: E731
                               "-t", "x") and None
    exchange(a, b, through, *((rename, add) if renamer == "a" else (add, rename)))
    places = assert_one_place(a, b)
    new = next(i for i, paths in places.items() if "Restores are tested monthly" in read(a, paths[0]))
    assert places[new] == places["global-sem-0001"] == [f"{SEM}/renamed.md"]
    assert not (a.root / f"{SEM}/x.md").exists()


@THROUGH
@pytest.mark.parametrize("edited", [False, True])
def test_an_entry_moved_by_hand_to_two_files_lives_in_one(
        pair: tuple[Cli, Cli], through: str, edited: bool) -> None:
    a, b = pair
    change = ("Backups run at 02:00\n", "Backups run at 02:30\n") if edited else None
    exchange(a, b, through, lambda m: cut(m, "global-sem-0001", f"{SEM}/x.md", f"{SEM}/q.md", change),
             lambda m: cut(m, "global-sem-0001", f"{SEM}/x.md", f"{SEM}/r.md"))
    places = assert_one_place(a, b)
    assert places["global-sem-0001"] == [f"{SEM}/q.md"]
    assert places["global-sem-0002"] == [f"{SEM}/x.md"]
    assert not (a.root / f"{SEM}/r.md").exists()
    assert ("02:30" if edited else "02:00") in read(a, f"{SEM}/q.md")
