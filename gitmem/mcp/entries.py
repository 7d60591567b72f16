"""MCP tools over entries: search, show, remember, forget, verify, decision, codebase, batch.

Each tool calls the library function its CLI verb calls (gitmem/verbs/; the write verbs of
gitmem/verbs/routed.py pick the mounted space) and renders what it returns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp_types import CallToolResult
from pydantic import Field

from gitmem.mcp import rules
from gitmem.mcp.reply import reply

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from gitmem.mcp.session import Session
    from gitmem.store.store import Store
    from gitmem.verbs.routed import Routed

Layer = Literal["semantic", "episodic", "procedural", "learnings", "decisions", "codebase", "history"]
Importance = Literal["critical", "high", "normal", "low"]
Scope = Literal["global", "workspace"]
EntryId = Annotated[str, Field(description=rules.ENTRY_ID)]
Space = Annotated[str | None, Field(description=rules.SPACE)]
AllowSecret = Annotated[bool, Field(description=rules.ALLOW_SECRET)]


def register(server: MCPServer, session: Session) -> None:
    """Add the entry tools to `server`, answering from `session`."""

    @server.tool(name="search", description=(
        "Ranked full-text search over memory (this store and its active spaces) with path:line "
        "citations. Call it before writing anything, and whenever the context card does not "
        "answer a question about past work. An empty result list means nothing matched."))
    async def search(
        query: Annotated[str, Field(description="Words to look for (phrase in quotes, OR, NOT).")],
        layer: Annotated[str | None, Field(description=(
            "Only this layer: semantic, episodic, procedural, learnings, decisions, codebase, "
            "history, or documents for project documents."))] = None,
        scope: Annotated[Scope | None, Field(description=(
            "global only, or the current workspace plus global (default: every scope)."))] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="Most results to return.")] = 10,
        include_all: Annotated[bool, Field(description=(
            "Include forgotten, superseded and expired entries."))] = False,
        space: Space = None,
        explain: Annotated[bool, Field(description=(
            "Each hit says why it ranked where it did: terms and fields, coverage, importance, "
            "freshness, date match, neighbour lift."))] = False,
        rerank: Annotated[bool | None, Field(description=(
            "Let the model ladder reorder the top 30 hits (default: the store's search.rerank "
            "setting, off). A failing or slow model keeps the lexical order, with a note."))] = None,
    ) -> CallToolResult:
        from gitmem.consolidate.rerank import search as do_search

        def work(store: Store) -> list[dict[str, Any]]:
            return do_search(store, query, rerank_hits=rerank, scope=scope, layer=layer,
                             limit=limit, include_all=include_all, space=space, explain=explain)

        return reply(await session.call(work))

    @server.tool(name="show", description=(
        "One entry in full (body, fields, location, freshness, conflict versions) by its id."))
    async def show(entry_id: EntryId, space: Space = None) -> CallToolResult:
        from gitmem.verbs.reads import show as read_show

        return reply(await session.call(lambda store: read_show(store, entry_id, space=space)))

    @server.tool(name="remember", description=(
        "Record a durable fact as an entry in a layer: semantic (facts about the world and the "
        "user), procedural (how to do things), learnings (lessons from mistakes), episodic "
        "(what happened). Identical live text returns the existing id and writes nothing. To "
        "replace an outdated entry pass its id as `supersedes`." + rules.WRITE_RULES))
    async def remember(
        text: Annotated[str, Field(description="The fact, in a few self-contained sentences.")],
        layer: Annotated[Layer, Field(description="Which layer the entry belongs to.")],
        topic: Annotated[str | None, Field(description="Topic (file) within the layer; default 'general'.")] = None,
        title: Annotated[str | None, Field(description="Heading; default: the first line of text.")] = None,
        importance: Importance | None = None,
        volatility: Annotated[Literal["stable", "normal", "volatile"] | None, Field(description=(
            "How fast the fact decays: 365, 90 or 3 days (default: guessed from the wording)."))] = None,
        until: Annotated[str | None, Field(description="Valid-until date YYYY-MM-DD.")] = None,
        source: Annotated[str | None, Field(description="Where the fact comes from, e.g. session:4f2a.")] = None,
        supersedes: Annotated[str | None, Field(description="Id of the entry this one replaces.")] = None,
        paths: Annotated[str | None, Field(description=(
            "Code the entry describes: repository paths, comma-separated."))] = None,
        scope: Annotated[Scope, Field(description=rules.SCOPE)] = "global",
        space: Space = None,
        allow_secret: AllowSecret = False,
    ) -> CallToolResult:
        from gitmem.verbs import routed

        return reply(await session.call(lambda home: _where(routed.remember(
            home, text, layer, space=space, paths=paths, topic=topic, title=title,
            importance=importance, volatility=volatility, until=until, source=source,
            supersedes=supersedes, scope=scope, allow_secret=allow_secret)), verb="remember"))

    @server.tool(name="forget", description=(
        "Forget an entry that is wrong or no longer true (soft: it leaves search and the context "
        "card, stays in the file and in git; re-adding the same text is refused). `undo` "
        "releases it." + rules.WRITE_RULES))
    async def forget(entry_id: EntryId, undo: bool = False, space: Space = None) -> CallToolResult:
        from gitmem.verbs import routed

        return reply(await session.call(
            lambda home: _where(routed.forget(home, entry_id, undo=undo, space=space)), verb="forget"))

    @server.tool(name="verify", description=(
        "Re-confirm an entry you checked is still true today: its freshness counts from now and "
        "a suspect mark clears. Prefer this to recording the same fact again." + rules.WRITE_RULES))
    async def verify(entry_id: EntryId, space: Space = None) -> CallToolResult:
        from gitmem.verbs import routed

        return reply(await session.call(
            lambda home: _where(routed.verify(home, entry_id, space=space)), verb="verify"))

    @server.tool(name="decision", description=(
        "Record a settled choice (the statement) with its rationale, the situation that forced "
        "it, the alternatives rejected and the consequences. Only for choices that a later "
        "session must not reopen." + rules.WRITE_RULES))
    async def decision(
        statement: Annotated[str, Field(description="The decision, one line.")],
        rationale: Annotated[str, Field(description="Why this option won.")],
        context: Annotated[str | None, Field(description="The situation that forced the choice.")] = None,
        alternatives: Annotated[list[str] | None, Field(description="Options considered and rejected.")] = None,
        consequences: Annotated[str | None, Field(description="What follows from the decision.")] = None,
        topic: Annotated[str | None, Field(description="Topic within the decisions layer.")] = None,
        importance: Importance | None = None,
        scope: Annotated[Scope, Field(description=rules.SCOPE)] = "global",
        space: Space = None,
        allow_secret: AllowSecret = False,
    ) -> CallToolResult:
        from gitmem.verbs import routed

        return reply(await session.call(lambda home: _where(routed.decision(
            home, statement, rationale=rationale, space=space, context=context,
            alternatives=list(alternatives or []), consequences=consequences, topic=topic,
            importance=importance, scope=scope, allow_secret=allow_secret)), verb="decision"))

    @server.tool(name="codebase", description=(
        "Record what a path or subsystem of the current workspace does and how it fits "
        "(re-recording a topic updates its entry). Not a copy of the code: what a newcomer "
        "could not see at a glance." + rules.WRITE_RULES))
    async def codebase(
        topic: Annotated[str, Field(description="The path or subsystem, e.g. src/auth.")],
        text: Annotated[str, Field(description="What it does and how it fits.")],
        importance: Importance | None = None,
        space: Space = None,
        allow_secret: AllowSecret = False,
    ) -> CallToolResult:
        from gitmem.verbs import routed

        return reply(await session.call(lambda home: _where(routed.codebase(
            home, topic, text, space=space, importance=importance, allow_secret=allow_secret)),
            verb="codebase"))

    @server.tool(name="batch", description=(
        "Several writes as one commit: a list of items, each an object with `op` (remember, "
        "supersede, decision, codebase, forget, verify, relate) and that op's arguments, named as "
        "in the single tools (`id` for an entry id; supersede: `id` and the new `text`; relate: "
        "`id`, `type`, `other`). One bad item refuses the whole batch and names its position; "
        "nothing is written. Each item passes the secret check on its own (`allow_secret` per "
        "item)." + rules.WRITE_RULES))
    async def batch(
        items: Annotated[list[dict[str, Any]], Field(min_length=1, description=(
            'The writes in order, e.g. [{"op": "remember", "text": "...", "layer": "semantic"}, '
            '{"op": "forget", "id": "global-sem-0007"}].'))],
    ) -> CallToolResult:
        from gitmem.verbs.batch import parse_list, run_batch

        return reply(await session.call(lambda home: run_batch(home, parse_list(items)).as_json(),
                                        verb="batch"))


def _where(done: Routed) -> dict[str, Any]:
    """The write's data; where it went, when spaces made that a question."""
    return {**done.data, "where": done.note} if done.note else done.data
