"""What an agent's hook hands gitmem on standard input, and what gitmem hands back.

Claude Code runs a hook command with one JSON object on stdin: `session_id`, `transcript_path`,
`cwd`, `hook_event_name`, and per event `source` (SessionStart), `trigger` (PreCompact), `reason`
(SessionEnd), `agent_type` (SubagentStart), `prompt` (UserPromptSubmit). Text for the model goes
back as `{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}` on stdout.
Unknown fields are ignored and missing ones are empty, so a newer agent never breaks a hook.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmem.errors import InvalidInputError

MAX_PAYLOAD = 1 << 20  # a hook payload is a few hundred bytes; the prompt is the only long part


@dataclass(frozen=True)
class HookInput:
    event: str = ""
    session_id: str = ""
    cwd: str = ""
    transcript_path: str = ""
    source: str = ""
    prompt: str = ""
    agent_type: str = ""

    @property
    def folder(self) -> Path | None:
        """The session's working folder, when the agent gave one that exists."""
        if self.cwd and Path(self.cwd).is_dir():
            return Path(self.cwd)
        return None


def parse(text: str) -> HookInput:
    """The hook payload; an empty input is an empty payload, anything else must be a JSON object."""
    if not text.strip():
        return HookInput()
    if len(text) > MAX_PAYLOAD:
        text = text[:MAX_PAYLOAD]  # a huge prompt is cut; the JSON then fails below, said plainly
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"--hook: standard input is not the hook's JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise InvalidInputError("--hook: standard input is not a JSON object")
    return HookInput(event=_text(data, "hook_event_name"), session_id=_text(data, "session_id"),
                     cwd=_text(data, "cwd"), transcript_path=_text(data, "transcript_path"),
                     source=_text(data, "source"), prompt=_text(data, "prompt"),
                     agent_type=_text(data, "agent_type"))


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def additional_context(event: str, text: str) -> str:
    """The hook's stdout: `text` added to the model's context for `event`."""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}},
                      ensure_ascii=False)
