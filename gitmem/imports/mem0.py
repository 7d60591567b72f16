"""`gitmem import mem0 FILE`: memories exported from mem0 as JSON.

Accepted shapes: what `Memory.get_all()` / the platform API return (`{"results": [...]}`), a
`{"memories": [...]}` export, or a plain list. Each record's text is `memory` (or `text`,
`content`); its `id` names it (a later import of an edited memory updates the entry), its
`created_at` day becomes Created, `categories` become Tags, `user_id` / `agent_id` kept as
fields. mem0 memories are about a person or an agent, not a project: they go to the global
scope unless --scope workspace.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gitmem.imports.jsonsource import day, line_of, load_json
from gitmem.notes.model import Note, ReadContext, SourceFile, malformed


def _records(data: Any, shown: str) -> list[Any]:
    if isinstance(data, dict):
        for key in ("results", "memories"):
            if isinstance(data.get(key), list):
                return list(data[key])
        raise malformed(shown, 1, "no list of memories (expected results, memories, or a list)")
    if isinstance(data, list):
        return data
    raise malformed(shown, 1, "no list of memories (expected results, memories, or a list)")


def _note(record: Any, index: int, text: str, shown: str) -> Note:
    if not isinstance(record, dict):
        raise malformed(shown, 1, f"memory {index + 1} is not an object")
    words = next((record[k] for k in ("memory", "text", "content") if isinstance(record.get(k), str)), None)
    if not words or not words.strip():
        raise malformed(shown, line_of(text, json.dumps(record.get("id", ""))),
                        f"memory {index + 1} has no text (memory, text or content)")
    fields: dict[str, str] = {}
    created = day(record.get("created_at"))
    if created:
        fields["Created"] = created
    categories = record.get("categories") or (record.get("metadata") or {}).get("categories")
    if isinstance(categories, list) and categories:
        fields["Tags"] = ", ".join(str(c) for c in categories)
    for key, name in (("user_id", "Mem0-user"), ("agent_id", "Mem0-agent")):
        if record.get(key):
            fields[name] = str(record[key])
    anchor = str(record.get("id") or f"memory-{index + 1}")
    return Note(anchor=anchor, title=words.strip(), body=words.strip(), topic="mem0",
                line=line_of(text, words[:40]), scope="global", fields=fields)


def read(path: Path | None, context: ReadContext) -> Iterator[SourceFile]:
    if path is None:
        raise malformed("mem0", 1, "give the JSON file mem0 exported")
    shown, text, data = load_json(path, context)
    notes = [_note(record, n, text, shown) for n, record in enumerate(_records(data, shown))]
    yield SourceFile(shown, text, None, notes)
