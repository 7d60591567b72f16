"""Typed relations: recorded with `relate`, walked with `related`, checked by `gitmem check` and
the pre-commit hook; legacy untyped values are kept and reported as hints."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from gitmem.format.references import add_relation, parse_paths, parse_related, path_matches
from support import GIT_ENV, Cli, commit_count, git


def test_related_values_parse_typed_untyped_spaced_and_free_text() -> None:
    items = parse_related("causal:global-dec-0004, entity: shop-sem-0012, global-sem-0001, "
                          "semantic:team/global-sem-0002, see the wiki, foo:global-sem-0003")
    assert [(i.type, i.target, i.space) for i in items] == [
        ("causal", "global-dec-0004", None), ("entity", "shop-sem-0012", None),
        (None, "global-sem-0001", None), ("semantic", "global-sem-0002", "team"),
        (None, None, None), ("foo", "global-sem-0003", None)]
    assert [i.known_type for i in items] == [True, True, True, True, True, False]
    assert items[4].raw == "see the wiki"
    assert add_relation("see the wiki", "causal", "global-dec-0001") == "see the wiki, causal:global-dec-0001"
    assert add_relation("causal:global-dec-0001", "causal", "global-dec-0001") is None


def test_paths_values_and_matching() -> None:
    assert parse_paths("src/api/, src/db/schema.py, `docs/x.md`") == (
        ["src/api/", "src/db/schema.py", "docs/x.md"], [])
    assert parse_paths("/etc/passwd, ../up, C:\\x, ok") == (["ok"], ["/etc/passwd", "../up", "C:\\x"])
    assert path_matches("src/api/", "src/api/v2/users.py")
    assert path_matches("src/api", "src/api/users.py") and not path_matches("src/api", "src/apis.py")
    assert path_matches("src/db/schema.py", "src/db/schema.py")
    assert not path_matches("src/db/schema.py", "src/db/schema.pyc")


@pytest.fixture
def linked(gm: Cli) -> Cli:
    for text, layer in (("Deploys are frozen on Fridays", "decisions"),
                        ("A Friday deploy broke checkout", "episodic"),
                        ("Checkout depends on the payment webhook", "semantic"),
                        ("The payment webhook secret lives in vault", "semantic"),
                        ("Never deploy on Fridays", "learnings")):
        if layer == "decisions":
            gm("decision", text, "--rationale", "outages")
        else:
            gm("remember", text, "-l", layer)
    return gm


def test_relate_records_directional_types_once_and_symmetric_both_ways(linked: Cli) -> None:
    gm = linked
    count = commit_count(gm.root)
    result = gm("relate", "global-lrn-0001", "causal", "global-epi-0001")
    assert result.exit_code == 0 and "recorded" in result.stdout
    assert gm.json("show", "global-lrn-0001")["fields"]["Related"] == "causal:global-epi-0001"
    assert "Related" not in gm.json("show", "global-epi-0001")["fields"]
    both = gm("relate", "global-sem-0001", "entity", "global-sem-0002")
    assert "recorded both ways" in both.stdout
    assert gm.json("show", "global-sem-0002")["fields"]["Related"] == "entity:global-sem-0001"
    assert commit_count(gm.root) == count + 2  # one commit each, both sides included
    assert "relate: global-sem-0001 entity:global-sem-0002" in git(gm.root, "log", "-1", "--format=%s")
    again = gm("relate", "global-sem-0002", "entity", "global-sem-0001")
    assert "already recorded" in again.stdout and commit_count(gm.root) == count + 2
    for args, message in ((("global-lrn-0001", "causal", "global-lrn-0001"), "itself"),
                          (("global-lrn-0001", "causal", "global-sem-0099"), "no entry"),
                          (("global-lrn-0001", "links", "global-sem-0001"), "Invalid value")):
        bad = gm("relate", *args)
        assert bad.exit_code != 0 and message in bad.stderr


def test_related_walks_both_ways_with_depth_and_type_filters(linked: Cli) -> None:
    gm = linked
    gm("relate", "global-lrn-0001", "causal", "global-epi-0001")
    gm("relate", "global-epi-0001", "causal", "global-dec-0001")
    gm("relate", "global-epi-0001", "entity", "global-sem-0001")
    gm("relate", "global-sem-0001", "semantic", "global-sem-0002")
    one = gm.json("related", "global-epi-0001")
    assert {n["ref"] for n in one["nodes"]} == {"global-epi-0001", "global-lrn-0001",
                                                "global-dec-0001", "global-sem-0001"}
    assert {(e["from"], e["to"], e["type"]) for e in one["edges"]} == {
        ("global-epi-0001", "global-dec-0001", "causal"),
        ("global-lrn-0001", "global-epi-0001", "causal"),
        ("global-epi-0001", "global-sem-0001", "entity")}
    assert not any(e["derived"] for e in one["edges"])
    two = gm.json("related", "global-lrn-0001", "--depth", "3")
    assert {n["ref"]: n["depth"] for n in two["nodes"]}["global-sem-0002"] == 3
    causal = gm.json("related", "global-lrn-0001", "--depth", "3", "--type", "causal")
    assert {n["ref"] for n in causal["nodes"]} == {"global-lrn-0001", "global-epi-0001", "global-dec-0001"}
    text = gm("related", "global-epi-0001").stdout
    assert "causal: caused by global-dec-0001  Deploys are frozen on Fridays" in text
    assert "causal: led to global-lrn-0001  Never deploy on Fridays" in text
    lonely = gm("related", "global-sem-0002", "--type", "causal")
    assert lonely.exit_code == 1
    assert gm("related", "global-epi-0001", "--depth", "9").exit_code == 2


def test_temporal_neighbours_are_derived_only_when_asked_and_labelled(gm: Cli) -> None:
    for n in range(3):
        gm("remember", f"Release {n} shipped", "-l", "episodic", "-t", "releases")
    assert gm("related", "global-epi-0002").exit_code == 1  # nothing recorded, nothing invented
    graph = gm.json("related", "global-epi-0002", "--derive", "temporal")
    assert {(e["from"], e["to"], e["type"], e["derived"]) for e in graph["edges"]} == {
        ("global-epi-0002", "global-epi-0001", "temporal", True),
        ("global-epi-0003", "global-epi-0002", "temporal", True)}
    assert "temporal (derived): after global-epi-0001" in gm(
        "related", "global-epi-0002", "--derive", "temporal").stdout


def test_check_reports_bad_links_with_path_and_line_and_hints_for_legacy(linked: Cli) -> None:
    gm = linked
    path = gm.root / "global/learnings/general.md"
    text = path.read_text()
    path.write_text(text.replace("**Verified:**", "**Related:** global-sem-0001, see the wiki\n**Verified:**", 1))
    legacy = gm("check", "--json")
    data = json.loads(legacy.stdout)
    assert legacy.exit_code == 0, data  # legacy values never fail the check
    line = next(n for n, t in enumerate(path.read_text().splitlines(), 1) if t.startswith("**Related:**"))
    assert f"global/learnings/general.md:{line}: untyped link 'global-sem-0001'" in data["hints"][0]
    assert "free text 'see the wiki'" in data["hints"][1]
    # A write through gitmem keeps the legacy values as they are.
    gm("relate", "global-lrn-0001", "causal", "global-epi-0001")
    assert gm.json("show", "global-lrn-0001")["fields"]["Related"] == \
        "global-sem-0001, see the wiki, causal:global-epi-0001"
    graph = gm.json("related", "global-lrn-0001")
    assert ("global-lrn-0001", "global-sem-0001", "untyped") in {
        (e["from"], e["to"], e["type"]) for e in graph["edges"]}

    path.write_text(path.read_text().replace("see the wiki", "links:global-sem-0002, causal:global-sem-0777"))
    line = next(n for n, t in enumerate(path.read_text().splitlines(), 1) if t.startswith("**Related:**"))
    bad = gm("check")
    assert bad.exit_code == 2
    assert f"global/learnings/general.md:{line}: unknown relation type 'links'" in bad.stdout
    assert f"global/learnings/general.md:{line}: Related: causal:global-sem-0777 points to" in bad.stdout


def test_the_pre_commit_hook_refuses_unknown_types_and_dangling_links(linked: Cli) -> None:
    gm = linked
    assert gm("hooks", "install").exit_code == 0
    path = gm.root / "global/semantic/general.md"
    original = path.read_text()
    env = {**os.environ, **GIT_ENV}

    def commit(text: str) -> subprocess.CompletedProcess[str]:
        path.write_text(text)
        subprocess.run(["git", "add", "-A"], cwd=gm.root, check=True, env=env)
        return subprocess.run(["git", "commit", "-q", "-m", "hand"], cwd=gm.root, capture_output=True,
                              text=True, env=env)

    done = commit(original + "\n## Webhooks retry three times\nSee the runbook.\n\n"
                  "**Related:** causes:global-sem-0001, causal:global-sem-0404\n")
    assert done.returncode == 1
    assert "unknown relation type 'causes'" in done.stderr
    assert "points to global-sem-0404, which does not exist" in done.stderr
    done = commit(original + "\n## Webhooks retry three times\nSee the runbook.\n\n"
                  "**Related:** semantic:global-sem-0001, global-sem-0002\n")
    assert done.returncode == 0, done.stderr
    assert "hint:" in done.stderr and "untyped link 'global-sem-0002'" in done.stderr
    assert "**Id:** global-sem-0003" in path.read_text()
    assert gm.json("related", "global-sem-0003")["edges"]


def test_relations_into_a_mounted_space(linked: Cli, tmp_path: Path) -> None:
    from click.testing import CliRunner

    gm = linked
    team = Cli(tmp_path / "team", CliRunner())
    team("init")
    team("remember", "Team rule: no Friday deploys", "-l", "semantic")
    gm("space", "add", "team", str(team.root))
    assert gm("relate", "global-lrn-0001", "causal", "team/global-sem-0001").exit_code == 0
    assert gm.json("show", "global-lrn-0001")["fields"]["Related"] == "causal:team/global-sem-0001"
    graph = gm.json("related", "global-lrn-0001")
    node = next(n for n in graph["nodes"] if n["ref"] == "team/global-sem-0001")
    assert node["title"] == "Team rule: no Friday deploys" and node["space"] == "team"
    refused = gm("relate", "team/global-sem-0001", "semantic", "home/global-sem-0001")
    assert refused.exit_code == 2 and "can point only inside that space" in refused.stderr
    assert gm("check").exit_code == 0


def test_a_fifo_named_like_a_topic_file_blocks_no_link_read(linked: Cli) -> None:
    """Link checks and walks read regular files only: a FIFO is skipped, never waited on."""
    import sys

    gm = linked
    gm("relate", "global-lrn-0001", "causal", "global-epi-0001")
    os.mkfifo(gm.root / "global/semantic/pipe.md")
    for args in (("check",), ("related", "global-epi-0001"), ("search", "friday")):
        done = subprocess.run([sys.executable, "-m", "gitmem", "--root", str(gm.root), *args],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode in (0, 1, 2), (args, done.stderr)
    walked = subprocess.run([sys.executable, "-m", "gitmem", "--root", str(gm.root), "related",
                             "global-epi-0001"], capture_output=True, text=True, timeout=120)
    assert "led to global-lrn-0001" in walked.stdout
