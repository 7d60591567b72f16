"""`gitmem export` and `gitmem import gitmem`: everything out, and back into an empty store
with every Id, field, relation, runtime item and document as it was."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gitmem.store.store import Store
from support import Cli, commit_count


def _filled(gm: Cli, tmp: Path) -> None:
    assert gm("remember", "The API listens on port 8080", "--layer", "semantic", "--topic", "api").exit_code == 0
    assert gm("remember", "Ümlaut and 日本語 in one fact", "--layer", "semantic", "--topic", "api").exit_code == 0
    assert gm("remember", "Deploy with make deploy", "--layer", "procedural", "--topic", "deploy",
              "--scope", "workspace", "--importance", "high", workspace="orbit").exit_code == 0
    assert gm("decision", "Use Postgres", "-r", "We need transactions", "-a", "SQLite").exit_code == 0
    assert gm("relate", "global-dec-0001", "causal", "global-sem-0001").exit_code == 0
    assert gm("forget", "global-sem-0002").exit_code == 0
    assert gm("runtime", "add", "User prefers tabs", "--target", "user").exit_code == 0
    assert gm("runtime", "add", "Build takes 3 minutes").exit_code == 0
    (tmp / "runbook.md").write_text("# Runbook\n\nStep one: drain the queue.\n", encoding="utf-8")
    assert gm("doc", "add", str(tmp / "runbook.md"), "--title", "Runbook", workspace="orbit").exit_code == 0
    assert gm("state", "Goal", "Ship v2", workspace="orbit").exit_code == 0


def _fresh(tmp: Path, name: str) -> Cli:
    store = Store(tmp / name, cwd=tmp)
    store.init()
    store.close()
    return Cli(store.root, CliRunner())


def _without_time(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if '"exported_at"' not in line)


def test_json_export_holds_every_kind_of_record(gm: Cli, tmp_path: Path) -> None:
    _filled(gm, tmp_path)
    data = json.loads(gm("export").stdout)
    assert data["format"] == "gitmem-export" and data["version"] == 1
    entries = {e["id"]: e for t in data["topics"] for e in t["entries"]}
    assert set(entries) == {"global-sem-0001", "global-sem-0002", "orbit-pro-0001", "global-dec-0001"}
    assert entries["orbit-pro-0001"]["fields"]["Importance"] == "high"
    assert entries["global-sem-0002"]["status"] == "forgotten"
    assert {"from": "global-dec-0001", "type": "causal", "to": "global-sem-0001"} in data["relations"]
    assert sorted(i["content"] for i in data["runtime"]) == ["Build takes 3 minutes", "User prefers tabs"]
    assert [d["title"] for d in data["documents"]] == ["Runbook"]
    paths = {f["path"] for f in data["files"]}
    assert {"workspaces/orbit/state.md", "workspaces/orbit/documents/index.json",
            "global/runtime/memories.json"} <= paths


def test_round_trip_into_an_empty_store_is_lossless(gm: Cli, tmp_path: Path) -> None:
    _filled(gm, tmp_path)
    for fmt in ("json", "jsonl"):
        first = gm("export", "--format", fmt).stdout
        (tmp_path / f"out.{fmt}").write_text(first, encoding="utf-8")
        other = _fresh(tmp_path, f"copy-{fmt}")
        done = other("import", "gitmem", str(tmp_path / f"out.{fmt}"))
        assert done.exit_code == 0, done.output
        again = other("export", "--format", fmt).stdout
        # Only the export's own time differs.
        assert _without_time(again) == _without_time(first)
        shown = other.json("show", "orbit-pro-0001")
        assert isinstance(shown, dict) and "Deploy with make deploy" in json.dumps(shown)
        assert "Runbook" in other("doc", "list", workspace="orbit").output


def test_importing_an_export_twice_changes_nothing(gm: Cli, tmp_path: Path) -> None:
    _filled(gm, tmp_path)
    assert gm("export", str(tmp_path / "all.json")).exit_code == 0
    other = _fresh(tmp_path, "copy")
    assert other("import", "gitmem", str(tmp_path / "all.json")).exit_code == 0
    commits = commit_count(other.root)
    again = other.json("import", "gitmem", str(tmp_path / "all.json"))
    assert isinstance(again, dict) and again["commit"] is None
    assert set(again["counts"]) == {"unchanged"}
    assert commit_count(other.root) == commits


def test_a_number_another_entry_holds_is_renumbered(gm: Cli, tmp_path: Path) -> None:
    assert gm("remember", "Alpha fact", "--layer", "semantic", "--topic", "t").exit_code == 0
    assert gm("export", str(tmp_path / "a.json")).exit_code == 0
    data = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    data["topics"][0]["entries"][0]["fields"]["Created"] = "2026-01-05"  # made on another day
    (tmp_path / "a.json").write_text(json.dumps(data), encoding="utf-8")
    other = _fresh(tmp_path, "copy")
    assert other("remember", "Beta fact of the other store", "--layer", "semantic", "--topic", "t").exit_code == 0
    report = other.json("import", "gitmem", str(tmp_path / "a.json"))
    assert isinstance(report, dict)
    assert [(a["action"], a["id"]) for a in report["actions"] if a["title"] == "Alpha fact"] == \
        [("renumbered", "global-sem-0002")]
    # The store's own global-sem-0001 is left as it was.
    assert "Beta fact" in other("show", "global-sem-0001").output
    assert "Alpha fact" in other("show", "global-sem-0002").output


def test_an_entry_edited_in_the_store_since_is_kept(gm: Cli, tmp_path: Path) -> None:
    assert gm("remember", "Alpha fact", "--layer", "semantic", "--topic", "t").exit_code == 0
    assert gm("export", str(tmp_path / "a.json")).exit_code == 0
    path = gm.root / "global/semantic/t.md"
    path.write_text(path.read_text(encoding="utf-8").replace("Alpha fact\n\n", "Alpha fact, edited\n\n"),
                    encoding="utf-8")
    report = gm.json("import", "gitmem", str(tmp_path / "a.json"))
    assert isinstance(report, dict)
    assert [a["action"] for a in report["actions"] if a["id"] == "global-sem-0001"] == ["kept-edit"]
    assert "Alpha fact, edited" in path.read_text(encoding="utf-8")


def test_export_to_a_file_and_by_scope(gm: Cli, tmp_path: Path) -> None:
    _filled(gm, tmp_path)
    assert gm("export", "--format", "jsonl", "--scope", "global", str(tmp_path / "g.jsonl")).exit_code == 0
    lines = [json.loads(line) for line in (tmp_path / "g.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines[0]["kind"] == "header"
    assert {r["id"] for r in lines if r["kind"] == "entry"} == {"global-sem-0001", "global-sem-0002",
                                                               "global-dec-0001"}
    markdown = gm("export", "--format", "markdown").stdout
    assert "## Use Postgres" in markdown and "**Id:** orbit-pro-0001" in markdown
    assert not list(tmp_path.glob(".g.jsonl.*.tmp"))


def test_a_broken_export_is_refused_naming_the_line(gm: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "header", "format": "gitmem-export", "version": 1}\n{"kind": "entry",\n',
                   encoding="utf-8")
    commits = commit_count(gm.root)
    result = gm("import", "gitmem", str(bad))
    assert result.exit_code == 2
    assert "bad.jsonl:2" in result.output and "nothing was written" in result.output
    assert commit_count(gm.root) == commits
    other = tmp_path / "other.json"
    other.write_text('{"format": "something-else", "version": 1}', encoding="utf-8")
    assert "not a gitmem export" in gm("import", "gitmem", str(other)).output


def test_a_file_that_is_not_text_stops_the_export_in_one_line(gm: Cli, tmp_path: Path) -> None:
    assert gm("runtime", "add", "Build takes 3 minutes").exit_code == 0
    (gm.root / "global/runtime/notes.bin").write_bytes(b"\xff\xfe\x00binary")
    result = gm("export", str(tmp_path / "out.json"))
    assert result.exit_code == 2
    assert result.output.strip().startswith("gitmem: error: cannot export global/runtime/notes.bin")
    assert not (tmp_path / "out.json").exists() and not list(tmp_path.glob(".out.json.*"))


def test_an_export_edited_by_hand_cannot_break_the_store(gm: Cli, tmp_path: Path) -> None:
    """A body line that reads as a heading, a field or a conflict marker is escaped as every
    write escapes it (one entry, the Id the import reported, `check` clean); a field name that
    is no field name is refused in one line and nothing is written."""
    _filled(gm, tmp_path)
    exported = tmp_path / "export.jsonl"
    assert gm("export", str(exported), "--format", "jsonl").exit_code == 0
    lines = exported.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if '"kind": "entry"' in line)
    record = json.loads(lines[at])
    record["body"] += "\n## Not an entry\n<<<<<<< mine\n**Id:** global-sem-0042"
    lines[at] = json.dumps(record, ensure_ascii=False)
    exported.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fresh = _fresh(tmp_path, "fresh")
    done = fresh("import", "gitmem", str(exported))
    assert done.exit_code == 0, done.output
    assert fresh("check").exit_code == 0
    shown = fresh.json("show", record["id"])
    assert "Not an entry" in shown["body"] and "global-sem-0042" in shown["body"]  # type: ignore[index]
    assert fresh("show", "global-sem-0042").exit_code == 1
    record["fields"]["Bad\n## Name"] = "x"
    lines[at] = json.dumps(record, ensure_ascii=False)
    exported.write_text("\n".join(lines) + "\n", encoding="utf-8")
    other = _fresh(tmp_path, "other")
    commits = commit_count(other.root)
    refused = other("import", "gitmem", str(exported))
    assert refused.exit_code == 2 and "is not a field name" in refused.output
    assert commit_count(other.root) == commits


def test_a_field_given_twice_comes_back_twice(gm: Cli, tmp_path: Path) -> None:
    """`**Tags:**` written twice by hand: the export holds the second line apart (extra_fields),
    and the store it is imported into holds both lines, so a second export is the first."""
    topic = gm.root / "global/semantic/hand.md"
    topic.parent.mkdir(parents=True, exist_ok=True)
    topic.write_text("# hand\n\n## Hand entry\nBody line\n\n**Id:** global-sem-0099\n**Tags:** a, b\n"
                     "**Tags:** c\n", encoding="utf-8")
    assert gm("remember", "Another fact", "--layer", "semantic").exit_code == 0  # commits the edit
    first = tmp_path / "first.json"
    assert gm("export", str(first)).exit_code == 0
    fresh = _fresh(tmp_path, "fresh")
    assert fresh("import", "gitmem", str(first)).exit_code == 0
    assert "**Tags:** a, b\n**Tags:** c" in (fresh.root / "global/semantic/hand.md").read_text()
    second = tmp_path / "second.json"
    assert fresh("export", str(second)).exit_code == 0
    entries = [[e for t in json.loads(p.read_text())["topics"] for e in t["entries"]] for p in (first, second)]
    hand = [[e for e in listed if e["id"] == "global-sem-0099"] for listed in entries]
    assert hand[0] == hand[1] and hand[0][0]["extra_fields"] == [["Tags", "c"]]


def test_the_review_queue_goes_with_a_whole_store_export(gm: Cli, tmp_path: Path) -> None:
    """Facts waiting for review come from digests already consolidated: an export without them
    would lose them. Read into a store with its own queue, both queues' items are kept."""
    item = {"id": "r0000000001", "layer": "semantic", "scope": "global", "topic": "rabbit",
            "text": "A prefetch of 50 starved the other consumers.", "importance": "normal",
            "volatility": "stable", "confidence": 0.4, "digest": "20261205-000000-aaaa0000",
            "fingerprint": "f1", "at": "2026-12-05T00:00:00+00:00", "machine": "m"}
    (gm.root / "review.json").write_text(json.dumps({"version": 1, "items": [item]}), encoding="utf-8")
    assert gm("remember", "A fact", "--layer", "semantic").exit_code == 0  # commits the queue
    assert gm("remember", "A workspace fact", "--layer", "semantic", "--scope", "workspace",
              workspace="orbit").exit_code == 0
    exported = tmp_path / "export.json"
    assert gm("export", str(exported)).exit_code == 0
    fresh = _fresh(tmp_path, "fresh")
    own = {**item, "id": "r0000000002", "text": "Acks come after the commit.", "fingerprint": "f2"}
    (fresh.root / "review.json").write_text(json.dumps({"version": 1, "items": [own]}), encoding="utf-8")
    assert fresh("import", "gitmem", str(exported)).exit_code == 0
    waiting = {i["id"] for i in fresh.json("review")["items"]}  # type: ignore[index]
    assert waiting == {"r0000000001", "r0000000002"}
    scoped = gm("export", "--scope", "global").stdout
    assert '"review.json"' not in scoped
