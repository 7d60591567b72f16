"""`gitmem search` and `gitmem reindex` through the CLI, over a real store."""

from __future__ import annotations

import json
import shutil
from datetime import date, timedelta

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


def test_half_typed_and_mid_word_queries_through_the_cli(gm: Cli) -> None:
    gm("remember", "Staging moved to port 5433", "-l", "episodic", "-t", "staging")
    gm("remember", "The metrics exporter listens on 9100", "-l", "semantic", "-t", "metrics")
    gm("remember", "Run reindex after restoring a backup", "-l", "procedural", "-t", "index")
    for query, expected in (("stagi", "global-epi-0001"), ("stagin", "global-epi-0001"),
                            ("isten", "global-sem-0001"), ("ndex", "global-pro-0001")):
        assert gm.json("search", query)[0]["id"] == expected, query
    done = run_gitmem("--root", str(gm.root), "search", "stagin", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["id"] == "global-epi-0001"


def test_search_grades_and_ranks_with_the_configured_freshness_windows(gm: Cli) -> None:
    gm("remember", "placeholder so the layer exists", "-l", "semantic", "-t", "misc")
    today = date.today()
    body = "## Kafka retention is seven days\nTopics keep seven days of kafka messages.\n\n"
    for name, entry_id, age in (("a-kafka", "global-sem-0101", 40), ("b-kafka", "global-sem-0102", 5)):
        (gm.root / f"global/semantic/{name}.md").write_text(
            f"# Kafka\n\n{body}**Id:** {entry_id}\n**Verified:** {today - timedelta(age)}\n")
    default = gm.json("search", "kafka retention")
    assert [(h["id"], h["freshness"]) for h in default] == [  # type: ignore[index]
        ("global-sem-0101", "fresh"), ("global-sem-0102", "fresh")]
    registry = json.loads((gm.root / "memory.json").read_text())
    registry["settings"]["freshness"]["normal"] = 30
    (gm.root / "memory.json").write_text(json.dumps(registry))
    configured = gm.json("search", "kafka retention")
    assert [(h["id"], h["freshness"]) for h in configured] == [  # type: ignore[index]
        ("global-sem-0102", "fresh"), ("global-sem-0101", "stale")]


def test_search_names_a_broken_freshness_setting(gm: Cli) -> None:
    gm("remember", "Kafka keeps seven days", "-l", "semantic")
    registry = json.loads((gm.root / "memory.json").read_text())
    registry["settings"]["freshness"]["normal"] = "ninety"
    (gm.root / "memory.json").write_text(json.dumps(registry))
    result = gm("search", "kafka")  # the last good memory.json is read meanwhile (store/lastgood.py)
    assert result.exit_code == 0 and "Traceback" not in result.output
    assert "Kafka keeps seven days" in result.stdout
    notes = [line for line in result.stderr.splitlines() if "settings.freshness" in line]
    assert len(notes) == 1 and "gitmem reads the version committed in" in notes[0]
