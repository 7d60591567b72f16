"""History reads: the machine of each commit, finding the files that hold an id across commits, commits
before a moment, trees exported as they were, and a workspace repository's log."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from gitmem.errors import NotFoundError
from gitmem.git import gitlog, workrepo
from gitmem.git.repo import GitRepo

AUTHOR = ("Tester", "tester@example.com")


def commit(repo: GitRepo, files: dict[str, str | None], message: str) -> str:
    for rel, text in files.items():
        path = repo.root / rel
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    oid = repo.commit_paths(list(files), message, author=AUTHOR)
    assert oid is not None
    return oid


def test_walk_reports_the_machine_each_commit_was_made_on(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITMEM_MACHINE", "box-7")
    repo = GitRepo.init(tmp_path / "r")
    commit(repo, {"a.md": "a\n"}, "first")
    [info] = GitRepo(repo.root).walk()
    assert (info.machine, info.message.strip()) == ("box-7", "first")


def test_needle_finder_follows_an_id_between_files_and_memoizes(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    c1 = commit(repo, {"global/semantic/a.md": "## A\n**Id:** global-sem-0001\n",
                       "global/semantic/b.md": "## B\n**Id:** global-sem-0002\n"}, "one")
    c2 = commit(repo, {"global/semantic/a.md": "# empty\n",
                       "global/semantic/c.md": "## A\n**Id:** global-sem-0001\n"}, "move")
    c3 = commit(repo, {"global/semantic/b.md": "## B2\n**Id:** global-sem-0002\n"}, "other")
    commit(repo, {"notes.txt": "global-sem-0001\n"}, "not markdown")
    history = GitRepo(repo.root)
    finder = history.needle_finder(b"global-sem-0001", ("global", "workspaces"))
    assert [p for p, _ in finder.at(c1)] == ["global/semantic/a.md"]
    assert [p for p, _ in finder.at(c2)] == ["global/semantic/c.md"]
    assert finder.at(c3) == finder.at(c2)  # an unrelated edit: same blob, found again
    assert [c.oid for c in history.walk()][1:] == [c3, c2, c1]
    blob = finder.at(c1)[0][1]
    assert history.read_blob(blob).startswith(b"## A")


def test_commit_before_a_moment_and_exported_trees(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    c1 = commit(repo, {"global/semantic/a.md": "one\n", "README": "x\n"}, "one")
    commit(repo, {"global/semantic/a.md": "two\n"}, "two")
    history = GitRepo(repo.root)
    first = history.commit_info(c1)
    assert history.commit_before(first.time - 1) is None
    found = history.commit_before(first.time + 10**9)
    assert found is not None and found.message.startswith("two")
    dest = tmp_path / "snapshot"
    assert history.export_tree(c1, dest, ("global", "workspaces")) == 1
    assert (dest / "global/semantic/a.md").read_text() == "one\n"
    assert not (dest / "README").exists()
    assert (repo.root / "global/semantic/a.md").read_text() == "two\n"
    with pytest.raises(NotFoundError):
        history.commit_info("nope")
    with pytest.raises(NotFoundError):
        GitRepo(tmp_path / "missing")


def test_workspace_repository_log_lists_files_per_commit(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "code")
    commit(repo, {"src/a.py": "1\n"}, "a")
    commit(repo, {"src/a.py": None, "src/b.py": "2\n"}, "rename by hand")
    assert workrepo.head(repo.root) == repo.head_oid()
    commits = gitlog.commits_since(repo.root, date(2000, 1, 1))
    assert [c.files for c in commits] == [("src/a.py", "src/b.py"), ("src/a.py",)]
    assert gitlog.commits_since(repo.root, date(2090, 1, 1)) == []
    assert workrepo.head(tmp_path / "nowhere") is None


def test_looking_for_a_repository_many_times_does_not_crash(tmp_path: Path) -> None:
    """pygit2 1.21's discover_repository() drops a reference to None on every miss; a process
    that asks often (suspect marks on every search of a long-lived server) would abort. The one
    finder of code repositories must stay safe to ask that often."""
    import subprocess
    import sys

    code = ("from pathlib import Path\nfrom gitmem.git.workrepo import find_repository\n"
            f"for _ in range(20000):\n    assert find_repository(Path({str(tmp_path)!r})) is None\n"
            "print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-300:]
