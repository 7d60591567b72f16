"""The runtime verbs on a real store through the CLI: budgets, overflow, matching, branches, hand
edits, the context card and the pre-commit hook."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from support import Cli, commit_count, git

MEMORY = "global/runtime/MEMORY.md"
USER = "global/runtime/USER.md"
RECORDS = "global/runtime/memories.json"


def records(root: Path, path: str = RECORDS) -> list[dict[str, object]]:
    items: list[dict[str, object]] = json.loads((root / path).read_text(encoding="utf-8"))["items"]
    return items


def contents(root: Path, target: str = "memory", path: str = RECORDS) -> list[object]:
    return [r["content"] for r in records(root, path) if r["target"] == target]


def set_budgets(root: Path, **limits: int) -> None:
    registry = json.loads((root / "memory.json").read_text(encoding="utf-8"))
    registry.setdefault("settings", {})["runtime"] = limits
    (root / "memory.json").write_text(json.dumps(registry, indent=2) + "\n", encoding="utf-8")
    git(root, "commit", "-qam", "budgets")


def snapshot(root: Path) -> tuple[int, dict[str, bytes]]:
    files = {p: (root / p).read_bytes() for p in (MEMORY, USER, RECORDS) if (root / p).exists()}
    return commit_count(root), files


# -- add, duplicates, files ---------------------------------------------------------------------
def test_add_writes_records_and_projections_in_one_commit(gm: Cli) -> None:
    before = commit_count(gm.root)
    out = gm("runtime", "add", "Prefers short answers", "--target", "user")
    assert out.exit_code == 0, out.output
    assert gm("runtime", "add", "Tests  run with\npytest -q", "--importance", "critical").exit_code == 0
    assert gm("runtime", "add", "Lint with ruff").exit_code == 0
    assert commit_count(gm.root) == before + 3
    assert (gm.root / USER).read_text() == "Prefers short answers\n"
    assert (gm.root / MEMORY).read_text() == "Tests run with pytest -q\n§\nLint with ruff\n"
    stored = records(gm.root)
    assert [r["target"] for r in stored] == ["user", "memory", "memory"]
    assert stored[1]["importance"] == "critical" and str(stored[1]["id"]).startswith("rt-")
    assert "runtime add: " in git(gm.root, "log", "-1", "--format=%s")
    assert git(gm.root, "status", "--porcelain") == ""


def test_exact_duplicate_add_changes_nothing_and_says_so(gm: Cli) -> None:
    gm("runtime", "add", "Lint with ruff")
    state = snapshot(gm.root)
    again = gm("runtime", "add", "  Lint   with ruff ")
    assert again.exit_code == 0 and "nothing changed" in again.stdout
    assert snapshot(gm.root) == state
    data = gm.json("runtime", "add", "Lint with ruff")
    assert isinstance(data, dict) and data["action"] == "duplicate" and data["changed"] is False


@pytest.mark.parametrize(("args", "needle"), [
    (["runtime", "add", "a § b"], "contains §"),
    (["runtime", "add", "x" * 9000], "one item holds at most 8192 bytes"),
    (["runtime", "add", "me", "--target", "user", "--scope", "workspace", "--workspace", "w1"],
     "global scope only"),
    (["runtime", "add", "me", "--target", "user", "--branch", "main"], "target memory only"),
])
def test_bad_runtime_input_is_exit_2_and_writes_nothing(gm: Cli, args: list[str], needle: str) -> None:
    state = snapshot(gm.root)
    result = gm(*args)
    assert result.exit_code == 2 and needle in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert snapshot(gm.root) == state


def test_workspace_scope_has_its_own_memory(gm: Cli) -> None:
    assert gm("runtime", "add", "Service runs on port 8080", "--scope", "workspace",
              "--workspace", "shop").exit_code == 0
    path = "workspaces/shop/runtime/MEMORY.md"
    assert (gm.root / path).read_text() == "Service runs on port 8080\n"
    assert not (gm.root / "workspaces/shop/runtime/USER.md").exists()
    assert "shop" in json.loads((gm.root / "memory.json").read_text())["workspaces"]
    shown = gm.json("runtime", "show", "--workspace", "shop")
    assert isinstance(shown, dict)
    assert [b["path"] for b in shown["scopes"]] == [USER, MEMORY, path]


# -- replace and remove -------------------------------------------------------------------------
def test_replace_and_remove_by_exact_text_substring_or_id(gm: Cli) -> None:
    gm("runtime", "add", "Deploy with make ship")
    gm("runtime", "add", "make")
    assert gm("runtime", "replace", "make", "make is GNU make 4").exit_code == 0  # exact wins
    assert contents(gm.root) == ["Deploy with make ship", "make is GNU make 4"]
    assert gm("runtime", "replace", "ship", "Deploy with make deploy").exit_code == 0
    ident = records(gm.root)[0]["id"]
    assert gm("runtime", "remove", str(ident)).exit_code == 0
    assert contents(gm.root) == ["make is GNU make 4"]
    assert (gm.root / MEMORY).read_text() == "make is GNU make 4\n"


def test_ambiguous_or_missing_match_lists_candidates_and_changes_nothing(gm: Cli) -> None:
    gm("runtime", "add", "Deploy staging first")
    gm("runtime", "add", "Deploy production on Tuesdays")
    state = snapshot(gm.root)
    ambiguous = gm("runtime", "remove", "Deploy")
    assert ambiguous.exit_code == 2
    assert "Deploy staging first" in ambiguous.stderr and "Deploy production on Tuesdays" in ambiguous.stderr
    assert "nothing changed" in ambiguous.stderr and len(ambiguous.stderr.strip().splitlines()) == 1
    missing = gm("runtime", "replace", "nightly", "x")
    assert missing.exit_code == 2 and "no memory item matches" in missing.stderr
    assert "Deploy staging first" in missing.stderr
    assert snapshot(gm.root) == state


def test_replace_that_would_overflow_fails_with_nothing_changed(gm: Cli) -> None:
    set_budgets(gm.root, memoryLimitBytes=100)
    gm("runtime", "add", "a" * 40, "--importance", "low")
    gm("runtime", "add", "b" * 40)
    state = snapshot(gm.root)
    result = gm("runtime", "replace", "bbbb", "c" * 70)
    assert result.exit_code == 2 and "over its budget of 100" in result.stderr
    low = next(str(r["id"]) for r in records(gm.root) if str(r["content"]).startswith("a"))
    assert f"--make-room (moves {low} into the layers" in result.stderr
    assert snapshot(gm.root) == state
    set_budgets(gm.root, userLimitBytes=100)  # a user item never enters the layers: the message says so
    gm("runtime", "add", "a" * 40, "--importance", "low", "--target", "user")
    gm("runtime", "add", "b" * 40, "--target", "user")
    user = gm("runtime", "replace", "bbbb", "c" * 70, "--target", "user")
    assert user.exit_code == 2 and "into USER.archive.md, as an add would" in user.stderr


def test_replace_with_make_room_moves_the_least_important_items_out_in_one_commit(gm: Cli) -> None:
    set_budgets(gm.root, memoryLimitBytes=100)
    gm("runtime", "add", "The staging database listens on port 5433", "--importance", "low")
    gm("runtime", "add", "b" * 40)
    before = commit_count(gm.root)
    done = gm("runtime", "replace", "bbbb", "Deploys run from the release branch, never from main "
              "(checked by CI)", "--make-room", "--json")
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["action"] == "replaced" and [m["entry"] for m in data["moved"]] == ["global-sem-0001"]
    assert commit_count(gm.root) == before + 1
    assert contents(gm.root) == ["Deploys run from the release branch, never from main (checked by CI)"]
    assert gm.json("show", "global-sem-0001")["title"].startswith("The staging database")  # type: ignore[index]


def test_archive_moves_one_item_out_on_demand_with_its_provenance(gm: Cli) -> None:
    gm("runtime", "add", "Lesson learned: run the linter before pushing")
    gm("runtime", "add", "Prefers tabs", "--target", "user")
    item = str(records(gm.root)[0]["id"])
    before = commit_count(gm.root)
    done = gm("runtime", "archive", "linter")
    assert done.exit_code == 0, done.output
    assert "global-lrn-0001" in done.stdout and commit_count(gm.root) == before + 1
    assert gm.json("show", "global-lrn-0001")["fields"]["Source"] == f"runtime:{item}"  # type: ignore[index]
    assert "linter" not in (gm.root / MEMORY).read_text()
    user = gm("runtime", "archive", "tabs", "--target", "user")
    assert user.exit_code == 0 and "Prefers tabs" in (gm.root / "global/runtime/USER.archive.md").read_text()
    missing = gm("runtime", "archive", "nothing like this")
    assert missing.exit_code == 2 and commit_count(gm.root) == before + 2


# -- overflow -----------------------------------------------------------------------------------
def test_overflowing_add_archives_into_layers_reports_and_is_searchable(gm: Cli) -> None:
    set_budgets(gm.root, memoryLimitBytes=200)
    gm("runtime", "add", "The staging database is Postgres 15 on port 5433", "--importance", "low")
    gm("runtime", "add", "Lesson learned: never run migrations on Friday evenings")
    gm("runtime", "add", "Release branches are cut every Monday", "--importance", "critical")
    old = {str(r["content"]): str(r["id"]) for r in records(gm.root)}
    before = commit_count(gm.root)
    out = gm("runtime", "add", "Builds use Python 3.12 and uv for environments" * 3)
    assert out.exit_code == 0, out.output
    assert commit_count(gm.root) == before + 1
    assert "2 item(s) moved out" in out.stdout
    sem_id, lrn_id = "global-sem-0001", "global-lrn-0001"
    assert f"{old['The staging database is Postgres 15 on port 5433']} -> {sem_id}" in out.stdout
    assert f"{old['Lesson learned: never run migrations on Friday evenings']} -> {lrn_id}" in out.stdout
    assert "Release branches" in (gm.root / MEMORY).read_text()  # critical never leaves
    assert "Postgres" not in (gm.root / MEMORY).read_text()
    entry = gm.json("show", sem_id)
    assert isinstance(entry, dict)
    assert entry["fields"]["Source"] == f"runtime:{old['The staging database is Postgres 15 on port 5433']}"
    assert entry["fields"]["Importance"] == "low" and entry["path"] == "global/semantic/runtime-memory.md"
    assert gm.json("show", lrn_id)["path"] == "global/learnings/runtime-memory.md"  # type: ignore[index]
    hits = gm.json("search", "Postgres staging database")
    assert isinstance(hits, list) and hits[0]["id"] == sem_id
    assert git(gm.root, "status", "--porcelain") == ""


def test_user_items_leave_for_the_archive_list_never_the_layers(gm: Cli) -> None:
    set_budgets(gm.root, userLimitBytes=70)
    gm("runtime", "add", "Name is Ada, works on compilers", "--target", "user", "--importance", "low")
    out = gm("runtime", "add", "Prefers answers in French, short and direct", "--target", "user")
    assert out.exit_code == 0 and "global/runtime/USER.archive.md" in out.stdout
    archive = (gm.root / "global/runtime/USER.archive.md").read_text()
    assert "Name is Ada, works on compilers" in archive
    assert not (gm.root / "global/semantic").exists()
    assert (gm.root / USER).read_text() == "Prefers answers in French, short and direct\n"


def test_critical_items_alone_over_budget_refuse_the_add(gm: Cli) -> None:
    set_budgets(gm.root, memoryLimitBytes=100)
    gm("runtime", "add", "c" * 80, "--importance", "critical")
    gm("runtime", "add", "n" * 10, "--importance", "low")
    state = snapshot(gm.root)
    result = gm("runtime", "add", "x" * 30)
    assert result.exit_code == 2
    assert "holds at most 100 bytes" in result.stderr and "critical items alone use 80 bytes" in result.stderr
    assert snapshot(gm.root) == state


# -- hand edits ---------------------------------------------------------------------------------
def test_hand_edited_line_survives_the_next_add_and_is_recorded(gm: Cli) -> None:
    gm("runtime", "add", "Tests run with pytest -q")
    gm("runtime", "add", "Deploy with make ship")
    path = gm.root / MEMORY
    path.write_text("Tests run with pytest -q -x\n§\nDeploy with make ship\nUse ruff for lint\n")
    edited_at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC).timestamp()
    os.utime(path, (edited_at, edited_at))
    shown = gm.json("runtime", "show", "--target", "memory", "--scope", "global")
    assert isinstance(shown, dict)
    assert [i["content"] for i in shown["scopes"][0]["items"]] == [
        "Tests run with pytest -q -x", "Deploy with make ship", "Use ruff for lint"]
    out = gm("runtime", "add", "CI runs on GitHub Actions")
    assert out.exit_code == 0 and "imported hand edit" in out.stdout
    assert contents(gm.root) == ["Tests run with pytest -q -x", "Deploy with make ship",
                                 "Use ruff for lint", "CI runs on GitHub Actions"]
    assert path.read_text().splitlines()[0] == "Tests run with pytest -q -x"
    changed, added = records(gm.root)[0], records(gm.root)[2]
    assert changed["updated_at"] == "2026-01-02T03:04:05Z" != changed["created_at"]
    assert added["created_at"] == added["updated_at"] == "2026-01-02T03:04:05Z"
    path.write_text(path.read_text().replace("Deploy with make ship\n§\n", ""))
    gm("runtime", "add", "One more")
    assert "Deploy with make ship" not in contents(gm.root)
    assert git(gm.root, "status", "--porcelain") == ""


def test_rule_breaking_hand_edit_is_reported_with_its_line_and_kept(gm: Cli) -> None:
    gm("runtime", "add", "First")
    path = gm.root / MEMORY
    path.write_text("First\n§\nsecond § third\n")
    result = gm("runtime", "add", "Another")
    assert result.exit_code == 2 and f"{MEMORY}:3: contains §" in result.stderr
    assert path.read_text() == "First\n§\nsecond § third\n"
    assert contents(gm.root) == ["First"]
    card = gm("context", "--cwd", str(gm.root.parent))
    assert f"{MEMORY}:3: contains §" in card.stdout


def test_stale_projection_is_rendered_again_not_taken_for_an_edit(gm: Cli) -> None:
    gm("runtime", "add", "Alpha")
    gm("runtime", "add", "Beta")
    data = json.loads((gm.root / RECORDS).read_text())
    data["items"].append({**data["items"][0], "id": "rt-00000001", "content": "Gamma"})
    (gm.root / RECORDS).write_text(json.dumps(data, indent=2))
    gm("runtime", "add", "Delta")
    assert contents(gm.root) == ["Alpha", "Beta", "Gamma", "Delta"]
    assert (gm.root / MEMORY).read_text() == "Alpha\n§\nBeta\n§\nGamma\n§\nDelta\n"


def test_committed_hand_edit_is_imported_by_the_pre_commit_hook(gm: Cli) -> None:
    assert gm("hooks", "install").exit_code == 0
    gm("runtime", "add", "Alpha")
    path = gm.root / MEMORY
    path.write_text("Alpha two\n§\nBeta\n")
    git(gm.root, "commit", "-qam", "edit memory by hand")
    assert contents(gm.root) == ["Alpha two", "Beta"]
    assert git(gm.root, "status", "--porcelain") == ""
    assert "memories.json" in git(gm.root, "show", "--stat", "HEAD")
    path.write_text("Alpha two\n§\nBeta\nbad § line\n")
    refused = git(gm.root, "commit", "-qam", "bad", check=False)
    assert refused == "" and "Beta" in path.read_text()
    assert git(gm.root, "log", "-1", "--format=%s").strip() == "edit memory by hand"


def test_the_hook_imports_an_edit_whose_first_part_was_committed_without_it(gm: Cli) -> None:
    gm("runtime", "add", "Alpha")
    path = gm.root / MEMORY
    path.write_text("Alpha\nTyped before the hook\n")
    git(gm.root, "commit", "-qam", "no hook yet")  # memories.json does not know this line
    (gm.root / "state" / "runtime.json").unlink(missing_ok=True)  # like a fresh clone
    assert gm("hooks", "install").exit_code == 0
    path.write_text("Alpha\nTyped before the hook\nTyped with the hook\n")
    git(gm.root, "commit", "-qam", "with the hook")
    assert contents(gm.root) == ["Alpha", "Typed before the hook", "Typed with the hook"]
    assert git(gm.root, "status", "--porcelain") == ""


def test_committed_edit_of_the_records_renders_the_projections(gm: Cli) -> None:
    assert gm("hooks", "install").exit_code == 0
    gm("runtime", "add", "Alpha")
    data = json.loads((gm.root / RECORDS).read_text())
    data["items"][0]["content"] = "Alpha, edited in the JSON"
    (gm.root / RECORDS).write_text(json.dumps(data, indent=2) + "\n")
    git(gm.root, "commit", "-qam", "edit the records")
    assert (gm.root / MEMORY).read_text() == "Alpha, edited in the JSON\n"
    assert git(gm.root, "show", f"HEAD:{MEMORY}") == "Alpha, edited in the JSON\n"
    assert git(gm.root, "status", "--porcelain") == ""


# -- branches and the context card --------------------------------------------------------------
@pytest.fixture
def project(tmp_path: Path) -> Path:
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "start")
    return repo


def test_branch_items_show_only_on_their_branches(gm: Cli, project: Path, tmp_path: Path) -> None:
    gm("runtime", "add", "Always visible")
    gm("runtime", "add", "Only on feature", "--branch", "feature")
    gm("runtime", "add", "Main or release", "--branch", "main", "--branch", "release")

    def card(folder: Path) -> str:
        out = gm("context", "--cwd", str(folder), "--workspace", "proj")
        assert out.exit_code == 0, out.output
        return out.stdout

    on_main = card(project)
    assert "Always visible" in on_main and "Main or release" in on_main and "Only on feature" not in on_main
    git(project, "checkout", "-q", "-b", "feature")
    on_feature = card(project)
    assert "Only on feature" in on_feature and "Main or release" not in on_feature
    git(project, "checkout", "-q", "--detach")
    assert "Only on feature" in card(project) and "Main or release" in card(project)
    plain = tmp_path / "plain"
    plain.mkdir()
    assert "Only on feature" in card(plain) and "Main or release" in card(plain)
    assert (gm.root / MEMORY).read_text().count("§") == 2  # the file always holds every item


def test_card_shows_metadata_lines_user_first(gm: Cli, tmp_path: Path) -> None:
    gm("runtime", "add", "A project fact")
    gm("runtime", "add", "The user", "--target", "user")
    data = json.loads((gm.root / RECORDS).read_text())
    data["items"][0].update(created_at="2000-01-01T00:00:00Z", updated_at="2999-01-01T00:00:00Z",
                            importance="critical")
    data["items"][1].update(created_at="not a date")
    del data["items"][1]["updated_at"]
    (gm.root / RECORDS).write_text(json.dumps(data, indent=2))
    text = gm("context", "--cwd", str(tmp_path)).stdout
    body = text.split("### Runtime memory", 1)[1]
    assert body.index("The user") < body.index("A project fact")
    assert "- [importance=normal; created=unknown; updated=unknown]\n  The user" in body
    assert "[importance=critical; created=" in body and "updated=future]\n  A project fact" in body


def test_full_runtime_tier_is_cut_to_its_share_of_the_card(gm: Cli, tmp_path: Path) -> None:
    for number in range(40):
        gm("runtime", "add", f"Project convention number {number}: " + "detail " * 20)
    card = gm.json("context", "--cwd", str(tmp_path), "--max-chars", "3000")
    assert isinstance(card, dict)
    text = str(card["text"])
    assert len(text) <= 3000 and "Runtime memory" in card["truncated"]
    assert "more runtime item(s) not shown: `gitmem runtime show`" in text
    assert "Project convention number 0:" in text and "Project convention number 39:" not in text
