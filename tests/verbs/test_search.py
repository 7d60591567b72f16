"""`gitmem search` and `gitmem reindex` through the CLI, over a real store."""

from __future__ import annotations

import shutil

from support import Cli, run_gitmem


def test_search_reports_citation_scope_and_freshness(gm: Cli) -> None:
    gm("remember", "Staging moved to port 5433 last week", "-l", "episodic", "-t", "staging",
       "--source", "session:9")
    hits = gm.json("search", "when did we move staging to port 5433?")
    top = hits[0]
    assert top["id"] == "global-epi-0001"
    assert top["path"] == "global/episodic/staging.md" and top["line"] == 8
    assert top["scope"] == "global" and top["layer"] == "episodic"
    assert top["source"] == "session:9" and top["freshness"] == "fresh"


def test_search_sees_hand_edits_and_deletions_without_reindex(gm: Cli) -> None:
    gm("remember", "The cache lives in redis", "-l", "semantic", "-t", "cache")
    assert gm.json("search", "redis")[0]["id"] == "global-sem-0001"
    topic = gm.root / "global/semantic/cache.md"
    topic.write_text(topic.read_text().replace("redis", "memcached"))
    assert gm("search", "redis").exit_code == 1
    assert gm.json("search", "memcached")[0]["id"] == "global-sem-0001"
    topic.unlink()
    assert gm("search", "memcached").exit_code == 1


def test_search_rebuilds_a_deleted_index_and_reindex_counts(gm: Cli) -> None:
    gm("remember", "Use ruff for linting", "-l", "decisions")
    assert gm.json("search", "ruff")
    shutil.rmtree(gm.root / "index")
    assert gm.json("search", "ruff")[0]["id"] == "global-dec-0001"
    assert gm.json("reindex") == {"entries": 1}


def test_workspace_search_covers_workspace_and_global_only(gm: Cli) -> None:
    gm("remember", "alpha uses postgres", "-l", "semantic", "--scope", "workspace", workspace="alpha")
    gm("remember", "beta uses postgres too", "-l", "semantic", "--scope", "workspace", workspace="beta")
    gm("remember", "postgres backups run nightly", "-l", "procedural")
    scopes = {h["scope"] for h in gm.json("search", "postgres", "--workspace", "alpha")}
    assert scopes == {"alpha", "global"}
    assert {h["scope"] for h in gm.json("search", "postgres", "--scope", "global")} == {"global"}
    assert {h["scope"] for h in gm.json("search", "postgres")} == {"alpha", "beta", "global"}


def test_forgotten_hidden_unless_all(gm: Cli) -> None:
    gm("remember", "obsolete kafka setup", "-l", "semantic")
    gm("forget", "global-sem-0001")
    assert gm("search", "kafka").exit_code == 1
    assert gm.json("search", "kafka", "--all")[0]["status"] == "forgotten"


def test_search_bad_input(gm: Cli) -> None:
    assert gm("search", "x", "--limit", "0").exit_code == 2
    assert gm("search", "x", "--layer", "nope").exit_code == 2
    weird = gm("search", 'AND OR ( "unclosed * : ^')
    assert weird.exit_code in (0, 1) and "Traceback" not in weird.output


def test_search_subprocess_json(gm: Cli) -> None:
    gm("remember", "部署需要先检查数据库端口", "-l", "procedural")
    done = run_gitmem("--root", str(gm.root), "search", "部署", "--json")
    assert done.returncode == 0, done.stderr
    assert '"global-pro-0001"' in done.stdout
