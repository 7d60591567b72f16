"""`gitmem capture` on recorded sample transcripts of the three formats, with fake models."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fakemodels import fake_model
from gitmem.capture.digests import list_digests, read_digest
from gitmem.capture.pipeline import capture
from gitmem.capture.sessions import load_watermark
from gitmem.models import config
from gitmem.store.store import Store
from support import Cli, git

SAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"
CLAUDE_SESSION = "4f2a9c1e-7d3b-4c55-9a1e-2b8f0c6d7e11"


def sample(tmp_path: Path, name: str) -> Path:
    """A copy of a sample transcript (tests append to their copy)."""
    target = tmp_path / name
    shutil.copy(SAMPLES / name, target)
    return target


def append_lines(path: Path, *objects: dict[str, object]) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        for obj in objects:
            handle.write(json.dumps(obj) + "\n")


def model_calls(tmp_path: Path) -> list[str]:
    log = tmp_path / "model-calls.log"
    return log.read_text().split() if log.exists() else []


@pytest.fixture(autouse=True)
def _model_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_MODEL_LOG", str(tmp_path / "model-calls.log"))


def test_claude_code_transcript_without_a_model_keeps_clipped_notes(store: Store, tmp_path: Path) -> None:
    report = capture(store, sample(tmp_path, "claude-code.jsonl"))
    assert (report.format, report.session, report.result) == ("claude-code", CLAUDE_SESSION, "notes")
    assert report.tool_calls == 5
    assert report.paths == ["src/queue/worker.py", "src", "tests/queue/test_worker.py", "config/rabbitmq.yml"]
    assert report.dropped["thinking"] == 1 and report.dropped["tool results"] == 5
    assert report.dropped["acknowledgements"] == 1 and report.dropped["sidechain"] == 1
    digest = read_digest(store.root, report.digest or "")
    assert digest is not None
    assert digest.header["session"] == CLAUDE_SESSION and digest.header["branch"] == "main"
    assert digest.header["first"].startswith("2026-11-30T09:00") and digest.header["status"] == "pending"
    assert digest.files == report.paths
    assert [day for day, _ in digest.sections] == ["2026-11-30"]
    text = (store.root / "digests" / f"{digest.id}.md").read_text()
    # What the filter refuses never reaches the digest.
    for refused in ("gitmem memory —", "The user opened src/queue/worker.py", "Let me read it",
                    "channel.basic_ack(msg.tag)\n", "/etc/rabbitmq", "ok thanks", "Subagent:",
                    "Analysis complete", "def handle"):
        assert refused not in text, refused
    assert "**user:** The job queue drops messages" in text
    assert "**assistant:** The worker now acks after processing" in text  # "Done." opener skipped


def test_codex_rollout_and_generic_jsonl_are_detected(store: Store, tmp_path: Path) -> None:
    codex = capture(store, sample(tmp_path, "codex.jsonl"))
    assert (codex.format, codex.result, codex.workspace) == ("codex", "notes", "acme-billing")
    assert codex.paths == ["billing/invoice.py", "billing/rounding.py"]
    text = (store.root / "digests" / f"{codex.digest}.md").read_text()
    assert "environment_context" not in text and "AGENTS.md" not in text and "make test before" not in text
    assert "banker's rounding applied once" in text and "branch: feature/invoices" in text
    generic = capture(store, sample(tmp_path, "generic.jsonl"))
    assert (generic.format, generic.session, generic.result) == ("jsonl", "retro-2026-11-28", "notes")
    assert generic.paths == ["deploy/pipeline.yml"]
    text = (store.root / "digests" / f"{generic.digest}.md").read_text()
    assert "helpful assistant" not in text and "thanks!" not in text
    assert "stages: [build" not in text  # a tool result


def test_format_is_given_or_refused_clearly(gm: Cli, tmp_path: Path) -> None:
    path = sample(tmp_path, "generic.jsonl")
    assert gm("capture", str(path), "--format", "jsonl").exit_code == 0
    weird = tmp_path / "weird.jsonl"
    weird.write_text('{"hello": "world"}\n')
    refused = gm("capture", str(weird))
    assert refused.exit_code == 2 and "--format" in refused.stderr
    assert gm("capture", str(tmp_path / "missing.jsonl")).exit_code == 1


def test_a_subagent_session_is_skipped_entirely(store: Store, tmp_path: Path) -> None:
    config.add_rung(store.root, "good", fake_model(tmp_path, "good"))
    report = capture(store, sample(tmp_path, "claude-code-subagent.jsonl"))
    assert report.result == "subagent" and report.digest is None
    assert list_digests(store.root) == [] and model_calls(tmp_path) == []
    assert load_watermark(store.root, CLAUDE_SESSION).offset == 0
    delegated = tmp_path / "delegated.jsonl"
    delegated.write_text(json.dumps({"session": "s1", "delegated": True}) + "\n"
                         + json.dumps({"role": "user", "content": "x" * 900}) + "\n")
    assert capture(store, delegated).result == "subagent"


def test_second_capture_reads_only_new_events(store: Store, tmp_path: Path) -> None:
    path = sample(tmp_path, "generic.jsonl")
    first = capture(store, path)
    assert first.new_events == 6
    again = capture(store, path)
    assert (again.result, again.new_events, again.digest) == ("no-new-events", 0, None)
    append_lines(path,
                 {"role": "user", "ts": "2026-11-29T09:00:00Z", "content": "The load balancer must keep "
                  "sticky sessions for the admin app; without them the CSRF tokens fail. " * 5},
                 {"role": "assistant", "ts": "2026-11-29T09:01:00Z", "content": "Enabled sticky sessions."})
    grown = capture(store, path)
    assert (grown.result, grown.new_events, grown.turns) == ("notes", 2, 2)
    text = (store.root / "digests" / f"{grown.digest}.md").read_text()
    assert "sticky sessions" in text and "Friday deploy" not in text
    assert "## 2026-11-29" in text


def test_a_replaced_transcript_is_read_from_the_last_event_seen(store: Store, tmp_path: Path) -> None:
    path = sample(tmp_path, "generic.jsonl")
    capture(store, path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], *lines[2:]]) + "\n")  # rewritten: the watermark no longer fits
    append_lines(path, {"role": "user", "ts": "2026-11-30T10:00:00Z", "content": "Rotate the signing key every 90 days; " * 20})
    report = capture(store, path)
    assert report.turns == 1 and "Rotate the signing key" in (store.root / "digests" / f"{report.digest}.md").read_text()


def test_thin_delta_skips_the_model_and_waits_for_more(store: Store, tmp_path: Path) -> None:
    config.add_rung(store.root, "good", fake_model(tmp_path, "good"))
    path = tmp_path / "thin.jsonl"
    append_lines(path, {"session": "thin-1", "cwd": str(tmp_path)},
                 {"role": "user", "ts": "2026-12-01T10:00:00Z", "content": "Use pnpm, not npm, in this repo."})
    thin = capture(store, path)
    assert thin.result == "thin" and thin.signal < 400 and thin.digest is None
    assert model_calls(tmp_path) == []
    metrics = json.loads((store.root / "state" / "metrics.json").read_text())
    assert metrics["savedCalls"] == {"thin": 1}
    append_lines(path, {"role": "assistant", "ts": "2026-12-01T10:05:00Z",
                        "content": "Switched the CI scripts to pnpm and removed package-lock.json. " * 8})
    full = capture(store, path)
    assert full.result == "captured" and full.turns == 2  # the thin turn waited and is included
    assert model_calls(tmp_path) == ["good"]


def test_no_signal_at_all_is_trivial(store: Store, tmp_path: Path) -> None:
    config.add_rung(store.root, "good", fake_model(tmp_path, "good"))
    path = tmp_path / "ping.jsonl"
    append_lines(path, {"session": "ping"}, {"role": "user", "content": "ok"},
                 {"role": "tool", "tool": "Read", "args": {"path": "README.md"}})
    report = capture(store, path)
    assert report.result == "trivial" and model_calls(tmp_path) == []
    assert capture(store, path).result == "no-new-events"  # trivial material is not kept waiting


def test_with_a_model_the_digest_holds_its_bullets(store: Store, tmp_path: Path) -> None:
    config.add_rung(store.root, "good", fake_model(tmp_path, "good"))
    report = capture(store, sample(tmp_path, "claude-code.jsonl"))
    assert (report.result, report.bullets, report.model) == ("captured", 5, "good")
    digest = read_digest(store.root, report.digest or "")
    assert digest is not None and digest.header["summary"] == "model:good"
    assert digest.sections[0][1][0].startswith("**Delivery:**")
    assert "The job queue drops" not in (store.root / "digests" / f"{digest.id}.md").read_text()


def test_reasoning_and_an_echoed_prompt_do_not_become_bullets(store: Store, tmp_path: Path) -> None:
    config.add_rung(store.root, "thinker", fake_model(tmp_path, "reasoning"))
    report = capture(store, sample(tmp_path, "claude-code.jsonl"))
    digest = read_digest(store.root, report.digest or "")
    assert digest is not None and report.result == "captured"
    assert [b.split(":**")[0] for b in digest.bullets()] == [
        "**Delivery", "**Prefetch", "**Staging", "**Failure mode", "**Config"]


def test_no_durable_content_settles_with_nothing_stored(store: Store, tmp_path: Path) -> None:
    config.add_rung(store.root, "picky", fake_model(tmp_path, "nothing"))
    path = sample(tmp_path, "generic.jsonl")
    report = capture(store, path)
    assert report.result == "nothing-durable" and report.digest is None
    assert list_digests(store.root) == []
    assert capture(store, path).result == "no-new-events"  # settled: not asked again
    assert model_calls(tmp_path) == ["nothing"]


@pytest.mark.parametrize("kind", ["prose", "empty", "fail", "slow", "truncated-json", "only-done"])
def test_a_failed_summary_is_retried_then_kept_as_failed_notes(gm: Cli, tmp_path: Path, kind: str) -> None:
    config.add_rung(gm.root, "bad", fake_model(tmp_path, kind), timeout=0.5)
    path = sample(tmp_path, "codex.jsonl")
    first = gm("capture", str(path), "--json")
    assert first.exit_code == 3
    data = json.loads(first.stdout)
    assert data["result"] == "failed" and data["digest"] is None and data["attempts"] == 1
    assert list_digests(gm.root) == []
    second = json.loads(gm("capture", str(path), "--json").stdout)
    assert second["result"] == "failed-notes" and second["attempts"] == 2
    digest = read_digest(gm.root, second["digest"])
    assert digest is not None and digest.header["summary"] == "notes (summary failed after 2 attempts)"
    assert digest.header["status"] == "pending"  # the material still reaches consolidation
    assert any("banker's rounding" in b for b in digest.bullets())
    assert json.loads(gm("capture", str(path), "--json").stdout)["result"] == "no-new-events"
    if kind in ("prose", "truncated-json"):  # a reply nothing could be read from is kept
        assert list((gm.root / "logs").glob("capture-failed-*.txt"))


def test_the_workspace_comes_from_the_sessions_own_folder(store: Store, tmp_path: Path) -> None:
    repo = tmp_path / "code" / "shop"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    git(repo, "remote", "add", "origin", "git@github.com:Acme/Shop-Front.git")
    path = tmp_path / "session.jsonl"
    append_lines(path, {"session": "ws-1", "cwd": str(repo / "src"), "branch": "main"},
                 {"role": "user", "ts": "2026-12-01T10:00:00Z", "content": "Prices are stored in cents. " * 30})
    (repo / "src").mkdir()
    report = capture(store, path)
    assert report.workspace == "acme-shop-front"
    assert read_digest(store.root, report.digest or "").header["workspace"] == "acme-shop-front"  # type: ignore[union-attr]


def test_the_window_is_trimmed_oldest_first_to_the_byte_budget(store: Store, tmp_path: Path) -> None:
    registry = json.loads((store.root / "memory.json").read_text())
    registry["settings"]["capture"] = {"maxBytes": 700}
    (store.root / "memory.json").write_text(json.dumps(registry))
    path = tmp_path / "long.jsonl"
    append_lines(path, {"session": "long"},
                 *({"role": "user", "ts": f"2026-12-01T10:{n:02d}:00Z", "content": f"Turn {n}: " + "word " * 40}
                   for n in range(10)))
    report = capture(Store(store.root), path)  # a new process reads the changed settings
    assert report.turns < 10 and report.dropped["trimmed (window)"] == 10 - report.turns
    text = (store.root / "digests" / f"{report.digest}.md").read_text()
    assert "Turn 9:" in text and "Turn 0:" not in text


def test_an_empty_transcript_is_nothing_new_and_garbage_is_refused(gm: Cli, tmp_path: Path) -> None:
    empty = tmp_path / "starting.jsonl"
    empty.write_text("")
    result = gm("capture", str(empty), "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["result"] == "no-new-events"
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"not json\n\x00\xff\n")
    refused = gm("capture", str(garbage))
    assert refused.exit_code == 2 and "cannot tell the format" in refused.stderr


def test_a_line_still_being_written_waits_for_its_end(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    done = json.dumps({"role": "user", "content": "Keep the API backwards compatible until v3. " * 12})
    path.write_text(done + "\n" + '{"role": "assistant", "content": "Agreed, v2 clients')
    first = capture(store, path)
    assert first.new_events == 1 and first.turns == 1
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(' stay supported until the v3 launch."}\n')
    second = capture(store, path)
    assert second.new_events == 1 and second.result == "thin"  # the finished line, read once


def test_subagents_cannot_capture_consolidate_or_record_history(gm: Cli, tmp_path: Path) -> None:
    env = {"GITMEM_SUBAGENT": "1"}
    for args in (["capture", str(sample(tmp_path, "generic.jsonl"))], ["consolidate"],
                 ["history", "--repo", str(tmp_path)]):
        result = gm(*args, env=env)
        assert result.exit_code == 2 and "subagents do not write memory" in result.stderr, args
    assert list_digests(gm.root) == []
