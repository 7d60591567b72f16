"""MCP tools over the review queue (review_list, review_accept, review_reject): the facts
consolidation left for a person. Each calls the library function `gitmem review` calls
(gitmem/consolidate/review.py); the two that write are refused for a subagent before anything runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from mcp_types import CallToolResult
from pydantic import Field

from gitmem.mcp.reply import reply

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from gitmem.mcp.session import Session
    from gitmem.store.store import Store

Item = Annotated[str, Field(description="The review item's id as review_list prints it (r + 9 hex "
                                        "digits), or a unique prefix of it.")]
FOR_THE_PERSON = (" Only when the user decided it: the queue is what they wanted to see before it "
                  "is written. Subagents must not call it (it refuses under GITMEM_SUBAGENT=1).")


def register(server: MCPServer, session: Session) -> None:
    """Add the review queue's tools to `server`, answering from `session`."""

    @server.tool(name="review_list", description=(
        "The review queue: facts consolidation proposed but was unsure of (setting "
        "consolidate.review), each with its id, layer, scope, topic, text, the model's confidence "
        "and the digest it came from. Show them to the user to accept or reject."))
    async def review_list() -> CallToolResult:
        from gitmem.consolidate.review import review_list as list_queue

        return reply(await session.call(list_queue))

    @server.tool(name="review_accept", description=(
        "Write one review item as an entry (its digest as source), as proposed or with the "
        "corrected `text`, and take it off the queue, in one commit." + FOR_THE_PERSON))
    async def review_accept(
        item: Item,
        text: Annotated[str | None, Field(description=(
            "The text to write instead of the proposed one (the user's correction)."))] = None,
    ) -> CallToolResult:
        from gitmem.consolidate.review import review_accept as accept

        def work(store: Store) -> dict[str, Any]:
            return accept(store, item, text=text)

        return reply(await session.call(work, verb="review accept"))

    @server.tool(name="review_reject", description=(
        "Take one review item off the queue and remember it, so consolidation drops the same "
        "fact when a model proposes it again." + FOR_THE_PERSON))
    async def review_reject(
        item: Item,
        reason: Annotated[str, Field(description="Why, in a few words (kept with the rejection).")] = "",
    ) -> CallToolResult:
        from gitmem.consolidate.review import review_reject as reject

        def work(store: Store) -> dict[str, Any]:
            return reject(store, item, reason=reason)

        return reply(await session.call(work, verb="review reject"))
