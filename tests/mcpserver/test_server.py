"""`gitmem mcp` end to end: the SDK's stdio client against one real server process per module,
every tool called with its effect checked in the store's files and git history."""

from __future__ import annotations

import shutil
from pathlib import Path

from support import git, run_gitmem

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"
TOOLS = {"search", "show", "remember", "forget", "verify", "decision", "codebase", "context",
         "state", "working", "status", "sync", "conflicts", "history", "capture", "runtime_add",
         "runtime_replace", "runtime_archive", "runtime_remove", "runtime_show", "runtime_maintain", "doc_add",
         "doc_show", "doc_search", "batch", "workspaces", "associate", "consolidate", "refresh", "resolve", "relate", "related",
         "why", "revert", "list", "check", "review_list", "review_accept", "review_reject"}
WRITES = {"remember", "forget", "verify", "decision", "codebase", "state", "working", "sync",
          "history", "capture", "runtime_add", "runtime_replace", "runtime_archive", "runtime_remove", "doc_add",
          "batch", "associate", "consolidate", "refresh", "resolve", "relate", "revert",
          "review_accept", "review_reject", "runtime_maintain"}


def _text(result) -> str:
    return result.content[0].text


def test_every_tool_is_listed_with_typed_inputs_and_the_rules(world) -> None:
    client = world.client
    tools = {t.name: t for t in client.run(client.session.list_tools()).tools}
    assert set(tools) == TOOLS
    for name in WRITES:
        assert "ubagent" in tools[name].description, name  # a subagent must not call it
    # Operations on the store, not facts written: no "writing nothing" rule for them.
    for name in WRITES - {"sync", "history", "capture", "associate", "consolidate", "refresh", "resolve",
                                 "revert", "review_accept", "review_reject", "runtime_maintain"}:
        assert "writing nothing is a correct outcome" in tools[name].description.lower(), name
    remember = tools["remember"].input_schema
    assert set(remember["required"]) == {"text", "layer"}
    assert "procedural" in str(remember["properties"]["layer"])


def test_remember_then_search_show_verify_forget(world) -> None:
    client = world.client
    made = client.ok("remember", {"text": "The deploy script ops/deploy.sh needs the VPN up.",
                                  "layer": "procedural", "topic": "deploy"})
    entry_id = made["id"]
    topic = world.root / made["path"]
    assert "needs the VPN up" in topic.read_text()
    assert git(world.root, "log", "-1", "--format=%s").startswith("remember")
    hits = client.ok("search", {"query": "deploy VPN"})["results"]
    assert [h["id"] for h in hits] == [entry_id]
    assert client.ok("show", {"entry_id": entry_id})["body"].startswith("The deploy script")
    client.ok("verify", {"entry_id": entry_id})
    assert client.ok("show", {"entry_id": entry_id})["fields"]["Verified"]
    client.ok("forget", {"entry_id": entry_id})
    assert "**Forgotten:**" in topic.read_text()
    assert client.ok("search", {"query": "deploy VPN"})["results"] == []
    client.ok("forget", {"entry_id": entry_id, "undo": True})
    assert [h["id"] for h in client.ok("search", {"query": "deploy VPN"})["results"]] == [entry_id]


def test_decision_codebase_state_and_working_land_in_their_files(world) -> None:
    client = world.client
    made = client.ok("decision", {"statement": "Use SQLite for the job queue",
                                  "rationale": "One file, no server to run.",
                                  "alternatives": ["Redis"], "scope": "workspace"})
    decisions = (world.root / made["path"]).read_text()
    assert "Use SQLite for the job queue" in decisions and "Redis" in decisions
    assert made["path"].startswith("workspaces/proj/")
    made = client.ok("codebase", {"topic": "app.py", "text": "Entry point; prints a greeting."})
    assert "prints a greeting" in (world.root / made["path"]).read_text()
    made = client.ok("state", {"section": "Status", "content": "Alpha, not deployed."})
    assert "Alpha, not deployed." in (world.root / "workspaces/proj/state.md").read_text()
    client.ok("working", {"section": "Task", "content": "Wire the MCP server",
                          "activity": "started on the tools"})
    working = (world.root / "workspaces/proj/working.md").read_text()
    assert "Wire the MCP server" in working and "started on the tools" in working


def test_runtime_tools_change_the_projection(world) -> None:
    client = world.client
    memory = world.root / "global" / "runtime" / "MEMORY.md"
    added = client.ok("runtime_add", {"text": "Run tests with the venv's python", "importance": "critical"})
    assert "Run tests with the venv's python" in memory.read_text()
    client.ok("runtime_replace", {"old": added["id"], "new": "Run tests with .venv/bin/python"})
    assert ".venv/bin/python" in memory.read_text()
    shown = client.ok("runtime_show", {"target": "memory"})
    assert any(".venv/bin/python" in item["content"] for block in shown["scopes"] for item in block["items"])
    card = _text(client.call("context"))
    assert ".venv/bin/python" in card
    client.ok("runtime_remove", {"old": ".venv/bin/python"})
    assert ".venv/bin/python" not in memory.read_text()


def test_documents_add_show_search(world) -> None:
    client = world.client
    added = client.ok("doc_add", {"text": "# Queue\n\nJobs retry three times with backoff.\n",
                                  "title": "Queue design", "description": "How jobs retry"})
    assert (world.root / added["path"]).is_file()
    assert "backoff" in client.ok("doc_show", {"doc_id": added["id"]})["body"]
    hits = client.ok("doc_search", {"query": "backoff"})["results"]
    assert [h["id"] for h in hits] == [added["id"]]


def test_context_resource_and_prompt_carry_the_card(world) -> None:
    client = world.client
    client.ok("working", {"section": "Next steps", "content": "Write the integrate command"})
    card = _text(client.call("context"))
    assert card.startswith("## gitmem memory — workspace proj")
    assert "Write the integrate command" in card
    resource = client.run(client.session.read_resource("gitmem://context"))
    assert resource.contents[0].text == card
    prompt = client.run(client.session.get_prompt("start-of-session"))
    assert prompt.messages[0].content.text.startswith(card)


def test_status_history_conflicts_capture(world, tmp_path: Path) -> None:
    client = world.client
    assert client.ok("status")["root"] == str(world.root)
    report = client.ok("history")
    assert report["workspace"] == "proj" and report["recorded"] >= 1
    assert client.ok("search", {"query": "First commit of the app", "layer": "history"})["results"]
    assert client.ok("conflicts")["results"] == []
    transcript = tmp_path / "session.jsonl"
    shutil.copy(FIXTURES / "claude-code.jsonl", transcript)
    captured = client.ok("capture", {"transcript": str(transcript), "use_model": False})
    assert captured["digest"] and captured["result"] in ("notes", "captured")
    assert list((world.root / "digests").rglob(f"*{captured['digest']}*"))


def test_sync_pushes_to_the_remote(world, tmp_path: Path) -> None:
    client = world.client
    failed = client.call("sync")
    assert failed.is_error and _text(failed).startswith("gitmem: error: ")
    assert "\n" not in _text(failed) and "Traceback" not in _text(failed)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    done = run_gitmem("--root", str(world.root), "remote", "set", str(remote), env={"HOME": str(world.home)})
    assert done.returncode == 0, done.stderr
    client.ok("sync")
    assert git(remote, "rev-parse", "main").strip() == git(world.root, "rev-parse", "HEAD").strip()


def test_a_bad_id_is_a_tool_error_with_the_cli_line(world) -> None:
    result = world.client.call("forget", {"entry_id": "global-sem-9999"})
    assert result.is_error
    cli = run_gitmem("--root", str(world.root), "forget", "global-sem-9999", env={"HOME": str(world.home)})
    assert cli.returncode == 1
    assert _text(result) == cli.stderr.strip() == "gitmem: error: no entry with Id global-sem-9999"
    malformed = world.client.call("show", {"entry_id": "nonsense"})
    assert malformed.is_error and _text(malformed).startswith("gitmem: error: malformed Id")


def test_hand_edits_between_calls_are_seen_as_the_cli_sees_them(world) -> None:
    client = world.client
    made = client.ok("remember", {"text": "Staging runs on port 8443.", "layer": "semantic",
                                  "topic": "ports"})
    topic = world.root / made["path"]
    topic.write_text(topic.read_text().replace("port 8443", "port 9443"))  # uncommitted
    hits = client.ok("search", {"query": "staging port"})["results"]
    cli = run_gitmem("--root", str(world.root), "search", "staging port", "--json",
                     env={"HOME": str(world.home)})
    assert "9443" in hits[0]["snippet"] and "9443" in cli.stdout
    assert client.ok("show", {"entry_id": made["id"]})["body"].startswith("Staging runs on port 9443")
    # A plain-git commit of another hand edit is seen as well.
    topic.write_text(topic.read_text().replace("port 9443", "port 7443"))
    git(world.root, "commit", "-q", "-am", "hand edit")
    assert "7443" in client.ok("search", {"query": "staging port"})["results"][0]["snippet"]


def test_memory_json_edited_between_calls_is_read_again(world) -> None:
    """Settings, workspaces and routing live in memory.json: each call reads it afresh."""
    import json

    client = world.client
    assert "Cut to fit" not in _text(client.call("context"))
    settings_file = world.root / "memory.json"
    original = settings_file.read_text()
    data = json.loads(original)
    data.setdefault("settings", {})["contextMaxChars"] = 300
    settings_file.write_text(json.dumps(data, indent=2) + "\n")
    try:
        assert "Cut to fit" in _text(client.call("context"))
    finally:
        settings_file.write_text(original)
    assert "Cut to fit" not in _text(client.call("context"))


def test_a_sync_that_leaves_conflicts_is_a_result_not_a_tool_error(world, tmp_path: Path) -> None:
    """Last in this module: it leaves a conflict block in the store."""
    client = world.client
    env = {"HOME": str(world.home)}
    remote = tmp_path / "conflicts-remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    assert run_gitmem("--root", str(world.root), "remote", "set", str(remote), env=env).returncode == 0
    made = client.ok("remember", {"text": "Nightly backups start at 02:00", "layer": "semantic",
                                  "topic": "backups"})
    client.ok("sync")
    other = tmp_path / "other"
    cloned = run_gitmem("--root", str(other), "init", "--remote", str(remote), env=env)
    assert cloned.returncode == 0, cloned.stderr
    theirs = other / made["path"]
    theirs.write_text(theirs.read_text().replace("02:00", "03:00"))
    assert run_gitmem("--root", str(other), "sync", env=env).returncode == 0
    ours = world.root / made["path"]
    ours.write_text(ours.read_text().replace("02:00", "04:00"))  # a hand edit, not yet committed
    result = client.call("sync")
    assert not result.is_error, _text(result)
    assert result.structured_content["result"] == "conflicts"
    assert "conflicts tool" in _text(result)
    listed = client.ok("conflicts")
    assert made["id"] in str(listed)
    assert "03:00" in ours.read_text() and "04:00" in ours.read_text()


def _examples(tools: dict, param: str) -> set[str]:
    """The ids a parameter's description gives as examples."""
    import re

    found: set[str] = set()
    for tool in tools.values():
        prop = tool.input_schema["properties"].get(param)
        if prop:
            found.update(re.findall(r"\b(?:e\.g\.|or) ([a-z]+-[a-z]+-\d{4})\b", prop["description"]))
    return found


def test_id_examples_in_the_tool_descriptions_have_the_shape_of_real_ids(world) -> None:
    import re

    from gitmem.documents.model import parse_doc_id
    from gitmem.format.layers import parse_id

    client = world.client
    tools = {t.name: t for t in client.run(client.session.list_tools()).tools}
    entries, docs = _examples(tools, "entry_id"), _examples(tools, "doc_id")
    assert entries and docs
    real_entry = client.ok("remember", {"text": "Id shapes are shown as they are.", "layer": "semantic"})["id"]
    real_doc = client.ok("doc_add", {"text": "# Ids\n\nShapes.\n", "title": "Id shapes"})["id"]

    def shape(ident: str) -> str:  # <scope>-<abbr>-<number>, whatever the scope's name
        _scope, abbr, number = ident.rsplit("-", 2)
        return f"{abbr}-{re.sub(r'[0-9]', '9', number)}"

    assert shape(real_entry) in {shape(e) for e in entries}, (real_entry, entries)
    assert shape(real_doc) in {shape(d) for d in docs}, (real_doc, docs)
    for example in entries:
        parsed = parse_id(example)
        assert parsed is not None and parsed.scope in ("global", "shop"), example
    for example in docs:
        assert parse_doc_id(example) is not None and example.split("-")[0] in ("global", "shop")


def test_arguments_of_the_wrong_type_are_one_error_line(world) -> None:
    client = world.client
    cases = [("search", {"query": "x", "limit": "many"}, "limit"),
             ("remember", {"text": "x", "layer": "nonsense"}, "layer"),
             ("remember", {"layer": "semantic"}, "text"),
             ("verify", {"entry_id": 7}, "entry_id")]
    for name, arguments, field in cases:
        result = client.call(name, arguments)
        text = _text(result)
        assert result.is_error, (name, text)
        assert "\n" not in text and text.startswith(f"gitmem: error: {name}: {field}: "), text
        assert "pydantic" not in text and "validation error" not in text, text
    secret = "sk-not-echoed-back-1234"
    echoed = _text(client.call("search", {"query": "x", "limit": secret}))
    assert secret not in echoed
    unknown = client.call("no_such_tool", {})
    assert unknown.is_error and _text(unknown).startswith("gitmem: error: ") and "\n" not in _text(unknown)


def test_batch_is_one_commit_or_nothing(world) -> None:
    client = world.client
    first = client.ok("remember", {"text": "The staging database lives on db-stage-2.", "layer": "semantic",
                                   "topic": "batch-mcp"})["id"]
    head = git(world.root, "rev-parse", "HEAD").strip()
    refused = client.call("batch", {"items": [
        {"op": "remember", "text": "Staging deploys need a green pipeline.", "layer": "procedural"},
        {"op": "forget", "id": "global-sem-9998"}]})
    assert refused.is_error and _text(refused).startswith("gitmem: error: line 2: no entry with Id global-sem-9998")
    assert git(world.root, "rev-parse", "HEAD").strip() == head
    assert "green pipeline" not in run_gitmem("--root", str(world.root), "search", "green pipeline",
                                              env={"HOME": str(world.home)}).stdout
    done = client.ok("batch", {"items": [
        {"op": "supersede", "id": first, "text": "The staging database lives on db-stage-3."},
        {"op": "remember", "text": "Staging deploys need a green pipeline.", "layer": "procedural"},
        {"op": "verify", "id": first}]})
    assert done["written"] == 2 and done["commit"] == git(world.root, "rev-parse", "HEAD").strip()
    assert git(world.root, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    new_id = done["items"][0]["id"]
    assert f"**Supersedes:** {first}" in (world.root / done["items"][0]["path"]).read_text()
    assert new_id != first


def test_search_explains_its_ranking_when_asked(world) -> None:
    client = world.client
    made = client.ok("remember", {"text": "The nightly export job writes to the reports bucket.",
                                  "layer": "semantic", "topic": "exports"})
    plain = client.ok("search", {"query": "nightly export bucket"})["results"]
    assert plain and all("explain" not in hit for hit in plain)
    hits = client.ok("search", {"query": "nightly export bucket", "explain": True})["results"]
    why = next(hit["explain"] for hit in hits if hit["id"] == made["id"])
    assert {t["word"] for t in why["terms"]} == {"nightly", "export", "bucket"}
    assert why["coverage"] == {"matched": 3, "words": 3, "factor": 1.6}


def test_search_rerank_without_a_model_keeps_the_lexical_order_with_a_note(world) -> None:
    client = world.client
    for text in ("The audit log is kept for 400 days.", "Audit log exports run for 30 days."):
        client.ok("remember", {"text": text, "layer": "semantic", "topic": "audit"})
    plain = client.ok("search", {"query": "audit log days"})["results"]
    result = client.call("search", {"query": "audit log days", "rerank": True})
    assert not result.is_error
    assert result.structured_content["results"] == plain
    assert "rerank skipped, lexical order kept" in _text(result)


def test_the_text_an_agent_reads_masks_what_the_data_masks(world) -> None:
    """The tool's text is written from the masked data: masking the JSON text missed a secret
    whose marks JSON escapes (`password = \\"...\\"`). A private key header with no END line masks
    its own line, not every entry after it; a title derived from a long token is masked, not cut
    into a part no mask knows."""
    client = world.client
    password, key = "Sup3rS3cretHunter2x", "Zq8Lm3Np6Rt9Vw2Xy5Ab"
    token = "sk-ant-api03-" + "Xq3vB8nL2mK9pR4tW7yZ1cF6hJ0dG5sA8eQ2uI4oP7lM3nB9vC6xZ1kJ4hG8fD2sA5-qW3eR7tYAA"
    quoted = client.ok("remember", {"text": f'Connect with password = "{password}" and "api_key": "{key}"',
                                    "layer": "semantic", "topic": "creds", "allow_secret": True})
    header = client.ok("remember", {"text": "Deploy keys start with -----BEGIN OPENSSH PRIVATE KEY-----",
                                    "layer": "semantic", "topic": "creds", "allow_secret": True})
    long = client.ok("remember", {"text": f"The eval job uses {token} for the judge model",
                                  "layer": "semantic", "topic": "creds", "allow_secret": True})
    after = client.ok("remember", {"text": "Staging runs three replicas", "layer": "semantic",
                                   "topic": "creds"})
    shown = _text(client.call("show", {"entry_id": quoted["id"]}))
    assert password not in shown and key not in shown and '\\"***\\"' in shown
    listed = _text(client.call("list", {}))
    assert after["id"] in listed and header["id"] in listed and password not in listed
    assert token[:30] not in listed and token[:30] not in _text(client.call("show", {"entry_id": long["id"]}))
