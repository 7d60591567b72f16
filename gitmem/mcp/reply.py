"""A call's outcome as an MCP tool result: text for the agent, structured content for clients
that read it, `isError` with the one-line message when it failed."""

from __future__ import annotations

import json

from mcp_types import CallToolResult, ContentBlock, TextContent

from gitmem.mcp.session import Outcome, to_text
from gitmem.secrets.mask import hide_secrets, masked_data


def reply(outcome: Outcome) -> CallToolResult:
    """The result, with every likely secret in its text and its data masked."""
    content: list[ContentBlock] = [TextContent(type="text", text=hide_secrets(outcome.shown()))]
    if outcome.error is not None:
        return CallToolResult(content=content, is_error=True)
    data = masked_data(json.loads(to_text(outcome.data)))  # dates and paths as JSON prints them
    structured = data if isinstance(data, dict) else {"results": data}
    return CallToolResult(content=content, structured_content=structured)
