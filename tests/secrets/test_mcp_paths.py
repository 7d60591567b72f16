"""The MCP write tools refuse a likely secret (the environment variable does not let one through),
and no MCP result prints one stored knowingly: one real server, driven by the SDK's client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcpserver.conftest import World

from fixtures.tokens import SHAPES, Shape
from support import commit_count

BY_NAME = {shape.name: shape for shape in SHAPES}
SAMPLE = [BY_NAME[name] for name in ("GitHub fine-grained token", "Anthropic API key",
                                     "AWS secret access key (ini)", "password: assignment",
                                     "Hugging Face token")]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    made = World(tmp_path_factory.mktemp("mcp-secrets"), env={"GITMEM_ALLOW_SECRET": "1"})
    yield made
    made.client.close()


def _said(result: object) -> str:
    content = getattr(result, "content", [])
    return "\n".join(getattr(block, "text", "") for block in content) + str(
        getattr(result, "structured_content", "") or "")


@pytest.mark.parametrize("shape", SAMPLE, ids=[s.name for s in SAMPLE])
def test_every_mcp_write_tool_refuses_a_secret(world: World, shape: Shape) -> None:
    text, secret = shape.forms()["prose"], shape.secret
    before = commit_count(world.root)
    for tool, arguments in (
            ("remember", {"text": text, "layer": "semantic"}),
            ("decision", {"statement": "Use the bot account", "rationale": text}),
            ("codebase", {"topic": "ci", "text": text}),
            ("state", {"section": "CI", "content": text}),
            ("working", {"activity": text}),
            ("runtime_add", {"text": text}),
            ("doc_add", {"text": f"# Runbook\n\n{text}\n", "title": "Runbook"})):
        result = world.client.call(tool, arguments)
        said = _said(result)
        assert result.is_error and "holds a likely secret" in said, (tool, said)
        assert secret not in said
    assert commit_count(world.root) == before


def test_mcp_reads_never_print_a_secret_stored_knowingly(world: World) -> None:
    shape = BY_NAME["npm token"]
    stored = world.client.ok("remember", {"text": f"Publishing note: {shape.forms()['prose']}",
                                          "layer": "semantic", "importance": "critical",
                                          "allow_secret": True})
    files = "\n".join(p.read_text(encoding="utf-8") for p in (world.root / "global").rglob("*.md"))
    assert shape.secret in files  # stored as written: the mask is on output only
    said = "\n".join(_said(world.client.call(tool, arguments)) for tool, arguments in (
        ("show", {"entry_id": stored["id"]}), ("search", {"query": "Publishing note"}),
        ("context", {}), ("status", {}), ("show", {"entry_id": shape.value})))
    assert "Publishing note" in said and "***" in said
    assert shape.secret not in said
