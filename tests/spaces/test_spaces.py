"""Spaces through the real CLI: a personal store with a team store mounted, read together,
written by --space or routing, refused when ambiguous or inactive, merged, synced together."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from support import Cli, commit_count, git


@pytest.fixture
def two(tmp_path: Path) -> tuple[Cli, Cli]:
    """A personal store (the one commands run in) and a team store, each with entries."""
    personal = Cli(tmp_path / "personal", CliRunner())
    team = Cli(tmp_path / "team", CliRunner())
    for cli in (personal, team):
        assert cli("init").exit_code == 0
    personal("remember", "Staging Postgres listens on port 5433", "-l", "semantic", "-t", "staging")
    personal("remember", "I prefer short commit subjects", "-l", "semantic", "-t", "prefs")
    team("remember", "The team staging cluster runs Postgres 16 on port 5433", "-l", "semantic",
         "-t", "staging")
    team("remember", "Releases are cut on Tuesdays", "-l", "procedural", "-t", "release")
    return personal, team


def mount(personal: Cli, team: Cli, *extra: str) -> None:
    result = personal("space", "add", "team", str(team.root), *extra)
    assert result.exit_code == 0, result.output


def test_search_covers_both_stores_and_names_the_space(two: tuple[Cli, Cli]) -> None:
    personal, team = two
    mount(personal, team, "--description", "Team conventions and shared decisions")
    hits = personal.json("search", "staging port 5433")
    assert {(h["space"], h["ref"]) for h in hits} == {
        ("home", "global-sem-0001"), ("team", "team/global-sem-0001")}
    team_hit = next(h for h in hits if h["space"] == "team")
    assert team_hit["root"] == str(team.root)
    assert (Path(team_hit["root"]) / team_hit["path"]).is_file()
    text = personal("search", "releases tuesdays").stdout
    assert "team/global-pro-0001" in text and "team:global/procedural/release.md" in text
    # The description lives in the team store's own memory.json, committed there.
    assert json.loads((team.root / "memory.json").read_text())["spaces"]["description"] == \
        "Team conventions and shared decisions"
    assert "space describe" in git(team.root, "log", "-1", "--format=%s")
    # ...while the mount itself is machine-local: nothing of it is committed in the personal store.
    assert "team" not in (personal.root / "memory.json").read_text()
    assert git(personal.root, "status", "--porcelain") == ""
    listing = personal.json("space", "list")
    assert [(r["name"], r["home"], r["active"]) for r in listing] == [
        ("home", True, True), ("team", False, True)]


def test_show_list_and_context_read_active_spaces(two: tuple[Cli, Cli]) -> None:
    personal, team = two
    mount(personal, team)
    assert personal.json("show", "global-sem-0001")["space"] == "home"  # the store's own first
    shown = personal.json("show", "team/global-sem-0001")
    assert shown["space"] == "team" and "Postgres 16" in shown["body"]
    assert personal.json("show", "global-pro-0001")["ref"] == "team/global-pro-0001"  # only there
    refs = [r["ref"] for r in personal.json("list")]
    assert "team/global-pro-0001" in refs and "global-sem-0002" in refs
    team("decision", "Use Alembic for migrations", "--rationale", "linear history")
    card = personal("context").stdout
    assert "Use Alembic for migrations (team/global-dec-0001)" in card


def test_an_id_in_several_spaces_is_refused_with_the_choices(two: tuple[Cli, Cli], tmp_path: Path) -> None:
    personal, team = two
    ops = Cli(tmp_path / "ops", CliRunner())
    ops("init")
    ops("remember", "Ops pages through PagerDuty", "-l", "procedural")
    mount(personal, team)
    assert personal("space", "add", "ops", str(ops.root)).exit_code == 0
    result = personal("show", "global-pro-0001")
    assert result.exit_code == 2
    assert "team/global-pro-0001" in result.stderr and "ops/global-pro-0001" in result.stderr


def test_an_inactive_space_is_not_read_and_naming_it_is_refused(two: tuple[Cli, Cli]) -> None:
    personal, team = two
    mount(personal, team, "--inactive")
    assert [h["space"] for h in personal.json("search", "postgres")] == ["home"]
    for args in (("search", "postgres", "--space", "team"), ("show", "team/global-sem-0001"),
                 ("list", "--space", "team")):
        result = personal(*args)
        assert result.exit_code == 2, args
        assert "space 'team' is inactive" in result.stderr
        assert "gitmem space activate team" in result.stderr
    assert personal("space", "activate", "team").exit_code == 0
    assert {h["space"] for h in personal.json("search", "postgres")} == {"home", "team"}
    assert personal("space", "deactivate", "team").exit_code == 0
    assert personal("search", "tuesdays").exit_code == 1


def last_message(root: Path) -> str:
    return git(root, "log", "-1", "--format=%B").strip()


def test_with_two_spaces_active_an_unrouted_write_asks_for_a_space(two: tuple[Cli, Cli]) -> None:
    personal, team = two
    mount(personal, team, "--description", "Team conventions")
    heads = (commit_count(personal.root), commit_count(team.root))
    refused = personal("remember", "My editor is helix", "-l", "semantic")
    assert refused.exit_code == 2 and refused.stdout == ""
    assert "2 spaces are active: home (this store), team (Team conventions)" in refused.stderr
    assert "--space NAME" in refused.stderr and "spaces.default" in refused.stderr
    assert (commit_count(personal.root), commit_count(team.root)) == heads  # nothing written

    assert personal("config", "set", "spaces.default", "home").exit_code == 0
    home_write = personal("remember", "My editor is helix", "-l", "semantic")
    assert home_write.stdout.strip() == "global-sem-0003", home_write.output
    assert "written to space home (the default space (settings.spaces.default))" in home_write.stderr
    assert commit_count(team.root) == heads[1]
    assert "Routed: the default space (settings.spaces.default); from the store 'home'" in \
        last_message(personal.root)

    assert personal("config", "set", "spaces.default", "team").exit_code == 0
    team_write = personal("remember", "Standups are at 9:30", "-l", "episodic", "--json")
    assert json.loads(team_write.stdout)["space"] == "team"
    assert ("Routed: the default space (settings.spaces.default);"
            " from the store 'home'") in last_message(team.root)

    assert personal("config", "set", "spaces.default", "ops").exit_code == 0
    unmounted = personal("remember", "Pagers rotate weekly", "-l", "semantic")
    assert unmounted.exit_code == 2 and "names space 'ops', which is not mounted" in unmounted.stderr

    # With the other space inactive, the store is the only active space: no question to ask.
    assert personal("config", "unset", "spaces.default").exit_code == 0
    assert personal("space", "deactivate", "team").exit_code == 0
    alone = personal("remember", "Pagers rotate weekly", "-l", "semantic")
    assert alone.exit_code == 0 and "no routing rule matched" in alone.stderr
    assert "Routed: no routing rule matched" in last_message(personal.root)


def test_writes_go_where_a_space_is_named_or_a_rule_routes_them(two: tuple[Cli, Cli]) -> None:
    personal, team = two
    mount(personal, team, "--keyword", "release")

    named = personal("remember", "Standup is at 9:30", "-l", "episodic", "--space", "team", "--json")
    data = json.loads(named.stdout)
    assert data["space"] == "team" and data["id"] == "global-epi-0001"
    assert (team.root / "global/episodic/general.md").is_file()
    assert "Routed: --space; from the store 'home'" in last_message(team.root)

    keyword = personal("remember", "The release checklist lives in docs/release.md", "-l", "procedural")
    assert "keywords of space team: keyword 'release'" in keyword.stderr
    assert "Routed: keywords of space team: keyword 'release'; from the store 'home'" in last_message(team.root)
    assert team.json("show", keyword.stdout.strip())["title"].startswith("The release checklist")

    assert personal("space", "route", "team", "--layer", "decisions").exit_code == 0
    routed = personal("decision", "Squash merges only", "--rationale", "linear history", "--json")
    assert json.loads(routed.stdout)["space"] == "team"
    assert "**Id:** global-dec-0001" in (team.root / "global/decisions/general.md").read_text()
    assert not (personal.root / "global/decisions/general.md").exists()
    # The rule is shared by the store's machines: it is committed in memory.json.
    routes = json.loads((personal.root / "memory.json").read_text())["spaces"]["routes"]
    assert routes == [{"space": "team", "layer": "decisions"}]
    home = personal("decision", "Tabs in my dotfiles", "--rationale", "habit", "--space", "home")
    assert home.exit_code == 0 and (personal.root / "global/decisions/general.md").is_file()


def test_ambiguous_routing_is_refused_with_the_choices(two: tuple[Cli, Cli], tmp_path: Path) -> None:
    personal, team = two
    ops = Cli(tmp_path / "ops", CliRunner())
    ops("init")
    mount(personal, team, "--keyword", "deploy")
    assert personal("space", "add", "ops", str(ops.root), "--keyword", "deploy").exit_code == 0
    heads = (commit_count(personal.root), commit_count(team.root), commit_count(ops.root))
    result = personal("remember", "Never deploy on Fridays", "-l", "learnings")
    assert result.exit_code == 2
    assert "routing is ambiguous" in result.stderr
    assert "ops (keywords of space ops" in result.stderr and "team (keywords of space team" in result.stderr
    assert "--space NAME" in result.stderr
    assert (commit_count(personal.root), commit_count(team.root), commit_count(ops.root)) == heads
    chosen = personal("remember", "Never deploy on Fridays", "-l", "learnings", "--space", "ops")
    assert chosen.exit_code == 0 and "written to space ops" in chosen.stderr
    # An inactive space takes no part in routing: the choice is no longer ambiguous.
    personal("space", "deactivate", "ops")
    again = personal("remember", "Deploy windows are 10-16h", "-l", "procedural")
    assert again.exit_code == 0 and "written to space team" in again.stderr


def test_an_explicit_write_to_an_inactive_space_activates_it(two: tuple[Cli, Cli]) -> None:
    personal, team = two
    mount(personal, team, "--inactive")
    result = personal("remember", "Team lunch is on Fridays", "-l", "episodic", "--space", "team")
    assert result.exit_code == 0 and "is now active" in result.stderr
    assert personal.json("space", "list")[1]["active"] is True


def test_space_merge_imports_entries_renumbering_colliding_ids(two: tuple[Cli, Cli]) -> None:
    personal, team = two
    team("relate", "global-sem-0001", "causal", "global-pro-0001")
    team("relate", "global-pro-0001", "temporal", "global-sem-0001")
    team("remember", "Staging Postgres listens on port 5433", "-l", "semantic", "-t", "staging")
    mount(personal, team)
    team_before = git(team.root, "rev-parse", "HEAD")
    result = personal("space", "merge", "team", "home", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    # team's global-sem-0001 collides with the personal one: renumbered past the highest number.
    assert report["renumbered"] == {"global-sem-0001": "global-sem-0003"}
    assert report["imported"]["global-pro-0001"] == "global-pro-0001"
    # The same text already lives here: not copied twice.
    assert report["duplicates"] == {"global-sem-0002": "global-sem-0001"}
    moved = personal.json("show", "global-sem-0003", "--space", "home")
    assert moved["fields"]["Source"] == "space:team/global-sem-0001"
    assert moved["fields"]["Related"] == "causal:global-pro-0001"  # still the imported entry
    imported = personal.json("show", "global-pro-0001")
    assert imported["fields"]["Source"] == "space:team/global-pro-0001"
    assert imported["fields"]["Related"] == "temporal:global-sem-0003"  # follows the renumbering
    assert report["source_deactivated"] is True
    assert git(team.root, "rev-parse", "HEAD") == team_before  # the source is never changed
    assert "space merge: 2 entries from team" in git(personal.root, "log", "-1", "--format=%s")
    assert personal("check").exit_code == 0
    # Merging again copies nothing.
    personal("space", "activate", "team")
    again = json.loads(personal("space", "merge", "team", "home", "--json").stdout)
    assert again["imported"] == {} and again["commit"] is None


def test_a_space_cloned_from_a_url_and_sync_all(two: tuple[Cli, Cli], tmp_path: Path) -> None:
    personal, team = two
    remote = tmp_path / "team.git"
    git(tmp_path, "init", "--bare", "-b", "main", str(remote))
    assert team("remote", "set", str(remote)).exit_code == 0
    assert team("sync").exit_code == 0
    added = personal("space", "add", "team", str(remote), "--json")
    assert added.exit_code == 0, added.output
    clone = Path(json.loads(added.stdout)["path"])
    assert clone == (personal.root / "state" / "spaces" / "team").resolve()
    assert personal.json("show", "team/global-pro-0001")["title"] == "Releases are cut on Tuesdays"

    team("remember", "Code freeze starts Thursday noon", "-l", "episodic")
    team("sync")
    personal("remember", "Written in the clone", "-l", "episodic", "--space", "team")
    result = personal("sync", "--all", "--json")
    rows = {r["space"]: r for r in json.loads(result.stdout)}
    assert rows["home"]["result"] == "skipped" and "no remote" in rows["home"]["error"]
    assert rows["team"]["result"] in ("merged", "pushed")
    assert result.exit_code == 0
    assert personal.json("search", "code freeze thursday")[0]["space"] == "team"
    assert "Written in the clone" in git(remote, "log", "-p", "main")


def test_bad_space_input_is_refused(two: tuple[Cli, Cli], tmp_path: Path) -> None:
    personal, team = two
    cases = [
        (("space", "add", "Team!", str(team.root)), "invalid space name"),
        (("space", "add", "home", str(team.root)), "names this store itself"),
        (("space", "add", "self", str(personal.root)), "cannot mount itself"),
        (("space", "add", "nowhere", str(tmp_path / "missing")), "holds no gitmem store: add --create"),
        (("space", "activate", "ghost"), "no space named 'ghost'"),
        (("search", "x", "--space", "ghost"), "no space named 'ghost'"),
    ]
    (tmp_path / "plain").mkdir()
    cases.append((("space", "add", "plain", str(tmp_path / "plain")), "holds no gitmem store: add --create"))
    for args, message in cases:
        result = personal(*args)
        assert result.exit_code != 0, args
        assert message in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.output
    mount(personal, team)
    again = personal("space", "add", "team", str(team.root))
    assert again.exit_code == 2 and "already mounted" in again.stderr
    removed = personal("space", "remove", "team")
    assert removed.exit_code == 0 and (team.root / "memory.json").is_file()


def test_a_space_whose_folder_vanished_does_not_break_reads(two: tuple[Cli, Cli]) -> None:
    personal, team = two
    mount(personal, team)
    team.root.rename(team.root.with_name("team-moved"))
    assert [h["space"] for h in personal.json("search", "postgres")] == ["home"]
    listing = personal.json("space", "list")
    assert listing[1]["status"] == "unavailable" and "no gitmem store" in listing[1]["problem"]


def test_subagents_do_not_change_spaces(two: tuple[Cli, Cli]) -> None:
    personal, team = two
    env = {"GITMEM_SUBAGENT": "1"}
    for args in (("space", "add", "team", str(team.root)), ("remember", "x", "-l", "semantic", "--space", "team")):
        result = personal(*args, env=env)
        assert result.exit_code == 2 and "subagents do not write memory" in result.stderr
    mount(personal, team)
    for args in (("space", "deactivate", "team"), ("space", "remove", "team"),
                 ("space", "merge", "team", "home"), ("space", "route", "team", "--layer", "decisions")):
        result = personal(*args, env=env)
        assert result.exit_code == 2 and "subagents do not write memory" in result.stderr, args
    assert personal("search", "tuesdays", env=env).exit_code == 0  # reading is fine


def test_a_batch_writes_to_the_store_itself_while_other_spaces_are_active(two: tuple[Cli, Cli]) -> None:
    from support import run_gitmem

    personal, team = two
    mount(personal, team)
    line = json.dumps({"op": "remember", "text": "My shell is fish", "layer": "semantic"})
    done = run_gitmem("--root", str(personal.root), "batch", input_text=line + "\n")
    assert done.returncode == 0, done.stderr
    assert personal.json("show", "global-sem-0003")["title"] == "My shell is fish"


def test_space_add_creates_a_store_in_a_missing_or_empty_folder_when_asked(two: tuple[Cli, Cli],
                                                                            tmp_path: Path) -> None:
    personal, _team = two
    target = tmp_path / "experiments"
    refused = personal("space", "add", "lab", str(target))
    assert refused.exit_code == 2 and "add --create" in refused.stderr and not target.exists()
    made = personal("space", "add", "lab", str(target), "--create", "-d", "Experiments", "--inactive")
    assert made.exit_code == 0, made.output
    assert (target / "memory.json").is_file() and git(target, "log", "--oneline").strip()
    assert [r["name"] for r in personal.json("space", "list")] == ["home", "lab"]
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("not a store\n")
    busy = personal("space", "add", "notes", str(tmp_path / "notes"), "--create")
    assert busy.exit_code == 2 and "is not a gitmem store" in busy.stderr
    assert (tmp_path / "notes").iterdir() and not (tmp_path / "notes" / "memory.json").exists()


def test_space_discover_finds_stores_in_the_usual_places_and_mounts_them_switched_off(
        two: tuple[Cli, Cli], tmp_path: Path) -> None:
    personal, team = two
    user = tmp_path / "user"
    for store in (user / ".gitmem", user / "work" / "ops-memory"):
        assert Cli(store, CliRunner())("init").exit_code == 0
    (user / "work" / "ops-memory" / "nested").mkdir()
    mount(personal, team)
    env = {"HOME": str(user)}
    found = json.loads(personal("space", "discover", "--json", env=env).stdout)
    by_path = {Path(f["path"]).name: f for f in found}
    assert set(by_path) == {".gitmem", "ops-memory", "team"}  # the store itself is never listed
    assert by_path["team"]["mounted"] is True and by_path["ops-memory"]["name"] == "ops-memory"
    added = personal("space", "discover", "--add", env=env)
    assert added.exit_code == 0 and "[mounted now, inactive]" in added.stdout
    listed = {r["name"]: r["active"] for r in personal.json("space", "list")}
    assert listed == {"home": True, "team": True, "gitmem": False, "ops-memory": False}
    assert personal("space", "discover", str(tmp_path / "nothing-here")).stdout.strip() == \
        "no other gitmem store found"


def test_the_store_itself_can_be_left_out_of_reads(two: tuple[Cli, Cli]) -> None:
    personal, team = two
    mount(personal, team)
    assert personal("space", "deactivate", "home").exit_code == 0
    assert personal.json("space", "list")[0]["active"] is False
    assert {h["space"] for h in personal.json("search", "postgres")} == {"team"}
    assert {r["space"] for r in personal.json("list")} == {"team"}
    refused = personal("search", "postgres", "--space", "home")
    assert refused.exit_code == 2 and "space 'home' is inactive" in refused.stderr
    assert personal.json("show", "global-sem-0001")["space"] == "home"  # named by its Id: shown
    written = personal("remember", "My editor is helix", "-l", "semantic", "--space", "home")
    assert written.exit_code == 0 and (personal.root / "global/semantic/general.md").is_file()
    assert personal("space", "activate", "home").exit_code == 0
    assert {h["space"] for h in personal.json("search", "postgres")} == {"home", "team"}


def test_a_merge_that_would_copy_a_let_through_secret_asks_for_it_knowingly(two: tuple[Cli, Cli]) -> None:
    """The team store holds a token let through with --allow-secret; copying it into this store
    is a new commit of it, refused like a hand edit (one line, nothing written) until asked
    for with GITMEM_ALLOW_SECRET=1."""
    personal, team = two
    key = "AKIA" + "QWERTYUIOPASDFGH"
    assert team("remember", f"The backup job uses {key}", "-l", "semantic", "-t", "backup",
                "--allow-secret").exit_code == 0
    mount(personal, team)
    before = git(personal.root, "rev-parse", "HEAD")
    refused = personal("space", "merge", "team", "home")
    assert refused.exit_code == 2 and "GITMEM_ALLOW_SECRET=1" in refused.output and key not in refused.output
    assert git(personal.root, "rev-parse", "HEAD") == before and git(personal.root, "status", "--porcelain") == ""
    done = personal("space", "merge", "team", "home", env={"GITMEM_ALLOW_SECRET": "1"})
    assert done.exit_code == 0, done.output
    assert key in (personal.root / "global/semantic/backup.md").read_text()


def test_search_with_every_space_switched_off_finds_nothing_cleanly(two: tuple[Cli, Cli]) -> None:
    personal, _team = two
    assert personal("space", "deactivate", "home").exit_code == 0
    found = personal("search", "staging")
    assert found.exit_code == 1 and "Traceback" not in found.output and "internal error" not in found.output
    assert personal("search", "staging", "--json").exit_code == 1
