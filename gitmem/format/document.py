"""The managed copy of a project document: a generated front matter block of JSON-literal values
(which YAML reads as the same values), then the document's text exactly as given (pure)."""

from __future__ import annotations

import json
import re
from typing import Any

FRONT_MATTER_SCAN_LINES = 64
DOCUMENT_COPY_RE = re.compile(
    r"^(?:global|workspaces/[a-z0-9][a-z0-9-]{0,63})/documents/(?P<status>active|archived)/[^/]+\.md$"
)


def render_front_matter(values: dict[str, Any]) -> str:
    """`---`, one `key: <JSON>` line per value in the given order, `---`."""
    lines = ["---", *(f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in values.items()), "---"]
    return "\n".join(lines) + "\n"


def split_copy(text: str) -> tuple[dict[str, Any], str, int]:
    """(front matter values, body, line number where the body starts) of a managed copy; a copy
    without a readable front matter is all body."""
    if not text.startswith("---"):
        return {}, text, 1
    lines = text.split("\n")
    for number in range(1, min(len(lines), FRONT_MATTER_SCAN_LINES)):
        if lines[number].rstrip("\r") == "---":
            values: dict[str, Any] = {}
            for line in lines[1:number]:
                key, sep, raw = line.partition(":")
                if sep:
                    try:
                        values[key.strip()] = json.loads(raw.strip())
                    except ValueError:
                        values[key.strip()] = raw.strip()
            return values, "\n".join(lines[number + 1:]), number + 2
    return {}, text, 1
