"""A call's outcome as an MCP tool result: text for the agent, structured content for clients
that read it, `isError` with the one-line message when it failed."""

from __future__ import annotations

import json

from mcp_types import CallToolResult, ContentBlock, TextContent

from gitmem.mcp.session import Outcome, to_text
from gitmem.secrets.mask import hide_secrets, masked_data


def reply(outcome: Outcome) -> CallToolResult:
    """The result, with every likely secret in its text and its data masked. Text that is the
    data as JSON is written from the masked data: masking the JSON text would miss a secret
    whose marks JSON escapes (`password = \\"...\\"`)."""
    if outcome.error is not None:
        error: list[ContentBlock] = [TextContent(type="text", text=hide_secrets(outcome.shown()))]
        return CallToolResult(content=error, is_error=True)
    data = masked_data(json.loads(to_text(outcome.data)))  # dates and paths as JSON prints them
    text = outcome.shown(to_text(data)) if outcome.as_json else outcome.shown()
    content: list[ContentBlock] = [TextContent(type="text", text=hide_secrets(text))]
    structured = data if isinstance(data, dict) else {"results": data}
    return CallToolResult(content=content, structured_content=structured)
