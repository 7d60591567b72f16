"""MCP tools over runtime memory (USER.md, MEMORY.md) and project documents. Each calls the
library function its CLI verb calls (gitmem/runtime/verbs.py, gitmem/documents/verbs.py, and
gitmem/consolidate/maintain.py for the maintenance pass)."""

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

Target = Annotated[Literal["user", "memory"], Field(description=(
    "user: who the user is (USER.md, global only); memory: project conventions and environment "
    "(MEMORY.md)."))]
Scope = Annotated[Literal["global", "workspace"], Field(description=(
    "The global MEMORY.md or the current workspace's (target memory)."))]
Old = Annotated[str, Field(description="The item: its id, its whole text, or a unique part of it.")]
AllowSecret = Annotated[bool, Field(description=rules.ALLOW_SECRET)]


def register(server: MCPServer, session: Session) -> None:
    """Add the runtime and document tools to `server`, answering from `session`."""

    @server.tool(name="runtime_add", description=(
        "Add one item to the hot memory shown in every prompt: a short line the agent must "
        "always have (a user preference, a project convention). Keep items short; a full file "
        "moves its least important items out to long-term memory and says where." + rules.WRITE_RULES))
    async def runtime_add(
        text: Annotated[str, Field(description="The item, one short line or two.")],
        target: Target = "memory",
        importance: Annotated[Literal["critical", "normal", "low"], Field(description=(
            "Retention when the file is full: critical items never leave."))] = "normal",
        branches: Annotated[list[str] | None, Field(description=(
            "Show the item only on these git branches of the workspace."))] = None,
        scope: Scope = "global",
        allow_secret: AllowSecret = False,
    ) -> CallToolResult:
        from gitmem.runtime.verbs import add

        def work(store: Store) -> dict[str, Any]:
            return add(store, text, target=target, importance=importance,
                       branches=tuple(branches or ()), scope=scope,
                       allow_secret=allow_secret).as_json()

        return reply(await session.call(work, verb="runtime add"))

    @server.tool(name="runtime_replace", description=(
        "Replace one hot-memory item by new text (the item found by id, whole text or a unique "
        "part; nothing changes when none or several match)." + rules.WRITE_RULES))
    async def runtime_replace(old: Old, new: Annotated[str, Field(description="The new text.")],
                              target: Target = "memory", scope: Scope = "global",
                              make_room: Annotated[bool, Field(description=(
                                  "When the new text would overflow the file, move its least "
                                  "important items into the layers instead of refusing."))] = False,
                              allow_secret: AllowSecret = False) -> CallToolResult:
        from gitmem.runtime.verbs import replace_item

        def work(store: Store) -> dict[str, Any]:
            return replace_item(store, old, new, target=target, scope=scope,
                                allow_secret=allow_secret, make_room=make_room).as_json()

        return reply(await session.call(work, verb="runtime replace"))

    @server.tool(name="runtime_archive", description=(
        "Move one hot-memory item out of USER.md / MEMORY.md now, keeping it: a memory item into "
        "its scope's layers, a user item to USER.archive.md." + rules.WRITE_RULES))
    async def runtime_archive(old: Old, target: Target = "memory",
                              scope: Scope = "global") -> CallToolResult:
        from gitmem.runtime.verbs import archive_item

        return reply(await session.call(
            lambda store: archive_item(store, old, target=target, scope=scope).as_json(),
            verb="runtime archive"))

    @server.tool(name="runtime_maintain", description=(
        "Propose merges of near-duplicate USER.md items and a compaction of a MEMORY.md near its "
        "budget, through the model ladder. Nothing is applied: with queue false (the default) the "
        "proposals are only returned, to show the user; with queue true they go to the review queue "
        "(review_list), where the user accepts or rejects each. Subagents must not queue (it refuses "
        "under GITMEM_SUBAGENT=1)."))
    async def runtime_maintain(
        queue: Annotated[bool, Field(description=(
            "Put the proposals in the review queue (a write) instead of only returning them."))] = False,
        scope: Annotated[Literal["global", "workspace"] | None, Field(description=(
            "Only this scope (default: every scope with runtime memory)."))] = None,
    ) -> CallToolResult:
        from gitmem.consolidate.maintain import maintain

        return reply(await session.call(
            lambda store: maintain(store, scope=scope, queue=queue).as_json(),
            verb="runtime maintain" if queue else None))

    @server.tool(name="runtime_remove", description=(
        "Remove one hot-memory item that is wrong or no longer needed." + rules.WRITE_RULES))
    async def runtime_remove(old: Old, target: Target = "memory",
                             scope: Scope = "global") -> CallToolResult:
        from gitmem.runtime.verbs import remove_item

        return reply(await session.call(
            lambda store: remove_item(store, old, target=target, scope=scope).as_json(),
            verb="runtime remove"))

    @server.tool(name="runtime_show", description=(
        "The hot-memory items with their ids and metadata, and how full each file is."))
    async def runtime_show(
        target: Annotated[Literal["user", "memory"] | None, Field(description=(
            "Only this file (default both)."))] = None,
        scope: Annotated[Literal["global", "workspace"] | None, Field(description=(
            "Only this scope (default: global and the current workspace)."))] = None,
    ) -> CallToolResult:
        from gitmem.runtime.reads import show

        return reply(await session.call(lambda store: show(store, target=target, scope=scope)))

    @server.tool(name="doc_add", description=(
        "Keep a project document (a design, a runbook, a review) whole and searchable, with a "
        "one-line description shown in the context card. For long texts that are not single "
        "facts; facts go to remember." + rules.WRITE_RULES))
    async def doc_add(
        text: Annotated[str, Field(description="The document, Markdown.")],
        title: Annotated[str, Field(description="Title of the document.")],
        description: Annotated[str, Field(description="One line saying what it is for.")] = "",
        source_paths: Annotated[list[str] | None, Field(description=(
            "Files of the workspace repository the document describes."))] = None,
        session_ref: Annotated[str, Field(description="The session that wrote it.")] = "",
        scope: Annotated[Literal["global", "workspace"] | None, Field(description=(
            "Where it lives (default: the current workspace if any, else global)."))] = None,
        allow_secret: AllowSecret = False,
    ) -> CallToolResult:
        from gitmem.documents.verbs import add

        def work(store: Store) -> dict[str, Any]:
            return add(store, text, title=title, description=description,
                       source_paths=tuple(source_paths or ()), scope=scope, session=session_ref,
                       allow_secret=allow_secret).as_json()

        return reply(await session.call(work, verb="doc add"))

    @server.tool(name="doc_show", description="A document (active or archived) with its metadata, by id.")
    async def doc_show(doc_id: Annotated[str, Field(description=rules.DOC_ID)]) -> CallToolResult:
        from gitmem.documents.verbs import show

        return reply(await session.call(lambda store: show(store, doc_id)))

    @server.tool(name="doc_search", description=(
        "Search project documents (active ones; `include_archived` for all), ranked, with "
        "citations; doc_show reads one whole."))
    async def doc_search(
        query: Annotated[str, Field(description="Words to look for.")],
        limit: Annotated[int, Field(ge=1, le=200, description="Most results to return.")] = 10,
        include_archived: bool = False,
    ) -> CallToolResult:
        from gitmem.verbs.search import DOCUMENTS
        from gitmem.verbs.search import search as do_search

        def work(store: Store) -> list[dict[str, Any]]:
            return do_search(store, query, layer=DOCUMENTS, limit=limit, include_all=include_archived)

        return reply(await session.call(work))
