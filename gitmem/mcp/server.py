"""`gitmem mcp`: the store as an MCP server on stdio, built on the official MCP Python SDK.

Tools (gitmem/mcp/entries.py, workspace.py, hot.py, loop.py, review.py) call the same library functions as the CLI;
the context card is also the resource gitmem://context and the prompt `start-of-session`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedToolError
from mcp_types import CallToolResult, TextContent
from pydantic import ValidationError

from gitmem import __version__
from gitmem.mcp import entries, hot, loop, review, rules, workspace
from gitmem.mcp.session import Outcome, Session

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context
    from mcp_types import InputRequiredResult

    from gitmem.store.store import Store

CONTEXT_URI = "gitmem://context"


class GitmemServer(MCPServer):
    """The SDK's server, with arguments that do not fit a tool's input schema (a wrong type, a
    missing field, an unknown tool) answered like every other error: one `gitmem: error:` line."""

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise  # a crash: the SDK logs it and answers without its text
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                line = f"gitmem: error: {name}: {argument_problems(exc.__cause__)}"
            else:
                line = f"gitmem: error: {' '.join(str(exc).split())}"
            return CallToolResult(content=[TextContent(type="text", text=line)], is_error=True)


def argument_problems(error: ValidationError) -> str:
    """Each rejected argument and why, on one line (the values are the caller's: not repeated)."""
    problems = []
    for item in error.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        problems.append(f"{where}: {' '.join(str(item['msg']).split())}")
    return "; ".join(problems)


def build(session: Session) -> MCPServer:
    """The server with every tool, the context resource and the start-of-session prompt."""
    server: MCPServer = GitmemServer("gitmem", instructions=rules.INSTRUCTIONS, version=__version__,
                                  log_level="WARNING")
    entries.register(server, session)
    workspace.register(server, session)
    hot.register(server, session)
    loop.register(server, session)
    review.register(server, session)

    async def card_text() -> Outcome:
        def work(store: Store) -> str:
            return str(workspace.card(store, subagent=session.subagent).text)

        return await session.call(work, text=str)

    @server.resource(CONTEXT_URI, name="context", mime_type="text/markdown", description=(
        "The context card of the current workspace: what a session should know before it starts."))
    async def context_resource() -> str:
        outcome = await card_text()
        if outcome.error:
            raise ResourceError(outcome.error)
        return outcome.shown()

    @server.prompt(name="start-of-session", description=(
        "Begin a session with the memory of this workspace (the context card and how to use it)."))
    async def start_of_session() -> str:
        outcome = await card_text()
        return (f"{outcome.shown()}\n\n"
                "Above is what gitmem remembers for this workspace. Search memory before you "
                "write to it; writing nothing is a correct outcome.")

    return server


def serve(session: Session) -> None:
    """Answer MCP requests on stdin/stdout until the client closes the stream."""
    keep_between_calls()
    try:
        build(session).run("stdio")
    finally:
        session.close()


def keep_between_calls() -> None:
    """What the warm server keeps, this long-lived process keeps too: git's answers about the
    caller's code repository (two `git` processes per search otherwise) and parsed memory files,
    each checked on every use (docs/decisions/0015-warm-server.md), so a hand edit or a changed
    git config is seen at once. The session holds its Store itself: nothing adopts it."""
    from gitmem.store import warm

    warm.enable()
