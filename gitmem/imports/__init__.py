"""Memory other tools keep, read into gitmem (`gitmem import`), and gitmem's own export.

One module per source format (each yields `SourceFile`s, see model.py), one engine that writes
what they read (engine.py, with the update and provenance rules), and the export (export.py).
"""

from __future__ import annotations

# source name -> the module that reads it (each has `read(path, context) -> Iterator[SourceFile]`).
SOURCES: dict[str, str] = {
    "markdown": "gitmem.imports.markdown",
    "claude-code": "gitmem.imports.claude_code",
    "codex": "gitmem.imports.codex",
    "cursor": "gitmem.imports.cursor",
    "copilot": "gitmem.imports.copilot",
    "gemini": "gitmem.imports.gemini",
    "hermes": "gitmem.imports.hermes",
    "basic-memory": "gitmem.imports.basic_memory",
    "mem0": "gitmem.imports.mem0",
    "letta": "gitmem.imports.letta",
}
