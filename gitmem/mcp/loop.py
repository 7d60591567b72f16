"""MCP tools that close the memory loop without a shell: workspaces and associate (which project
a session is in), consolidate and refresh (digests into entries, stale entries re-judged), resolve
(settle what a sync left in conflict), relate / related (typed links), why and revert (where an
entry comes from, and its earlier text back), list (a layer's entries) and check (the files
against the format rules). Each calls the library function its CLI verb calls; the ones that write are refused
for a subagent before anything runs."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp_types import CallToolResult
from pydantic import Field

from gitmem.errors import InvalidInputError
from gitmem.mcp import rules
from gitmem.mcp.reply import reply

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from gitmem.mcp.session import Session
    from gitmem.store.store import Store

EntryId = Annotated[str, Field(description=rules.ENTRY_ID)]
Relation = Literal["causal", "temporal", "semantic", "entity"]
NOT_FOR_SUBAGENTS = " Subagents must not call it."


def register(server: MCPServer, session: Session) -> None:
    """Add the loop's tools to `server`, answering from `session`."""
    _workspace_tools(server, session)
    _model_tools(server, session)
    _link_tools(server, session)
    _history_tools(server, session)


def _workspace_tools(server: MCPServer, session: Session) -> None:
    @server.tool(name="workspaces", description=(
        "The workspaces of the store: registered keys, titles, and the folders this machine "
        "associates with each. A session's workspace is the one its folder is associated with."))
    async def workspaces() -> CallToolResult:
        from gitmem.verbs.workspaces import list_workspaces

        return reply(await session.call(lambda store: [asdict(w) for w in list_workspaces(store)]))

    @server.tool(name="associate", description=(
        "Register workspace `key` and associate a local folder with it (default: the folder the "
        "server runs in), so memory written there goes to that workspace. The folder stays on "
        "this machine; the key and title are committed." + NOT_FOR_SUBAGENTS))
    async def associate(
        key: Annotated[str, Field(description="Workspace key: lowercase letters, digits, '-'.")],
        title: Annotated[str | None, Field(description="Human title of the workspace.")] = None,
        path: Annotated[str | None, Field(description=(
            "The folder (absolute, or relative to the server's folder)."))] = None,
    ) -> CallToolResult:
        from gitmem.verbs.workspaces import associate as do_associate

        def work(store: Store) -> dict[str, Any]:
            if path and "\x00" in path:  # Path.resolve() would raise on it
                raise InvalidInputError("--path and --title must not hold a NUL character")
            folder = (session.cwd / Path(path).expanduser() if path else session.cwd).resolve()
            return {"key": do_associate(store, key, title, folder), "path": str(folder)}

        return reply(await session.call(work, verb="associate"))


def _model_tools(server: MCPServer, session: Session) -> None:
    @server.tool(name="consolidate", description=(
        "Turn pending digests (what captured sessions left) into entries with the configured "
        "model ladder now, instead of waiting for the schedule; one commit per pass. Digests the "
        "model does not attribute stay pending." + NOT_FOR_SUBAGENTS))
    async def consolidate(
        limit: Annotated[int | None, Field(ge=1, description="Digests per pass (default 10).")] = None,
    ) -> CallToolResult:
        from gitmem.consolidate.run import consolidate as run_consolidate

        def work(store: Store) -> dict[str, Any]:
            report = run_consolidate(store, limit=limit)
            if report.parse_failed:
                store.notes.append(f"the model's reply could not be read; kept in {report.failed_file}")
            return dict(report.as_json())

        return reply(await session.call(work, verb="consolidate"))

    @server.tool(name="refresh", description=(
        "Stale and expired entries: with a model configured (and use_model), the model keeps "
        "(re-verified today), updates (superseded) or forgets each, in one commit; otherwise "
        "they are only listed for you to judge (then `verify`, `remember` with supersedes, or "
        "`forget`). Listing is a read; acting on the list is a write, refused for subagents."))
    async def refresh(
        limit: Annotated[int, Field(ge=1, le=200, description="Most entries per pass.")] = 20,
        use_model: Annotated[bool, Field(description=(
            "Let the model act (else only list them)."))] = True,
    ) -> CallToolResult:
        from gitmem.consolidate.refresh import refresh as run_refresh

        def work(store: Store) -> dict[str, Any]:
            # The pass itself refuses a subagent once it would act (before the model is asked).
            return dict(run_refresh(store, limit=limit, use_model=use_model).as_json())

        return reply(await session.call(work))


def _link_tools(server: MCPServer, session: Session) -> None:
    @server.tool(name="resolve", description=(
        "Settle one conflict a sync left (its target as the conflicts tool lists it: an entry "
        "id, or PATH:LINE for a state/working section): keep `ours`, `theirs` or `both` (the "
        "second becomes an entry of its own), or give the settled `text` yourself. One commit. "
        "Only when you know which version is right." + NOT_FOR_SUBAGENTS))
    async def resolve(
        target: Annotated[str, Field(description="ID or PATH:LINE, as the conflicts tool prints it.")],
        how: Annotated[Literal["ours", "theirs", "both"] | None, Field(description=(
            "Which version to keep (leave out with `text`)."))] = None,
        text: Annotated[str | None, Field(description=(
            "The settled text of the block, in place of both versions."))] = None,
    ) -> CallToolResult:
        from gitmem.errors import InvalidInputError
        from gitmem.verbs.resolve import resolve as do_resolve
        from gitmem.verbs.resolve import resolve_with_text

        def work(store: Store) -> dict[str, Any]:
            if (how is None) == (text is None):
                raise InvalidInputError("resolve: give either `how` (ours, theirs, both) or `text`")
            result = do_resolve(store, target, how) if text is None else resolve_with_text(store, target, text)
            return dict(result.as_json())

        return reply(await session.call(work, verb="resolve"))

    @server.tool(name="relate", description=(
        "Record a typed link on an entry: causal (`other` caused it), temporal (`other` came "
        "before it), semantic or entity (symmetric: recorded on both)." + rules.WRITE_RULES))
    async def relate(entry_id: EntryId, kind: Annotated[Relation, Field(description="The link's type.")],
                     other: Annotated[str, Field(description="The other entry's id.")]) -> CallToolResult:
        from gitmem.verbs.relations import relate as do_relate

        def work(store: Store) -> dict[str, Any]:
            result = do_relate(store, entry_id, kind, other)
            return {"id": result.id, "path": result.path, "changed": result.changed, "note": result.note}

        return reply(await session.call(work, verb="relate"))

    @server.tool(name="related", description=(
        "The entries linked to an entry (both ways), up to `depth` links away: what caused it, "
        "what came before and after, what it is about."))
    async def related(
        entry_id: EntryId,
        depth: Annotated[int, Field(ge=1, le=5, description="How many links away to walk.")] = 1,
        types: Annotated[list[Relation | Literal["untyped"]] | None, Field(description=(
            "Only links of these types."))] = None,
    ) -> CallToolResult:
        from gitmem.verbs.relations import related as walk

        def work(store: Store) -> dict[str, Any]:
            return walk(store, entry_id, types=list(types) if types else None, depth=depth)

        return reply(await session.call(work))

    @server.tool(name="why", description=(
        "Where an entry of this store comes from: the commit that created it (date, author, "
        "machine), its source (session, digest, space) and every later change."))
    async def why(entry_id: EntryId) -> CallToolResult:
        from gitmem.provenance.why import why as explain

        return reply(await session.call(lambda store: explain(store, entry_id)))


def _history_tools(server: MCPServer, session: Session) -> None:
    @server.tool(name="revert", description=(
        "Bring an entry of this store back as it was: at `to` (a date YYYY-MM-DD or a git "
        "revision), else before its last change; one commit. For a wrong update or a forget made "
        "by mistake; `why` shows its versions." + NOT_FOR_SUBAGENTS))
    async def revert(entry_id: EntryId, to: Annotated[str | None, Field(description=(
            "The version to bring back (default: the previous one)."))] = None) -> CallToolResult:
        from gitmem.verbs.revert import revert as do_revert

        def work(store: Store) -> dict[str, Any]:
            result = do_revert(store, entry_id, to=to)
            return {"id": result.id, "path": result.path, "changed": result.changed, "note": result.note}

        return reply(await session.call(work, verb="revert"))

    @server.tool(name="list", description=(
        "The entries of the store and its active spaces (id, title, freshness, path), in file "
        "order, optionally of one layer and scope: every decision in force, say. Use search to "
        "find something; list to see all of a layer."))
    async def list_(
        layer: Annotated[str | None, Field(description=(
            "Only this layer: semantic, episodic, procedural, learnings, decisions, codebase, "
            "history, state, working."))] = None,
        scope: Annotated[Literal["global", "workspace"] | None, Field(description=(
            "global, or the current workspace (default: every scope)."))] = None,
        include_all: Annotated[bool, Field(description=(
            "Include forgotten, superseded and expired entries."))] = False,
    ) -> CallToolResult:
        from gitmem.verbs.reads import list_entries

        def work(store: Store) -> list[dict[str, Any]]:
            scopes = None if scope is None else [store.scope_for(scope)]
            rows = list_entries(store, layer=layer, scopes=scopes, include_all=include_all)
            return [{k: r.get(k) for k in ("ref", "id", "title", "layer", "scope", "topic", "path", "line",
                                            "status", "freshness", "label")} for r in rows]

        return reply(await session.call(work))

    @server.tool(name="check", description=(
        "Check every memory file against the format rules (read only): errors and hints, each "
        "with its file and line. After editing memory files by hand, or when status reports "
        "problems."))
    async def check() -> CallToolResult:
        from gitmem.verbs.check import check_tree

        def work(store: Store) -> dict[str, Any]:
            report = check_tree(store)  # without fix: a read (fixing is a person's `gitmem check --fix`)
            return {"errors": [str(p) for p in report.errors], "hints": [str(p) for p in report.hints]}

        return reply(await session.call(work))
