"""The conflicts page through a real `gitmem web` on the machine whose sync left the conflicts:
an entry, a state.md section and a runtime item, each with both sides (and the common base of an
entry), a word diff, and settled from the page as `gitmem resolve` settles it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from support import GIT_ENV, OUTSIDE_ENV, copy_store, git, run_gitmem
from webpage import WebPage, commits, start_web, stop_web

TOPIC = "global/semantic/staging.md"
STATE = "workspaces/proj/state.md"
RECORDS = "global/runtime/memories.json"


def gm(root: Path, machine: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_gitmem("--root", str(root), *args, env={"GITMEM_SERVE": "off", "GITMEM_MACHINE": machine})


def _ok(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def conflicted_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """laptop-a and laptop-b changed one entry, one state section and one runtime item each
    their own way; b's sync left the three in conflict. Made once per module (fourteen CLI
    processes), in the same isolated environment a test gets; each test settles a copy."""
    top = tmp_path_factory.mktemp("conflicted")
    (top / "home").mkdir()
    with pytest.MonkeyPatch.context() as env:
        for name in OUTSIDE_ENV:
            env.delenv(name, raising=False)
        for key, value in {**GIT_ENV, "HOME": str(top / "home"), "GIT_CONFIG_NOSYSTEM": "1"}.items():
            env.setenv(key, value)
        bare_remote = top / "remote.git"
        git(top, "init", "--bare", "-b", "main", str(bare_remote))
        return _conflict(top / "a", top / "b", bare_remote)


def _conflict(a: Path, b: Path, bare_remote: Path) -> Path:
    _ok(gm(a, "laptop-a", "init", "--remote", str(bare_remote)))
    _ok(gm(a, "laptop-a", "remember", "The staging host is 10.0.0.7 in rack four", "-l", "semantic",
           "-t", "staging"))
    _ok(gm(a, "laptop-a", "-w", "proj", "state", "Deploy", "Deploys go out on Tuesdays"))
    _ok(gm(a, "laptop-a", "runtime", "add", "Builds run on the big runner"))
    _ok(gm(a, "laptop-a", "sync"))
    _ok(gm(b, "laptop-b", "init", "--remote", str(bare_remote)))
    for root, machine, value, day, runner in ((a, "laptop-a", "10.0.0.8", "Wednesdays", "small"),
                                              (b, "laptop-b", "10.0.0.9", "Thursdays", "fast")):
        path = root / TOPIC
        path.write_text(path.read_text().replace("10.0.0.7", value))
        _ok(gm(root, machine, "-w", "proj", "state", "Deploy", f"Deploys go out on {day}"))
        _ok(gm(root, machine, "runtime", "replace", "big runner", f"Builds run on the {runner} runner"))
    _ok(gm(a, "laptop-a", "sync"))
    assert gm(b, "laptop-b", "sync").returncode == 3
    return b


@pytest.fixture
def conflicted(tmp_path: Path, conflicted_store: Path) -> Iterator[tuple[Path, WebPage]]:
    """A copy of the conflicted store of laptop-b, with its page running."""
    b = copy_store(conflicted_store, tmp_path / "b")
    page = start_web(b, env={"GITMEM_MACHINE": "laptop-b"})
    try:
        page.sign_in()
        yield b, page
    finally:
        stop_web(page)


def _cards(text: str) -> list[str]:
    return text.split('<article class="card conflict">')[1:]


def _card(text: str, needle: str) -> str:
    return next(c for c in _cards(text) if needle in c)


def test_each_conflict_shows_both_sides_the_base_and_a_word_diff(conflicted: tuple[Path, WebPage]) -> None:
    b, web = conflicted
    page = web.get("/conflicts").text
    assert len(_cards(page)) == 3
    entry = _card(page, "global-sem-0001")
    assert "Common base" in entry and "10.0.0.7" in entry  # the text both started from
    assert "laptop-a" in entry and "laptop-b" in entry
    assert "<del>10.0.0.9</del><ins>10.0.0.8</ins>" in entry or "<del>10.0.0.8</del><ins>10.0.0.9</ins>" in entry
    state = _card(page, STATE)
    assert "Wednesdays" in state and "Thursdays" in state and "Keep ours" in state
    runtime = _card(page, RECORDS)
    assert "small runner" in runtime and "fast runner" in runtime
    assert "Keep theirs" in runtime and "Keep both" not in runtime
    assert "Settle with" not in page


def test_a_state_section_and_a_runtime_item_are_settled_in_the_page(conflicted: tuple[Path, WebPage]) -> None:
    b, web = conflicted
    state_ref = next(c["entry_id"] or f'{c["path"]}:{c["line"]}' for c in _listed(b) if c["path"] == STATE)
    done = web.post("/resolve", {"target": state_ref, "how": "ours"})
    assert done.status == 303, done.text[:300]
    assert commits(b)[0].startswith(f"resolve: {state_ref} (kept laptop-b's version")
    text = (b / STATE).read_text()
    assert "Thursdays" in text and "Wednesdays" not in text and "<<<<<<<" not in text
    item = next(c["entry_id"] for c in _listed(b) if c["path"] == RECORDS)
    done = web.post("/resolve", {"target": item, "how": "theirs"})
    assert done.status == 303, done.text[:300]
    assert commits(b)[0].startswith(f"runtime resolve: {item} (kept laptop-a's version")
    data = json.loads((b / RECORDS).read_text())
    assert next(i for i in data["items"] if i["id"] == item)["content"] == "Builds run on the small runner"
    assert [c["path"] for c in _listed(b)] == [TOPIC]
    assert git(b, "status", "--porcelain").strip() == ""


def test_edit_and_keep_commits_what_resolve_after_a_hand_edit_commits(conflicted: tuple[Path, WebPage]) -> None:
    b, web = conflicted
    page = _card(web.get("/conflicts").text, "global-sem-0001")
    assert "Edit and keep" in page
    prefilled = page.split('name="text" rows="10" required>', 1)[1].split("</textarea>", 1)[0]
    assert "**Id:** global-sem-0001" in prefilled and "10.0.0.9" in prefilled  # ours, as the file has it
    import html
    edited = html.unescape(prefilled).replace("10.0.0.9 in rack four", "10.0.0.10 in rack five")
    done = web.post("/resolve/edit", {"target": "global-sem-0001", "text": edited})
    assert done.status == 303, done.text[:300]
    assert commits(b)[0] == "resolve: global-sem-0001 (kept the edited file)"
    text = (b / TOPIC).read_text()
    assert "10.0.0.10 in rack five" in text and "**Id:** global-sem-0001" in text
    assert "<<<<<<<" not in text and "10.0.0.8" not in text
    assert git(b, "status", "--porcelain").strip() == ""
    assert "global-sem-0001" not in [c["entry_id"] for c in _listed(b)]


def test_a_bad_edited_text_is_refused_and_the_markers_stay(conflicted: tuple[Path, WebPage]) -> None:
    b, web = conflicted
    before, text = commits(b), (b / TOPIC).read_text()
    key = "AKIA" + "QWERTYUIOPASDFGH"
    for typed in ("", "<<<<<<< laptop-b\n## x\n", f"## Staging\nThe key is {key}\n**Id:** global-sem-0001\n"):
        refused = web.post("/resolve/edit", {"target": "global-sem-0001", "text": typed})
        assert 400 <= refused.status < 500 and 'class="notice error"' in refused.text
        assert key not in refused.text
    refused = web.post("/resolve/edit", {"target": "global-sem-0404", "text": "## x\nbody\n"})
    assert refused.status == 404
    assert commits(b) == before and (b / TOPIC).read_text() == text


def _listed(root: Path) -> list[dict[str, object]]:
    done = gm(root, "laptop-b", "conflicts", "--json")
    return json.loads(done.stdout) if done.stdout.strip() else []  # type: ignore[no-any-return]
