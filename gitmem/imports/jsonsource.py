"""What the JSON sources (mem0, Letta) share: reading a JSON file with a one-line error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gitmem.notes.model import ReadContext, display_path, malformed, read_source_text


def load_json(path: Path, context: ReadContext) -> tuple[str, str, Any]:
    """(shown path, text, parsed value) of a JSON file."""
    if not path.is_file():
        raise malformed(str(path), 1, "not a JSON file")
    shown = display_path(path, path.parent, context.home)
    text = read_source_text(path, shown)
    try:
        return shown, text, json.loads(text)
    except json.JSONDecodeError as exc:
        raise malformed(shown, exc.lineno, f"not JSON ({exc.msg})") from None


def line_of(text: str, needle: str) -> int:
    """The line a value first appears on (1 when it cannot be found)."""
    at = text.find(needle)
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def day(value: Any) -> str | None:
    """YYYY-MM-DD of an ISO timestamp, or None."""
    text = str(value or "")
    return text[:10] if len(text) >= 10 and text[4] == "-" and text[7] == "-" else None
