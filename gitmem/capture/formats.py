"""The transcript formats written as JSON lines, one line at a time: Claude Code session JSONL,
Codex CLI rollout JSONL, Gemini CLI chat JSONL, GitHub Copilot CLI's session events and gitmem's
generic JSONL (docs/capture.md). Each
parser turns a decoded line into events and fills in the session's metadata as it appears.
Aider's Markdown history and OpenCode's sessions have readers of their own (aider.py,
opencode.py, opencode_db.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

FORMATS = ("claude-code", "codex", "gemini", "opencode", "copilot", "aider", "jsonl")


@dataclass
class Event:
    """One thing that happened in a session, before any filtering.

    role: user | assistant | tool (a tool call; its result is never kept).
    """

    role: str
    text: str = ""
    ts: str = ""
    tool: str = ""
    args: Any = None
    injected: bool = False  # the source marks it as injected context (meta, system, compaction)


@dataclass
class SessionMeta:
    """What a transcript says about its session (filled in as lines are read)."""

    session: str = ""
    cwd: str = ""
    branch: str = ""
    repository_url: str = ""
    delegated: bool = False  # a subagent's session: never captured
    dropped: dict[str, int] = field(default_factory=dict)  # thinking, tool results, ...
    seen: set[str] = field(default_factory=set)  # ids of messages a format may write twice

    def drop(self, what: str, amount: int = 1) -> None:
        self.dropped[what] = self.dropped.get(what, 0) + amount

    def reset(self) -> None:
        """Forget what reading the head counted: its events are counted when they are read."""
        self.dropped.clear()
        self.seen.clear()


LineParser = Callable[[dict[str, Any], SessionMeta], list[Event]]


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text_of(content: Any) -> str:
    """Text of a message content that is a string, a block with "text", or a list of those."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, list):
        parts = [b if isinstance(b, str) else b.get("text", "") for b in content
                 if isinstance(b, str) or (isinstance(b, dict) and isinstance(b.get("text"), str))]
        return "\n".join(p for p in parts if p)
    return ""


# -- Claude Code --------------------------------------------------------------------------------
def claude_line(obj: dict[str, Any], meta: SessionMeta) -> list[Event]:
    """A Claude Code line: `type` user/assistant with `message.content` blocks."""
    kind = obj.get("type")
    if kind not in ("user", "assistant"):
        return []
    meta.session = meta.session or str(obj.get("sessionId") or "")
    meta.cwd = meta.cwd or str(obj.get("cwd") or "")
    meta.branch = str(obj.get("gitBranch") or meta.branch)
    if obj.get("isSidechain") is True:
        meta.drop("sidechain")
        return []
    ts = str(obj.get("timestamp") or "")
    injected = obj.get("isMeta") is True or obj.get("isCompactSummary") is True
    message = _dict(obj.get("message"))
    content = message.get("content")
    if isinstance(content, str):
        return [Event(kind, content, ts, injected=injected)]
    events: list[Event] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and isinstance(block.get("text"), str):
            events.append(Event(kind, block["text"], ts, injected=injected))
        elif btype == "tool_use":
            events.append(Event("tool", ts=ts, tool=str(block.get("name") or ""), args=block.get("input")))
        elif btype in ("thinking", "redacted_thinking"):
            meta.drop("thinking")
        elif btype == "tool_result":
            meta.drop("tool results")
    return events


# -- Codex CLI ----------------------------------------------------------------------------------
_CODEX_ITEMS = ("message", "function_call", "function_call_output", "custom_tool_call",
                "custom_tool_call_output", "local_shell_call", "reasoning", "web_search_call")


def _codex_delegated(source: Any) -> bool:
    if isinstance(source, dict):
        return any("subagent" in str(k).lower() for k in source)
    return isinstance(source, str) and "subagent" in source.lower()


def _codex_meta(payload: dict[str, Any], meta: SessionMeta) -> None:
    meta.session = meta.session or str(payload.get("id") or "")
    meta.cwd = str(payload.get("cwd") or meta.cwd)
    git = _dict(payload.get("git"))
    meta.branch = str(git.get("branch") or meta.branch)
    meta.repository_url = str(git.get("repository_url") or meta.repository_url)
    if _codex_delegated(payload.get("source")) or payload.get("delegated") is True:
        meta.delegated = True


def _codex_args(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _codex_item(item: dict[str, Any], ts: str, meta: SessionMeta) -> list[Event]:
    kind = item.get("type")
    if kind == "message":
        role = str(item.get("role") or "")
        text = _text_of(item.get("content"))
        if role in ("user", "assistant"):
            return [Event(role, text, ts)]
        meta.drop("injected")  # developer / system messages: instructions, not intent
        return []
    if kind == "function_call":
        return [Event("tool", ts=ts, tool=str(item.get("name") or ""), args=_codex_args(item.get("arguments")))]
    if kind == "custom_tool_call":
        return [Event("tool", ts=ts, tool=str(item.get("name") or ""), args=item.get("input"))]
    if kind == "local_shell_call":
        action = _dict(item.get("action"))
        return [Event("tool", ts=ts, tool="shell", args={"command": action.get("command")})]
    if kind == "reasoning":
        meta.drop("thinking")
    elif kind in ("function_call_output", "custom_tool_call_output"):
        meta.drop("tool results")
    return []


def codex_line(obj: dict[str, Any], meta: SessionMeta) -> list[Event]:
    """A Codex rollout line: {timestamp, type, payload}, or an older bare item / meta line."""
    ts = str(obj.get("timestamp") or "")
    kind = obj.get("type")
    payload = obj.get("payload") if isinstance(obj.get("payload"), dict) else None
    if payload is None:  # the older layout: items at the top level, metadata on the first line
        if kind in _CODEX_ITEMS:
            return _codex_item(obj, ts, meta)
        if "id" in obj and ("instructions" in obj or "git" in obj):
            _codex_meta(obj, meta)
        return []
    if kind == "session_meta":
        _codex_meta(payload, meta)
    elif kind == "turn_context":
        meta.cwd = str(payload.get("cwd") or meta.cwd)
    elif kind == "response_item":
        return _codex_item(payload, ts, meta)
    return []  # event_msg repeats response items; compacted holds an earlier summary


# -- Gemini CLI ---------------------------------------------------------------------------------
def _gemini_meta(record: dict[str, Any], meta: SessionMeta) -> None:
    meta.session = meta.session or str(record.get("sessionId") or "")
    if record.get("kind") == "subagent":
        meta.delegated = True
    directories = record.get("directories")
    if isinstance(directories, list) and directories and isinstance(directories[0], str):
        meta.cwd = meta.cwd or directories[0]


def gemini_message(obj: dict[str, Any], meta: SessionMeta) -> list[Event]:
    """One Gemini CLI message record: `type` user/gemini (info, error, warning are the CLI's own),
    `content` as text or parts, a gemini message's `toolCalls` and `thoughts`. A message written
    again (its tokens or tool calls updated) adds only what is new in it."""
    kind, ts, ident = obj.get("type"), str(obj.get("timestamp") or ""), str(obj.get("id") or "")
    if kind not in ("user", "gemini"):
        meta.drop("injected")
        return []
    events: list[Event] = []
    text = _text_of(obj.get("content"))
    if text and f"text:{ident}" not in meta.seen:
        meta.seen.add(f"text:{ident}")
        events.append(Event("user" if kind == "user" else "assistant", text, ts))
    for call in obj.get("toolCalls") or []:
        if not isinstance(call, dict) or f"tool:{call.get('id')}" in meta.seen:
            continue
        meta.seen.add(f"tool:{call.get('id')}")
        events.append(Event("tool", ts=str(call.get("timestamp") or ts), tool=str(call.get("name") or ""),
                            args=call.get("args")))
        if call.get("result") is not None:
            meta.drop("tool results")
    if obj.get("thoughts") and f"thoughts:{ident}" not in meta.seen:
        meta.seen.add(f"thoughts:{ident}")
        meta.drop("thinking")
    return events


def gemini_line(obj: dict[str, Any], meta: SessionMeta) -> list[Event]:
    """A Gemini CLI chat JSONL line: the session's metadata, a message record, a `$set` of
    metadata (a whole `messages` rewrite in it repeats what was read) or a `$rewindTo`."""
    if isinstance(obj.get("$set"), dict):
        _gemini_meta(obj["$set"], meta)
        return []
    if "$rewindTo" in obj:
        return []
    if "sessionId" in obj and "projectHash" in obj:
        _gemini_meta(obj, meta)
        return []
    return gemini_message(obj, meta)


# -- GitHub Copilot CLI -------------------------------------------------------------------------
# ~/.copilot/session-state/<session id>/events.jsonl: one session event a line, `{type, data, id,
# timestamp, parentId}`, the event types and their data as the Copilot SDK's session-events schema
# defines them (github/copilot-sdk). An `ephemeral` event (a streaming delta) is never kept.
_COPILOT_KINDS = ("session", "user", "assistant", "tool", "system", "subagent", "hook", "abort",
                  "permission", "skill", "command")
_OWNER_NAME = re.compile(r"^[\w.-]+/[\w.-]+$")


def _copilot_context(data: dict[str, Any], meta: SessionMeta) -> None:
    """session.start / session.resume: the session's id and working folder, its git context."""
    meta.session = meta.session or str(data.get("sessionId") or "")
    context = _dict(data.get("context"))
    meta.cwd = str(context.get("cwd") or meta.cwd)
    meta.branch = str(context.get("branch") or meta.branch)
    repository = str(context.get("repository") or "")
    if _OWNER_NAME.match(repository):
        repository = f"https://github.com/{repository}"  # Copilot names a GitHub repository owner/name
    meta.repository_url = repository or meta.repository_url


def _copilot_user(data: dict[str, Any], ts: str) -> list[Event]:
    """What the person typed (`content`; `transformedContent` adds Copilot's own context to it),
    and the files attached to it."""
    events = [Event("user", str(data.get("content") or ""), ts)]
    for attachment in data.get("attachments") or []:
        path = _dict(attachment).get("path") or _dict(attachment).get("filePath")
        if isinstance(path, str):
            events.append(Event("tool", ts=ts, tool="file", args={"path": path}))
    return events


def _copilot_assistant(data: dict[str, Any], ts: str, meta: SessionMeta) -> list[Event]:
    """The reply's text and the tools it asked for; a subagent's reply (it names the tool call
    that started it) is its caller's to report."""
    if data.get("parentToolCallId"):
        meta.drop("sidechain")
        return []
    if data.get("reasoningText") or data.get("reasoningOpaque"):
        meta.drop("thinking")
    events = [Event("assistant", str(data.get("content") or ""), ts)] if data.get("content") else []
    for request in data.get("toolRequests") or []:
        if isinstance(request, dict):
            events.append(Event("tool", ts=ts, tool=str(request.get("name") or ""),
                                args=_codex_args(request.get("arguments"))))
    return events


def copilot_line(obj: dict[str, Any], meta: SessionMeta) -> list[Event]:
    """A Copilot CLI session event (the section comment above)."""
    kind, ts, data = str(obj.get("type") or ""), str(obj.get("timestamp") or ""), _dict(obj.get("data"))
    if obj.get("ephemeral") is True:
        return []
    if kind in ("session.start", "session.resume"):
        _copilot_context(data, meta)
    elif kind == "user.message":
        return _copilot_user(data, ts)
    elif kind == "assistant.message":
        return _copilot_assistant(data, ts, meta)
    elif kind == "tool.user_requested":  # a tool the person ran by hand
        return [Event("tool", ts=ts, tool=str(data.get("toolName") or ""), args=data.get("arguments"))]
    elif kind == "assistant.reasoning":
        meta.drop("thinking")
    elif kind == "tool.execution_complete":
        meta.drop("tool results")
    elif kind in ("system.message", "session.compaction_complete"):
        meta.drop("injected")
    return []


def _is_copilot(obj: dict[str, Any]) -> bool:
    kind = obj.get("type")
    return (isinstance(kind, str) and "." in kind and isinstance(obj.get("data"), dict)
            and kind.split(".", 1)[0] in _COPILOT_KINDS)


# -- generic JSONL ------------------------------------------------------------------------------
def generic_line(obj: dict[str, Any], meta: SessionMeta) -> list[Event]:
    """`{"role", "content", "ts"}`; a tool call is `{"role": "tool", "tool": NAME, "args": {...}}`."""
    meta.session = meta.session or str(obj.get("session") or "")
    meta.cwd = str(obj.get("cwd") or meta.cwd)
    meta.branch = str(obj.get("branch") or meta.branch)
    if obj.get("subagent") is True or obj.get("delegated") is True:
        meta.delegated = True
    role = obj.get("role")
    ts = str(obj.get("ts") or "")
    if role in ("user", "assistant"):
        return [Event(str(role), _text_of(obj.get("content")), ts)]
    if role == "tool" and ("tool" in obj or "args" in obj):
        return [Event("tool", ts=ts, tool=str(obj.get("tool") or ""), args=obj.get("args"))]
    if role in ("tool", "tool_result"):
        meta.drop("tool results")
    elif role == "system":
        meta.drop("injected")
    return []


PARSERS: dict[str, LineParser] = {"claude-code": claude_line, "codex": codex_line, "gemini": gemini_line,
                                   "copilot": copilot_line, "jsonl": generic_line}


def detect_format(objects: list[dict[str, Any]]) -> str | None:
    """Tell the format from a transcript's first decoded lines; None when none fits."""
    for obj in objects:
        kind = obj.get("type")
        if _is_copilot(obj):
            return "copilot"
        if ("sessionId" in obj and "projectHash" in obj) or kind == "gemini" or "$rewindTo" in obj:
            return "gemini"
        if kind in ("session_meta", "response_item", "turn_context", "event_msg") and "payload" in obj:
            return "codex"
        if "id" in obj and ("instructions" in obj or "git" in obj) and "role" not in obj:
            return "codex"
        if kind in ("user", "assistant") and ("message" in obj or "sessionId" in obj):
            return "claude-code"
        if kind in ("summary", "file-history-snapshot") or "sessionId" in obj:
            return "claude-code"
        if "role" in obj and ("content" in obj or obj.get("role") == "tool"):
            return "jsonl"
    return None
