"""Read-only Markdown folders as spaces, through the real CLI: an Obsidian-style vault (wiki links,
front matter, nested folders, a file that is not UTF-8, links that loop) searched, listed, shown
and in the card; edits seen on the next read; Ids stable; every write refused; merge out of it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from support import Cli, git, isolated_env, run_gitmem

DEPLOY = """---
title: Deploy guide
tags: [ops, deploy]
---
# Deploy guide

How we ship: follow the [[Release checklist|checklist]] first.

## Rollback
Run the rollback script and tell the on-call engineer.
"""


def snapshot(folder: Path) -> dict[str, tuple[int, bytes]]:
    """Every entry below the folder (links themselves) with its mtime and content."""
    out = {}
    for here, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(here) / name
            info = path.lstat()
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
            out[path.relative_to(folder).as_posix()] = (info.st_mtime_ns, data)
    return out


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    folder = tmp_path / "vault"
    (folder / ".obsidian").mkdir(parents=True)
    (folder / ".obsidian" / "app.json").write_text("{}")
    (folder / "guides" / "ops").mkdir(parents=True)
    (folder / "guides" / "deploy.md").write_text(DEPLOY)
    (folder / "Release checklist.md").write_text("# Release checklist\n\nTag the release, then watch"
                                                 " the canary dashboards for an hour.\n")
    (folder / "guides" / "ops" / "pager.md").write_text("Pager rotation changes on Mondays.\n")
    (folder / "squash.md").write_text("---\nlayer: decisions\nimportance: high\n---\n"
                                      "# Squash merges only\n\nEvery pull request is squashed.\n")
    (folder / "latin1.md").write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    (folder / "loop.md").symlink_to("loop.md")
    (folder / "guides" / "up").symlink_to("..")  # a folder link back up: never followed
    return folder


@pytest.fixture
def home(tmp_path: Path) -> Cli:
    cli = Cli(tmp_path / "mine", CliRunner())
    assert cli("init").exit_code == 0
    cli("remember", "Staging Postgres listens on port 5433", "-l", "semantic", "-t", "staging")
    return cli


def found(home: Cli, query: str) -> list[dict[str, str]]:
    """Search hits as JSON (a search finding nothing exits 1)."""
    result = home("search", query, "--json")
    assert result.exit_code in (0, 1), result.output
    hits: list[dict[str, str]] = json.loads(result.stdout)
    return hits


def mount(home: Cli, vault: Path, *extra: str) -> None:
    result = home("space", "add", "vault", str(vault), *extra)
    assert result.exit_code == 0, result.output


def test_a_vault_is_searched_listed_shown_and_in_the_card(home: Cli, vault: Path) -> None:
    before = snapshot(vault)
    mount(home, vault)
    listing = home.json("space", "list")[1]
    assert (listing["name"], listing["provider"], listing["active"]) == ("vault", "obsidian", True)
    assert set(listing["skipped"]) == {"latin1.md", "loop.md"}
    assert "not UTF-8" in listing["skipped"]["latin1.md"]
    hits = home.json("search", "rollback script")
    hit = next(h for h in hits if h["space"] == "vault")
    assert hit["ref"].startswith("vault/deploy.rollback-")
    assert (hit["note"], hit["folder"]) == ("guides/deploy.md:9", str(vault))
    assert "vault:guides/deploy.md:9" in home("search", "rollback script").stdout
    # A wiki link's words are searched like any other; nested folders are read.
    assert any(h["note"].startswith("guides/deploy.md") for h in home.json("search", "checklist"))
    assert any(h.get("note", "").startswith("guides/ops/pager.md")
               for h in home.json("search", "pager rotation"))
    shown = home.json("show", hit["ref"])
    assert shown["space"] == "vault" and shown["fields"]["Tags"] == "ops, deploy"
    assert shown["body"] == "Run the rollback script and tell the on-call engineer."
    refs = {r["ref"] for r in home.json("list")}
    assert "global-sem-0001" in refs and hit["ref"] in refs
    card = home("context").stdout
    assert "Squash merges only (vault/squash.squash-merges-only-" in card
    # The vault is read-only to gitmem: not a byte, nor a stamp, changed; nothing committed.
    assert snapshot(vault) == before
    assert git(home.root, "status", "--porcelain") == ""
    assert (home.root / "state" / "providers" / "vault" / "index").is_dir()


def test_an_edit_in_the_vault_shows_on_the_next_search(home: Cli, vault: Path) -> None:
    mount(home, vault)
    assert found(home, "flamingo") == []
    note = vault / "guides" / "ops" / "pager.md"
    note.write_text("Pager rotation changes on Mondays.\n\n## Escalation\nCall the flamingo desk.\n")
    assert [h["note"] for h in found(home, "flamingo")] == ["guides/ops/pager.md:3"]
    note.unlink()
    assert found(home, "flamingo") == []
    (vault / "latin1.md").write_text("Now readable: the espresso machine is on floor two.\n")
    assert home.json("search", "espresso")[0]["space"] == "vault"


def test_ids_stay_the_same_across_runs_and_a_lost_cache(home: Cli, vault: Path, tmp_path: Path) -> None:
    mount(home, vault)
    first = sorted(r["ref"] for r in home.json("list", "--space", "vault"))
    cache = home.root / "state" / "providers" / "vault"
    for path in sorted(cache.rglob("*"), reverse=True):
        path.unlink() if path.is_file() or path.is_symlink() else path.rmdir()
    assert sorted(r["ref"] for r in home.json("list", "--space", "vault")) == first
    # Another machine (another home store) mounting the same folder gives the same Ids.
    other = Cli(tmp_path / "other", CliRunner())
    assert other("init").exit_code == 0
    mount(other, vault)
    assert sorted(r["ref"] for r in other.json("list", "--space", "vault")) == first


def test_every_write_to_the_folder_is_refused(home: Cli, vault: Path) -> None:
    mount(home, vault)
    ref = home.json("search", "rollback")[0]["ref"]
    for args in (("remember", "A new fact", "-l", "semantic", "--space", "vault"),
                 ("forget", ref), ("space", "route", "vault", "--layer", "decisions"),
                 ("space", "merge", "home", "vault")):
        result = home(*args)
        assert result.exit_code != 0, args
        assert "space 'vault' is a read-only Markdown folder" in result.output, args
        assert "Traceback" not in result.output
    # Routing never picks it: with only the folder beside it, a write goes to the store itself.
    assert home.json("remember", "Deploys need two approvals", "-l", "semantic")["space"] == "home"
    home("config", "set", "spaces.default", "vault")
    home("space", "add", "team", str(home.root.parent / "team"), "--create")
    refused = home("remember", "Where does this go", "-l", "semantic")
    assert refused.exit_code != 0 and "read-only Markdown folder" in refused.output
    keyword = home("space", "add", "notes", str(vault / "guides"), "--keyword", "deploy")
    assert keyword.exit_code != 0 and "takes none" in keyword.output


def test_a_folder_is_described_in_its_mount_and_skipped_by_sync_all(home: Cli, vault: Path) -> None:
    mount(home, vault)
    described = home("space", "describe", "vault", "-d", "My  reading notes")
    assert described.exit_code == 0, described.output
    assert home.json("space", "list")[1]["description"] == "My reading notes"
    assert json.loads((home.root / "state" / "spaces.json").read_text())["spaces"]["vault"] == {
        "path": str(vault.resolve()), "active": True, "url": None, "added": home.json("space", "list")[1]["added"],
        "provider": "obsidian", "description": "My reading notes"}
    assert home("space", "describe", "vault", "-k", "deploy").exit_code != 0
    synced = home("sync", "--all")
    assert "vault: skipped (a read-only Markdown folder: nothing to sync)" in synced.output
    # Unmounted: the cache goes (it is derived from the folder alone), the folder stays.
    assert home("space", "remove", "vault").exit_code == 0
    assert not (home.root / "state" / "providers" / "vault").exists() and (vault / "squash.md").is_file()


def test_merge_out_of_the_folder_copies_its_notes_into_the_store(home: Cli, vault: Path) -> None:
    mount(home, vault)
    count = len(home.json("list", "--space", "vault"))
    report = home.json("space", "merge", "vault", "home")
    assert len(report["imported"]) == count and report["source_deactivated"]
    assert any(h["space"] == "home" for h in home.json("search", "rollback script"))


def test_flavours_are_detected_and_a_provider_can_be_named(home: Cli, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "setup.md").write_text("# Setup\n\nInstall with make bootstrap.\n")
    project = tmp_path / "bm"
    (project / "people").mkdir(parents=True)
    (project / "people" / "ana.md").write_text(
        "---\ntitle: Ana\ntype: person\npermalink: people/ana\n---\n# Ana\n\nRuns the data team.\n\n"
        "## Observations\n- [decision] Nightly jobs move to Airflow #infra\n")
    assert home("space", "add", "docs", str(docs)).exit_code == 0
    assert home("space", "add", "bm", str(project)).exit_code == 0
    assert home("space", "add", "vault2", str(docs), "--provider", "obsidian").exit_code != 0  # mounted
    providers = {r["name"]: r["provider"] for r in home.json("space", "list")}
    assert providers == {"home": "gitmem", "docs": "markdown", "bm": "basic-memory"}
    airflow = home.json("search", "airflow nightly")
    assert airflow[0]["space"] == "bm" and airflow[0]["layer"] == "decisions"
    assert home.json("search", "bootstrap")[0]["space"] == "docs"
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = home("space", "add", "empty", str(empty))
    assert refused.exit_code != 0 and "--create" in refused.output
    assert home("space", "add", "empty", str(empty), "--provider", "markdown").exit_code == 0


def test_a_secret_in_a_note_is_never_shown(home: Cli, vault: Path) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    (vault / "tokens.md").write_text(f"# CI token\n\nThe CI bot token is {token} for the mirror.\n")
    mount(home, vault)
    hit = next(h for h in home.json("search", "CI bot token mirror") if h["space"] == "vault")
    assert token not in json.dumps(hit)
    assert token not in home("show", hit["ref"]).stdout
    cache = home.root / "state" / "providers" / "vault"
    assert not any(token in p.read_text() for p in cache.rglob("*.md"))


def test_the_real_cli_searches_a_mounted_folder(home: Cli, vault: Path, tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "h")
    added = run_gitmem("--root", str(home.root), "space", "add", "vault", str(vault), env=env)
    assert added.returncode == 0, added.stderr
    hits = run_gitmem("--root", str(home.root), "search", "canary dashboards", env=env)
    assert hits.returncode == 0 and "vault:Release checklist.md:1" in hits.stdout
    refused = run_gitmem("--root", str(home.root), "remember", "x", "--space", "vault", env=env)
    assert refused.returncode != 0 and len(refused.stderr.strip().splitlines()) == 1


def test_an_odd_basic_memory_note_is_left_out_and_the_rest_is_read(home: Cli, tmp_path: Path) -> None:
    """A number for `tags`, or a note that is a link to a file outside the folder: that note is
    skipped and named by `space list`; every read of the store goes on (it stopped them all)."""
    project = tmp_path / "bm"
    (project / "people").mkdir(parents=True)
    (project / "people" / "ana.md").write_text(
        "---\ntitle: Ana\npermalink: people/ana\n---\n# Ana\n\n## Observations\n- [fact] Runs the data team\n")
    (project / "people" / "odd.md").write_text(
        "---\ntitle: Odd\npermalink: people/odd\ntags: 5\n---\n# Odd\n\n## Observations\n- [fact] Tagged oddly\n")
    outside = tmp_path / "outside.md"
    outside.write_text("---\ntitle: Out\npermalink: out\n---\n# Out\n\n## Observations\n- [fact] Lives elsewhere\n")
    (project / "people" / "link.md").symlink_to(outside)
    assert home("space", "add", "bm", str(project)).exit_code == 0
    assert home.json("search", "data team")[0]["space"] == "bm"
    assert home.json("search", "tagged oddly")[0]["space"] == "bm"  # a number is one tag
    listed = home.json("space", "list")
    skipped = json.dumps(listed)
    assert "link.md" in skipped and "outside the folder" in skipped
    assert home("list").exit_code == 0
    imported = home("import", "basic-memory", str(project), "--dry-run")
    assert "Traceback" not in imported.output and "internal error" not in imported.output


def test_a_folder_holding_the_store_itself_never_reads_the_store_or_its_cache(tmp_path: Path) -> None:
    """The store lives inside the folder mounted as a Markdown space: the walk leaves every
    gitmem store out (its cache of the folder is inside it), so the space does not feed on
    itself and grow with each read."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "note.md").write_text("# Note\n\nThe shared drive is mounted at /mnt/team.\n")
    home = Cli(work / "memory", CliRunner())
    assert home("init").exit_code == 0
    home("remember", "Staging Postgres listens on port 5433", "-l", "semantic", "-t", "staging")
    assert home("space", "add", "work", str(work), "--provider", "markdown").exit_code == 0
    counts = [len(home.json("list", "--space", "work")) for _ in range(3)]  # type: ignore[arg-type]
    assert counts == [1, 1, 1]
    assert home.json("search", "shared drive")[0]["space"] == "work"  # type: ignore[index]


def test_field_lines_in_a_note_are_its_text_not_its_id_or_status(home: Cli, tmp_path: Path) -> None:
    """Notes that quote an entry (`**Id:** global-sem-0001`, `**Forgotten:** ...`): each keeps
    the Id derived from its path and heading, and none is forgotten by its own text."""
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, extra in (("a", "**Id:** global-sem-0001"), ("b", "**Id:** global-sem-0001"),
                        ("c", "**Forgotten:** 2026-01-01")):
        (notes / f"{name}.md").write_text(f"# Note {name}\n\nhippo text {name}\n\n{extra}\n")
    assert home("space", "add", "notes", str(notes)).exit_code == 0
    hits = found(home, "hippo")
    ids = [f'{h["space"]}/{h["id"]}' for h in hits]
    assert len(ids) == len(set(ids)) == 3 and not any("global-sem-0001" in i for i in ids)
    for entry_id in ids:
        assert home.json("show", entry_id)["status"] == "live"  # type: ignore[index]


def test_a_link_to_a_folder_note_is_refused_not_recorded_as_text(home: Cli, vault: Path) -> None:
    mount(home, vault)
    note = found(home, "canary dashboards")[0]
    before = (home.root / "global/semantic/staging.md").read_text()
    refused = home("relate", "global-sem-0001", "semantic", f'vault/{note["id"]}')
    assert refused.exit_code == 2 and "read-only folder space vault" in refused.output
    assert (home.root / "global/semantic/staging.md").read_text() == before
    assert home("check").exit_code == 0


def test_an_unknown_folder_id_is_not_found_and_history_verbs_say_there_is_none(home: Cli, vault: Path) -> None:
    mount(home, vault)
    missing = home("show", "vault/no-such.note-12345678")
    assert missing.exit_code == 1 and "no note with Id no-such.note-12345678 in space vault" in missing.output
    note = found(home, "canary dashboards")[0]
    why = home("why", f'vault/{note["id"]}')
    assert why.exit_code == 2 and "has no git history" in why.output and "never writes" not in why.output
