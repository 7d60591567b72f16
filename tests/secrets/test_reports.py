"""Capture and consolidation never carry a secret on: the digest (and so the model's prompt) is
masked, a fact the gate refuses is reported masked, and the logs hold only masked text."""

from __future__ import annotations

import json
import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fixtures.tokens import SHAPES, Shape
from gitmem.capture.digests import PENDING, Digest, new_digest_id, write_digest
from gitmem.models import config
from support import Cli, commit_count

BY_NAME = {shape.name: shape for shape in SHAPES}
KEY_ID = "AK" + "IA" + "QWERTYUIOPASDFGH"
AWS_SECRET = BY_NAME["AWS key pair in prose"].value
SAMPLE = [BY_NAME[name] for name in ("AWS key pair in prose", "AWS secret access key (env)",
                                     "Anthropic API key", "password: assignment", "npm token",
                                     "Basic-auth URL credentials", "JSON Web Token")]


def replying(tmp_path: Path, reply: str) -> str:
    """A model command that answers every prompt with `reply` and keeps the prompt it got."""
    script = tmp_path / "model.py"
    script.write_text("import sys, pathlib\n"
                      f"pathlib.Path({str(tmp_path / 'prompt.txt')!r}).write_text(sys.stdin.read())\n"
                      f"sys.stdout.write({reply!r})\n", encoding="utf-8")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def transcript(tmp_path: Path, shapes: list[Shape]) -> Path:
    path = tmp_path / "session.jsonl"
    lines = [{"role": "user", "ts": "2026-12-01T09:00:00Z",
              "content": "We moved the nightly export to the new bucket today. " * 3}]
    for n, shape in enumerate(shapes):
        lines.append({"role": "user", "ts": f"2026-12-01T09:{n + 1:02d}:00Z",
                      "content": f"For the export job, {shape.forms()['prose']} and it runs at 02:00."})
        lines.append({"role": "assistant", "ts": f"2026-12-01T09:{n + 1:02d}:30Z",
                      "content": f"Noted: the export job uses {shape.forms()['env']} from now on."})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def store_text(root: Path, folder: str) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in (root / folder).rglob("*") if p.is_file())


def test_capture_masks_every_secret_in_the_digest_without_a_model(gm: Cli, tmp_path: Path) -> None:
    result = gm("capture", str(transcript(tmp_path, SAMPLE)), "--format", "jsonl")
    assert result.exit_code == 0, result.output
    digests = store_text(gm.root, "digests")
    assert "nightly export" in digests and "***" in digests
    for shape in SAMPLE:
        assert shape.secret not in digests + result.output, shape.name


def test_capture_masks_a_secret_the_model_repeats(gm: Cli, tmp_path: Path) -> None:
    leak = f"- **Export:** the job uses key {KEY_ID} secret {AWS_SECRET} for the bucket."
    config.add_rung(gm.root, "leaky", replying(tmp_path, leak))
    result = gm("capture", str(transcript(tmp_path, SAMPLE[:1])), "--format", "jsonl", "--min-signal", "1", "--json")
    assert result.exit_code == 0, result.output
    prompt = (tmp_path / "prompt.txt").read_text(encoding="utf-8")
    assert "nightly export" in prompt and AWS_SECRET not in prompt and KEY_ID not in prompt
    digests = store_text(gm.root, "digests")
    assert "the job uses key" in digests
    assert AWS_SECRET not in digests and KEY_ID not in digests


def _digest(root: Path, bullet: str) -> str:
    when = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    digest = Digest(new_digest_id(root, "session01", when), {
        "session": "session01", "format": "generic", "workspace": "", "branch": "main",
        "first": when.isoformat(), "last": when.isoformat(), "captured": when.isoformat(),
        "summary": "model:old", "status": PENDING, "attempts": "0", "consolidated": "",
    }, [], [("2026-12-01", [bullet])])  # written before digests were masked, or by hand
    write_digest(root, digest)
    return digest.id


@pytest.mark.parametrize("as_json", [False, True])
def test_consolidate_reports_a_refused_fact_masked_and_logs_nothing(gm: Cli, tmp_path: Path,
                                                                   as_json: bool) -> None:
    fact = f"the export uses key {KEY_ID} secret {AWS_SECRET}"
    digest = _digest(gm.root, f"**Export:** {fact}")
    reply = (f"- [{digest} | global | semantic | high] export :: {fact}\n"
             f"- [{digest} | global | semantic | normal] export :: The export runs at 02:00.\n"
             f"not a protocol line, with {KEY_ID} in it\nDONE {digest}\n")
    config.add_rung(gm.root, "leaky", replying(tmp_path, reply))
    before = commit_count(gm.root)
    result = gm("consolidate", *(["--json"] if as_json else []))
    assert result.exit_code == 0, result.output
    out = result.stdout + result.stderr
    assert AWS_SECRET not in out and KEY_ID not in out
    if as_json:
        report = json.loads(result.stdout)
        failed = report["writeFailed"] if "writeFailed" in report else report["write_failed"]
        assert len(failed) == 1 and "***" in failed[0]["text"]
        assert "holds a likely secret" in failed[0]["reason"]
    else:
        assert "not written: the export uses key ***" in out
    assert commit_count(gm.root) == before + 1  # the other fact is written
    logs = store_text(gm.root, "logs")
    assert "02:00" in logs and AWS_SECRET not in logs and KEY_ID not in logs
    assert AWS_SECRET not in store_text(gm.root, "global")
