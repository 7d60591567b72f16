"""`gitmem import letta FILE.af`: the memory blocks of a Letta agent file.

An agent file is JSON. Its core memory blocks (`blocks` in the current schema, `core_memory`
in the first one) each hold a `label` (`human`, `persona`, or one the agent made) and a `value`;
each block with text becomes one entry, titled `<agent>: <label>` (its description kept), topic
`letta/<agent>`. The `human` block is what the agent knows of its user: semantic; others are
guessed from their wording. The blocks go to the global scope unless --scope workspace.
Messages, tools and archival memory are not memory a person wrote down and are not imported.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gitmem.imports.jsonsource import line_of, load_json
from gitmem.notes.model import Note, ReadContext, SourceFile, malformed


def _agent_name(data: dict[str, Any]) -> str:
    agents = data.get("agents")
    if isinstance(agents, list) and agents and isinstance(agents[0], dict) and agents[0].get("name"):
        return str(agents[0]["name"])
    return str(data.get("name") or "agent")


def _blocks(data: Any, shown: str) -> list[Any]:
    if not isinstance(data, dict):
        raise malformed(shown, 1, "not a Letta agent file (a JSON object is expected)")
    for key in ("blocks", "core_memory", "memory_blocks"):
        if isinstance(data.get(key), list):
            return list(data[key])
    memory = data.get("memory")
    if isinstance(memory, dict) and isinstance(memory.get("blocks"), list):
        return list(memory["blocks"])
    raise malformed(shown, 1, "not a Letta agent file (no blocks or core_memory)")


def read(path: Path | None, context: ReadContext) -> Iterator[SourceFile]:
    if path is None:
        raise malformed("letta", 1, "give the agent file (.af) to read")
    shown, text, data = load_json(path, context)
    blocks = _blocks(data, shown)
    agent = _agent_name(data)
    notes = []
    for index, block in enumerate(blocks):
        if not isinstance(block, dict) or not isinstance(block.get("label"), str):
            raise malformed(shown, 1, f"memory block {index + 1} has no label")
        value = block.get("value")
        if not isinstance(value, str):
            raise malformed(shown, line_of(text, f'"{block["label"]}"'),
                            f"memory block {block['label']!r} has no text value")
        if not value.strip():
            continue
        fields = {"Letta-block": block["label"]}
        if isinstance(block.get("description"), str) and block["description"].strip():
            fields["Description"] = " ".join(block["description"].split())
        notes.append(Note(anchor=f"{agent}/{block['label']}", title=f"{agent}: {block['label']}",
                          body=value.strip(), topic=f"letta/{agent}",
                          line=line_of(text, f'"{block["label"]}"'), scope="global",
                          layer="semantic" if block["label"] == "human" else None, fields=fields))
    yield SourceFile(shown, text, None, notes)
