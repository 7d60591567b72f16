"""A call's outcome as an MCP tool result: text for the agent, structured content for clients
that read it, `isError` with the one-line message when it failed."""

from __future__ import annotations

import json

from mcp_types import CallToolResult, ContentBlock, TextContent

from gitmem.mcp.session import Outcome, to_text


def reply(outcome: Outcome) -> CallToolResult:
    content: list[ContentBlock] = [TextContent(type="text", text=outcome.shown())]
    if outcome.error is not None:
        return CallToolResult(content=content, is_error=True)
    data = json.loads(to_text(outcome.data))  # dates and paths as the JSON output prints them
    structured = data if isinstance(data, dict) else {"results": data}
    return CallToolResult(content=content, structured_content=structured)
