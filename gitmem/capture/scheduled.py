"""The session folders the warm server captures on its schedule (state/capture-folders.json, this
machine only): agents without a capture hook of their own (Codex CLI, Gemini CLI, OpenCode,
Copilot CLI) have their session folder listed here by `gitmem integrate`, and `gitmem serve` runs
`gitmem capture FOLDER` on each every `--capture-every` minutes.

    {"/home/dana/.gemini/tmp": {"agent": "gemini"}}

Each transcript's format is detected, as for any folder capture.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gitmem.fsio import load_json_object

SCHEDULE_FILE = "state/capture-folders.json"


@dataclass(frozen=True)
class ScheduledFolder:
    path: Path
    agent: str


def scheduled_folders(root: Path) -> list[ScheduledFolder]:
    """The folders listed, in the order they were added (a malformed entry is ignored)."""
    found = []
    for key, value in load_json_object(root / SCHEDULE_FILE).items():
        if isinstance(value, dict):
            found.append(ScheduledFolder(Path(key), str(value.get("agent") or "")))
    return found
